/**
 * Prompting and the queues. `/name args` runs an extension command at once, even while the
 * agent streams; its response follows the command's end, as in pi.
 */
import { AgentError } from "../../agent/agent-session.js";
import { CommandError } from "../responses.js";
import { async, sync, type CommandTable } from "./types.js";
import type { RpcServer } from "../server.js";

function isExtensionCommand(server: RpcServer, message: string): boolean {
  return server.runtime.findCommand(message) !== undefined;
}

async function accept<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AgentError) throw new CommandError(error.message);
    throw error;
  }
}

export const promptCommands: CommandTable<"prompt" | "steer" | "follow_up" | "abort" | "clear_queue"> = {
  prompt: async(async (c, server, respond) => {
    if (isExtensionCommand(server, c.message)) {
      await server.runtime.runCommand(c.message);
      return undefined;
    }
    await accept(() => server.agent.prompt(c.message, c.images, { streamingBehavior: c.streamingBehavior, source: "rpc", onAccepted: () => respond() }));
    return undefined;
  }),
  // Queued while the agent runs; when it is idle there is nothing to steer, so the message starts a run.
  steer: async(async (c, server, respond) => {
    if (isExtensionCommand(server, c.message)) throw new CommandError("Extension commands cannot be sent with steer: use prompt");
    if (server.agent.isStreaming) server.agent.steer(c.message, c.images);
    else await accept(() => server.agent.prompt(c.message, c.images, { source: "rpc", onAccepted: () => respond() }));
    return undefined;
  }),
  follow_up: async(async (c, server, respond) => {
    if (isExtensionCommand(server, c.message)) throw new CommandError("Extension commands cannot be sent with follow_up: use prompt");
    if (server.agent.isStreaming) server.agent.followUp(c.message, c.images);
    else await accept(() => server.agent.prompt(c.message, c.images, { source: "rpc", onAccepted: () => respond() }));
    return undefined;
  }),
  abort: async(async (_c, server) => {
    await server.agent.abort();
    return undefined;
  }),
  clear_queue: sync((_c, server) => server.agent.clearQueue()),
};
