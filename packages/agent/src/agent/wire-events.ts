/**
 * Agent-loop events as they go on the wire, in the newest pi's shape: `message_update` carries
 * the delta only (no partial snapshot, no whole message), plus the latest cumulative usage, so
 * stdout grows linearly with the reply; an assistant's message_start says stopReason "pending".
 */
import type { AgentEvent } from "@earendil-works/pi-agent-core";
import type { AssistantMessageEvent, Usage } from "@earendil-works/pi-ai";
import type { AssistantMessageDelta, RpcEvent } from "@parley/protocol";
import { emptyUsage } from "../models/reply-stream.js";

const ZERO_USAGE: Usage = emptyUsage();

/** The assistant event without its snapshot; toolcall_start also names the call. */
export function deltaOf(event: AssistantMessageEvent): AssistantMessageDelta {
  switch (event.type) {
    case "done":
    case "error":
      // Once per message, so carrying the final message keeps the stream linear.
      return { ...event };
    case "toolcall_start": {
      const { partial, ...rest } = event;
      const block = partial.content[event.contentIndex];
      // pi-ai adds the block before it announces it; the schema requires both fields regardless.
      return block?.type === "toolCall" ? { ...rest, id: block.id, toolName: block.name } : { ...rest, id: "", toolName: "" };
    }
    default: {
      const { partial: _partial, ...rest } = event;
      return rest;
    }
  }
}

function usageOf(event: AssistantMessageEvent): Usage {
  if (event.type === "done") return event.message.usage;
  if (event.type === "error") return event.error.usage;
  return event.partial.usage ?? ZERO_USAGE;
}

/** The record to write for one agent event. */
export function toWireEvent(event: AgentEvent): RpcEvent {
  if (event.type === "message_update") {
    return { type: "message_update", usage: usageOf(event.assistantMessageEvent), assistantMessageEvent: deltaOf(event.assistantMessageEvent) };
  }
  // pi-ai 1.6's providers start a reply with stopReason "pending", which it stays until the reply
  // ends; a provider of an extension may start with another (pi 0.73's said "stop"): announced as "pending".
  if (event.type === "message_start" && event.message.role === "assistant") return { ...event, message: { ...event.message, stopReason: "pending" } };
  return event;
}
