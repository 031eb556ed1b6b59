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

/** pi's refusal, word for word: clients may match on it. */
function refuseExtensionCommand(server: RpcServer, message: string): void {
  const found = server.runtime.findCommand(message);
  if (found)
    throw new CommandError(`Extension command "/${found.command.invocationName}" cannot be queued. Use prompt() or execute the command when not streaming.`);
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
  // Queued, as in pi, even while idle: the message then waits for the next run.
  steer: sync((c, server) => {
    refuseExtensionCommand(server, c.message);
    server.agent.steer(c.message, c.images);
  }),
  follow_up: sync((c, server) => {
    refuseExtensionCommand(server, c.message);
    server.agent.followUp(c.message, c.images);
  }),
  abort: async(async (_c, server) => {
    await server.agent.abort();
    return undefined;
  }),
  clear_queue: sync((_c, server) => server.agent.clearQueue()),
};
