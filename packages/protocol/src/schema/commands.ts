/**
 * The fields commands share: the correlation id, thinking levels, queue modes, how a prompt
 * is delivered while the agent streams. The commands themselves are declared in
 * `command-table.ts`; their schemas, unions and maps are derived in `command-records.ts`.
 */
import { Type, type Static } from "typebox";

export const CommandId = Type.Optional(
  Type.Union([Type.String(), Type.Number()], {
    description: "Correlation id; the response to this command carries the same value.",
  }),
);

export const ThinkingLevel = Type.Union(
  [Type.Literal("off"), Type.Literal("minimal"), Type.Literal("low"), Type.Literal("medium"), Type.Literal("high"), Type.Literal("xhigh"), Type.Literal("max")],
  { description: "Reasoning effort. Models without reasoning support only off; xhigh and max only on some models." },
);
export type ThinkingLevel = Static<typeof ThinkingLevel>;
export { THINKING_LEVELS } from "../constants.js";

export const QueueMode = Type.Union([Type.Literal("all"), Type.Literal("one-at-a-time")], {
  description: "all: deliver every queued message at the next opportunity; one-at-a-time: one per opportunity.",
});
export type QueueMode = Static<typeof QueueMode>;

export const StreamingBehavior = Type.Union([Type.Literal("steer"), Type.Literal("followUp")], {
  description: "Required while the agent is streaming. steer: deliver after the current turn's tool calls; followUp: deliver when the agent stops.",
});
export type StreamingBehavior = Static<typeof StreamingBehavior>;

/** What a client may ask for: the newest pi's levels include "max", the model's highest. */
export const RequestedThinkingLevel = Type.Union([...ThinkingLevel.anyOf], {
  description: "A thinking level to set, clamped to the model's levels.",
});
export type RequestedThinkingLevel = Static<typeof RequestedThinkingLevel>;
