/**
 * Prompting and the queues. `/name args` runs an extension command at once, even while the
 * agent streams; its response follows the command's end, as in pi.
 */
import type { ImageContent } from "@parley/protocol";
import { AgentError } from "../../../agent/agent-error.js";
import { CommandError } from "../responses.js";
import { type AgentView, type CommandContext, type CommandResult, type CommandGroup, handlersFor } from "./types.js";

/** What these handlers use of the agent. */
type Uses = "abort" | "afterSwitches" | "clearQueue" | "isSwitching" | "prompt" | "queue";
const { async, sync } = handlersFor<Uses>();

function isExtensionCommand(ctx: CommandContext<AgentView<Uses>>, message: string): boolean {
  return ctx.runtime.findCommand(message) !== undefined;
}

/** pi's refusal, word for word: clients may match on it. */
function refuseExtensionCommand(ctx: CommandContext<AgentView<Uses>>, message: string): void {
  const found = ctx.runtime.findCommand(message);
  if (found)
    throw new CommandError(`Extension command "/${found.command.invocationName}" cannot be queued. Use prompt() or execute the command when not streaming.`);
}

/**
 * Not an async function on purpose: a refusal is thrown, and a message queued without input
 * handlers answered, before the next line is read, so those responses keep arrival order.
 */
function queueInput(
  kind: "steer" | "followUp",
  c: { message: string; images?: ImageContent[] | undefined },
  ctx: CommandContext<AgentView<Uses>>,
  respond: (data: CommandResult<"steer">) => void,
): Promise<CommandResult<"steer">> {
  refuseExtensionCommand(ctx, c.message);
  const queued = ctx.agent.queue(kind, c.message, c.images);
  if (typeof queued === "string") {
    respond({ disposition: queued });
    return Promise.resolve({ disposition: queued });
  }
  return accept(() => queued).then((disposition) => ({ disposition }));
}

async function accept<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AgentError) throw new CommandError(error.message);
    throw error;
  }
}

export const promptCommands = {
  // The response says what became of the prompt (the newest pi's `disposition`): a client waits
  // for agent_settled only when it started a run.
  prompt: async(async (c, ctx, respond) => {
    // A switch under way is a barrier (AgentSession.switching): an extension command sent after it
    // runs in the new session, by the extensions' new instances, not the replaced ones. (Only then:
    // a prompt sent before a switch must not wait for it.)
    if (ctx.agent.isSwitching) await ctx.agent.afterSwitches();
    if (isExtensionCommand(ctx, c.message)) {
      await ctx.runtime.runCommand(c.message);
      return { disposition: "handled" };
    }
    const disposition = await accept(() =>
      ctx.agent.prompt(c.message, c.images, {
        streamingBehavior: c.streamingBehavior,
        source: "rpc",
        onAccepted: (accepted) => respond({ disposition: accepted }),
      }),
    );
    return { disposition };
  }),
  // Queued, as in pi, even while idle: the message then waits for the next run. Extensions'
  // input handlers see it first and may handle it (the newest pi's "handled").
  steer: async((c, ctx, respond) => queueInput("steer", c, ctx, respond)),
  follow_up: async((c, ctx, respond) => queueInput("followUp", c, ctx, respond)),
  abort: async(async (_c, ctx) => {
    await ctx.agent.abort();
    return undefined;
  }),
  clear_queue: sync((_c, ctx) => ctx.agent.clearQueue()),
} satisfies CommandGroup;
