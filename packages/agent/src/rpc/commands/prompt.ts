/** Prompting. `/name args` runs an extension command at once, even while the agent streams. */
import { CommandError } from "../responses.js";
import { async, sync, type CommandTable } from "./types.js";

const NO_LOOP =
  "parley cannot send prompts to a model yet: this build has no agent loop. Extension commands work: send \"/name args\" (list them with get_commands)";

export const promptCommands: CommandTable<"prompt" | "abort"> = {
  prompt: async(async (c, server) => {
    if (c.message.startsWith("/") && (await server.runtime.runCommand(c.message))) return undefined;
    throw new CommandError(NO_LOOP);
  }),
  abort: sync((_c, server) => {
    server.abort();
  }),
};
