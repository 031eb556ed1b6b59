/**
 * Session commands. Switching (new, switch, fork, clone) waits for extensions, which may ask
 * the user before they allow it, so those answer when done.
 */
import { existsSync } from "node:fs";
import { MissingSessionCwdError } from "../../../session/session-cwd.js";
import { CommandError } from "../responses.js";
import { type CommandGroup, handlersFor } from "./types.js";
import { errorMessage } from "../../../error-text.js";

/** What these handlers use of the agent. */
type Uses = "contextUsage" | "session" | "tools";
const { async, sync } = handlersFor<Uses>();

export const sessionCommands = {
  // Switching is the agent\'s (agent/session-switching.ts), shared with extensions and ACP.
  new_session: async((c, ctx) => ctx.sessions.newSession(c.parentSession !== undefined ? { parentSession: c.parentSession } : {})),
  switch_session: async(async (c, ctx) => {
    try {
      return await ctx.sessions.switchSession(c.sessionPath);
    } catch (error) {
      // pi answers a session whose folder is gone with its own words alone (a client may match on them).
      if (error instanceof MissingSessionCwdError) throw new CommandError(error.message);
      throw new CommandError(`Cannot switch to session ${c.sessionPath}: ${errorMessage(error)}`);
    }
  }),
  // session_before_fork runs first; the entry is checked after it (forkSession), as in pi.
  fork: async((c, ctx) => ctx.sessions.forkSession(c.entryId, "before")),
  clone: async((_c, ctx) => ctx.sessions.cloneSession()),
  get_fork_messages: sync((_c, ctx) => ({ messages: ctx.agent.session.userMessagesForForking() })),
  get_entries: sync((c, ctx) => {
    const session = ctx.agent.session;
    try {
      return { entries: session.entriesSince(c.since), leafId: session.leafId };
    } catch (error) {
      throw new CommandError(errorMessage(error));
    }
  }),
  get_tree: sync((_c, ctx) => ({ tree: ctx.agent.session.tree(), leafId: ctx.agent.session.leafId })),
  get_session_stats: sync((_c, ctx) => {
    const usage = ctx.agent.contextUsage();
    return { ...ctx.agent.session.stats(), ...(usage ? { contextUsage: usage } : {}) };
  }),
  // The renderer loads on first use: start-up does not need it.
  // Written relative to the process's folder; the path answered as pi 1.6 answers it (a relative one stays relative).
  export_html: async(async (c, ctx) => {
    const { exportHtml, reportedExportPath } = await import("../../../session/export-html.js");
    // pi 1.6's refusals, in its words: nothing stored to export.
    const file = ctx.agent.session.file;
    if (file === undefined) throw new CommandError("Cannot export in-memory session to HTML");
    if (!existsSync(file)) throw new CommandError("Nothing to export yet - start a conversation first");
    // A session recording no system message shows the agent's current tools instead, as in pi 1.6.
    const active = new Set(ctx.agent.tools.activeNames());
    const tools = ctx.agent.tools.all().flatMap(({ definition }) => (active.has(definition.name) ? [definition] : []));
    exportHtml(ctx.agent.session, c.outputPath, process.cwd(), { tools });
    return { path: reportedExportPath(ctx.agent.session, c.outputPath) };
  }),
} satisfies CommandGroup;
