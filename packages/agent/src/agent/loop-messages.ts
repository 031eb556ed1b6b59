/**
 * Messages as the session and the wire type them (@parley/protocol) and as pi-agent-core 1.6
 * types them. They are the same objects: the protocol types a tool call's arguments as
 * `Record<string, unknown>`, pi-ai 1.6 as a JSON object. A session's messages are read from JSON
 * or made by the loop, so their arguments are always JSON values; this is the one place that says so.
 */
import type { AgentMessage as LoopMessage } from "@earendil-works/pi-agent-core";
import type { JsonObject, JsonValue } from "@earendil-works/pi-ai";
import type { AgentMessage } from "@parley/protocol";

export type { LoopMessage };

export function loopMessages(messages: readonly AgentMessage[]): LoopMessage[] {
  return messages as LoopMessage[];
}

export function loopMessage(message: AgentMessage): LoopMessage {
  return message as LoopMessage;
}

/**
 * A value parley passes on as JSON (a tool call's arguments, a tool result's structured
 * content): typed as pi-ai 1.6 types such values. Where it comes from an extension it is what
 * the extension gave, as pi passes it on too.
 */
export function jsonValue(value: unknown): JsonValue {
  return value as JsonValue;
}

export function jsonObject(value: Record<string, unknown>): JsonObject {
  return value as JsonObject;
}
