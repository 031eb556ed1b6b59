/**
 * A request that ends before a provider answers (routing failed, credentials missing, a stream
 * that threw): the error response the loop and extensions get instead, naming the model asked for.
 */
import type { Api, AssistantMessage, AssistantMessageEventStream, Model } from "@mariozechner/pi-ai";
import { errorMessage } from "../error-text.js";
import type { PiAi } from "./pi-ai.js";
import { emptyUsage } from "./reply-stream.js";

/** `aborted`: the request was aborted (pi-ai's stopReason and words), not failed. */
export function errorResponse(model: Model<Api>, error: unknown, aborted = false): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: aborted ? "aborted" : "error",
    errorMessage: aborted ? "Request was aborted" : errorMessage(error),
    timestamp: Date.now(),
  };
}

/** Ends `stream` (or a new one) with `message` as its error. */
export function endWithError(
  pi: PiAi,
  message: AssistantMessage,
  stream: AssistantMessageEventStream = pi.createAssistantMessageEventStream(),
): AssistantMessageEventStream {
  stream.push({ type: "error", reason: message.stopReason === "aborted" ? "aborted" : "error", error: message });
  stream.end(message);
  return stream;
}
