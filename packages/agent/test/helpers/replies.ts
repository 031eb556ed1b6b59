/** A model's final reply, for test providers that stream one (extension providers built inline). */
import type { Api, AssistantMessage, Model } from "@earendil-works/pi-ai/compat";

/** What one model call ends with: a text reply, or a failure with its error message. */
export type Outcome = { text: string } | { error: string };

export function assistantReply(model: Pick<Model<Api>, "api" | "provider" | "id">, outcome: Outcome): AssistantMessage {
  return {
    role: "assistant",
    content: "text" in outcome ? [{ type: "text", text: outcome.text }] : [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "text" in outcome ? "stop" : "error",
    ...("error" in outcome ? { errorMessage: outcome.error } : {}),
    timestamp: Date.now(),
  };
}
