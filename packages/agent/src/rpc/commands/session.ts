/**
 * Session commands. Switching (new, switch, fork, clone) waits for extensions, which may ask
 * the user before they allow it, so those answer when done.
 */
import { CommandError } from "../responses.js";
import { async, sync, type CommandTable } from "./types.js";
import { errorMessage } from "../../error-text.js";

type SessionCommands =
  | "new_session"
  | "switch_session"
  | "fork"
  | "clone"
  | "get_fork_messages"
  | "get_entries"
  | "get_tree"
  | "get_session_stats"
  | "export_html";

export const sessionCommands: CommandTable<SessionCommands> = {
  // Switching is the agent's (agent/session-switching.ts), shared with extensions and ACP.
  new_session: async((c, server) => server.host.switching.newSession(c.parentSession !== undefined ? { parentSession: c.parentSession } : {})),
  switch_session: async(async (c, server) => {
    try {
      return await server.host.switching.switchSession(c.sessionPath);
    } catch (error) {
      throw new CommandError(`Cannot switch to session ${c.sessionPath}: ${errorMessage(error)}`);
    }
  }),
  // session_before_fork runs first; the entry is checked after it (forkSession), as in pi.
  fork: async((c, server) => server.host.switching.forkSession(c.entryId, "before")),
  clone: async((_c, server) => server.host.switching.cloneSession()),
  get_fork_messages: sync((_c, server) => ({ messages: server.agent.session.userMessagesForForking() })),
  get_entries: sync((c, server) => {
    const session = server.agent.session;
    try {
      return { entries: session.entriesSince(c.since), leafId: session.leafId };
    } catch (error) {
      throw new CommandError(errorMessage(error));
    }
  }),
  get_tree: sync((_c, server) => ({ tree: server.agent.session.tree(), leafId: server.agent.session.leafId })),
  get_session_stats: sync((_c, server) => {
    const usage = server.agent.contextUsage();
    return { ...server.agent.session.stats(), ...(usage ? { contextUsage: usage } : {}) };
  }),
  // The renderer loads on first use: start-up does not need it.
  export_html: async(async (c, server) => ({ path: (await import("../../session/export-html.js")).exportHtml(server.agent.session, c.outputPath) })),
};
