/** Compaction, retries and the user's own shell commands. */
import { afterSwitch, type CommandGroup, handlersFor } from "./types.js";

/** What these handlers use of the agent. */
type Uses = "abortBash" | "abortRetry" | "compact" | "executeBash";
const { async, sync } = handlersFor<Uses>();

export const maintenanceCommands = {
  // As pi: a run or a compaction in progress is aborted first, then this one runs (the compactor does both).
  // Sent during a switch, it compacts the session switched to.
  compact: afterSwitch(async((c, ctx) => ctx.agent.compact(c.customInstructions, "manual"))),
  abort_retry: sync((_c, ctx) => {
    ctx.agent.abortRetry();
    return undefined;
  }),
  bash: async((c, ctx) =>
    ctx.agent.executeBash(c.command, {
      excludeFromContext: c.excludeFromContext === true,
      onDelta: (delta) => ctx.emitEvent({ type: "bash_execution_update", ...(c.id !== undefined ? { id: c.id } : {}), delta }),
    }),
  ),
  abort_bash: sync((_c, ctx) => {
    ctx.agent.abortBash();
    return undefined;
  }),
} satisfies CommandGroup;
