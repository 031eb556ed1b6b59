/**
 * The summary call compaction and branch summaries share, as the newest pi makes it: no output
 * cap of its own, no cache writes, settings' timeouts and retries, and a reply the token cap cut
 * short is a failure, never a checkpoint.
 */
import { fauxAssistantMessage, getApiProvider, registerFauxProvider, type StreamOptions } from "@earendil-works/pi-ai/compat";
import { afterEach, describe, expect, it } from "vitest";
import { completeSummary, type SummaryHost } from "../src/agent/summary-call.js";
import { serveScripted } from "./helpers/in-process.js";

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
    host: {
      model: faux.getModel(),
      thinkingLevel: "off",
      models: { getRequestAuth: async () => ({ apiKey: "key" }) },
      requestOptions: async (_model, options) => ({ ...options, timeoutMs: 1234, maxRetries: 2 }),
    },
    seen,
  };
}

describe("the summary call", () => {
  it("sends the host's request options, no cache writes and no output cap of its own", async () => {
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

  it("fails, naming the call, when the reply calls a tool (a summary call offers none)", async () => {
    const { host: agent } = host([fauxAssistantMessage([{ type: "toolCall", id: "c1", name: "read", arguments: { path: "x" } }], { stopReason: "toolUse" })]);
    await expect(completeSummary(agent, "summarise", new AbortController().signal, "Turn prefix summarization")).rejects.toThrow(
      "Turn prefix summarization attempted to call a tool",
    );
  });

  it("in the agent: a compaction's summary gets settings' timeout and the headers before_provider_headers leaves, as the loop's requests do", async () => {
    const faux = registerFauxProvider({ api: "summary-agent-faux", provider: "summary-agent-faux", models: [{ id: "m" }] });
    providers.push(faux);
    const seen: { summary: boolean; options: StreamOptions | undefined }[] = [];
    faux.setResponses(
      Array.from({ length: 10 }, () => (context: { messages?: unknown[] }, options: StreamOptions | undefined) => {
        const summary = JSON.stringify(context.messages ?? []).includes("<conversation>");
        seen.push({ summary, options });
        return fauxAssistantMessage(summary ? "the summary" : "a reply");
      }),
    );
    const model = faux.getModel();
    const h = await serveScripted(
      [],
      [
        (pi) => {
          pi.registerProvider("summary-agent-faux", {
            baseUrl: "http://localhost:0",
            apiKey: "k",
            api: model.api as never,
            streamSimple: getApiProvider(model.api as never)!.streamSimple as never,
            models: [
              {
                id: "m",
                name: "m",
                reasoning: false,
                input: ["text"],
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
                contextWindow: 100000,
                maxTokens: 1000,
              },
            ],
          });
          pi.on(
            "before_provider_headers" as never,
            ((event: { headers: Record<string, string | null> }) => {
              event.headers["x-from-extension"] = "yes";
            }) as never,
          );
        },
      ],
      // "a reply" (2 tokens) and "two" (1) fill a budget of 3: the second exchange is kept, the first summarised in one call.
      { agentConfig: { provider: { timeoutMs: 4321 }, compaction: { keepRecentTokens: 3 } } },
    );
    expect((await h.request({ type: "set_model", provider: "summary-agent-faux", modelId: "m" }))["success"]).toBe(true);
    await h.prompt("one");
    await h.prompt("two");
    expect((await h.request({ type: "compact" }))["success"]).toBe(true);
    const loop = seen.filter((s) => !s.summary);
    const summaries = seen.filter((s) => s.summary);
    expect(loop.length).toBeGreaterThan(0);
    expect(summaries).toHaveLength(1);
    for (const { options } of [...loop, ...summaries]) {
      expect(options).toMatchObject({ timeoutMs: 4321, headers: { "x-from-extension": "yes" } });
    }
    expect(summaries[0]?.options).toMatchObject({ cacheRetention: "none" });
  });
});
