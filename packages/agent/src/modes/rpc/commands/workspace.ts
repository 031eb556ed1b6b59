/** parley's own commands for any client: stored sessions, reloading, models.json again, files for `@`. */
import { listSessionSummaries } from "../../../session/session-list.js";
import { listFiles } from "../../../workspace/file-list.js";
import { CommandError } from "../responses.js";
import { afterSwitch, withCatalog, type CommandGroup, handlersFor } from "./types.js";

/** What these handlers use of the agent. */
type Uses = "isCompacting" | "isStreaming" | "models";
const { async, sync } = handlersFor<Uses>();

export const workspaceCommands = {
  list_sessions: sync((c, ctx) => listSessionSummaries(ctx.workspace.sessionDirs(c.scope ?? "folder"))),
  // As the newest pi's reload: refused (in its words) while a reply or a compaction runs.
  reload: afterSwitch(
    async(async (_c, ctx) => {
      if (ctx.agent.isStreaming) throw new CommandError("Wait for the current response to finish before reloading.");
      if (ctx.agent.isCompacting) throw new CommandError("Wait for compaction to finish before reloading.");
      await ctx.workspace.reload();
      return undefined;
    }),
  ),
  refresh_models: withCatalog(
    sync((_c, ctx) => {
      ctx.workspace.refreshModels();
      return { models: ctx.agent.models.availableModels() };
    }),
  ),
  list_files: sync((c, ctx) => listFiles(ctx.workspace.cwd, c.query ?? "", c.limit ?? undefined)),
} satisfies CommandGroup;
