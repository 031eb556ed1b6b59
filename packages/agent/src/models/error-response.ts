/**
 * The streams parley puts between a caller and a provider: the error response a request gets when
 * it ends before a provider answers (routing failed, credentials missing, a stream that threw),
 * naming the model asked for; and a relay of a provider's stream that is worked out first.
 */
import type { Api, AssistantMessage, AssistantMessageEventStream, Model } from "@earendil-works/pi-ai";
import { errorMessage } from "../error-text.js";
import type { PiAi } from "./pi-ai.js";
import { ABORTED_MESSAGE, emptyUsage } from "./reply-stream.js";

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
    errorMessage: aborted ? ABORTED_MESSAGE : errorMessage(error),
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

/**
 * A stream returned at once, relaying the one `open` gives (after credentials or routing are
 * worked out), each message passed through `touch`; a failure on the way ends it with an error
 * response, as a provider reports its own failures.
 */
export function relayStream(
  pi: PiAi,
  model: Model<Api>,
  open: () => AssistantMessageEventStream | Promise<AssistantMessageEventStream>,
  touch: (message: AssistantMessage) => AssistantMessage = (message) => message,
): AssistantMessageEventStream {
  const out = pi.createAssistantMessageEventStream();
  void (async () => {
    try {
      const source = await open();
      for await (const event of source) {
        if ("partial" in event) touch(event.partial);
        if (event.type === "done") touch(event.message);
        if (event.type === "error") touch(event.error);
        out.push(event);
      }
      out.end(touch(await source.result()));
    } catch (error) {
      endWithError(pi, touch(errorResponse(model, error)), out);
    }
  })();
  return out;
}
