/**
 * The summary call compaction and branch summaries share, as the newest pi makes it: no output
 * cap of its own, no cache writes, settings' timeouts and retries, and a reply the token cap cut
 * short is a failure, never a checkpoint.
 */
import { fauxAssistantMessage, registerFauxProvider, type StreamOptions } from "@mariozechner/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { completeSummary, type SummaryHost } from "../src/agent/summary-call.js";

const providers: { unregister(): void }[] = [];
afterEach(() => {
  for (const p of providers.splice(0)) p.unregister();
});

/** A host whose model answers with `replies` in turn, recording each call's options. */
function host(replies: ReturnType<typeof fauxAssistantMessage>[]): { host: SummaryHost; seen: (StreamOptions | undefined)[] } {
  const faux = registerFauxProvider({ api: "summary-faux", provider: "summary-faux", models: [{ id: "m" }] });
  providers.push(faux);
  const seen: (StreamOptions | undefined)[] = [];
  faux.setResponses(
    replies.map((reply) => (_context: unknown, options: StreamOptions | undefined) => {
      seen.push(options);
      return reply;
    }),
  );
  return {
    host: { model: faux.getModel(), thinkingLevel: "off", models: { getApiKey: () => "key" }, providerRequest: { timeoutMs: 1234, maxRetries: 2 } },
    seen,
  };
}

describe("the summary call", () => {
  it("sends settings' timeout and retries, no cache writes and no output cap of its own", async () => {
    const { host: agent, seen } = host([fauxAssistantMessage("the summary")]);
    expect(await completeSummary(agent, "summarise", new AbortController().signal)).toMatchObject({ summary: "the summary" });
    expect(seen[0]).toMatchObject({ timeoutMs: 1234, maxRetries: 2, cacheRetention: "none", apiKey: "key" });
    expect(seen[0]?.maxTokens).toBeUndefined();
  });

  it("fails, naming the call, when the token cap cut the reply short", async () => {
    const { host: agent } = host([fauxAssistantMessage("half a summ", { stopReason: "length" }), fauxAssistantMessage("half", { stopReason: "length" })]);
    await expect(completeSummary(agent, "summarise", new AbortController().signal)).rejects.toThrow(
      "Summarization failed: generation hit the token cap and the summary is incomplete",
    );
    await expect(completeSummary(agent, "summarise", new AbortController().signal, "Branch summarization")).rejects.toThrow(
      "Branch summarization failed: generation hit the token cap",
    );
  });
});
