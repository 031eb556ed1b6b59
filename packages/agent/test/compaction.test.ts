import type { AssistantMessage, Context, Model, Api } from "@earendil-works/pi-ai/compat";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai/compat";
import type { SessionEntry } from "@parley/protocol";
import { describe, expect, it } from "vitest";
import { prepareCompaction } from "../src/agent/compaction-cut.js";
import { Session } from "../src/session/session.js";
import { serveScripted, type Factory } from "./helpers/in-process.js";

type Rec = Record<string, unknown>;

/**
 * A scripted agent. `keepRecentTokens` is the budget of what a compaction keeps: pi 1.6 refuses to
 * compact a context that fits it, so the small sessions here set one that the latest turn fills.
 */
async function serve(turns: unknown[], factories: Factory[] = [], env: NodeJS.ProcessEnv = {}, keepRecentTokens?: number) {
  const agentConfig = keepRecentTokens === undefined ? {} : { agentConfig: { compaction: { keepRecentTokens } } };
  const harness = await serveScripted(turns, factories, { env, timeoutMs: 5000, ...agentConfig });
  const prompt = async (message: string): Promise<void> => {
    expect((await harness.prompt(message))["success"]).toBe(true);
  };
  return { ...harness, prompt };
}

/** Messages the model is given next time (as the `context` event shows them). */
function captureContext(into: Rec[][]): Factory {
  return (pi) => {
    pi.on(
      "context" as never,
      ((event: { messages: Rec[] }) => {
        into.push([...event.messages]);
      }) as never,
    );
  };
}

function textOf(message: Rec | undefined): string {
  const content = message?.["content"];
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return String(message?.["summary"] ?? "");
  return content.map((c: Rec) => (c["type"] === "text" ? c["text"] : "")).join("");
}

// ---- the cut point ------------------------------------------------------------------------------

function conversation(build: (add: (message: Rec) => SessionEntry) => void): Session {
  const session = new Session("/tmp");
  build((message) => session.append({ type: "message", message: { timestamp: Date.now(), ...message } as unknown as { role: string } }));
  return session;
}
const user = (text: string): Rec => ({ role: "user", content: [{ type: "text", text }] });
const reply = (text: string, extra: Rec = {}): Rec => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "x",
  provider: "x",
  model: "x",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  ...extra,
});
const call = (id: string, name: string, args: Rec): Rec => ({
  ...reply(""),
  content: [{ type: "toolCall", id, name, arguments: args }],
  stopReason: "toolUse",
});
const result = (id: string, text: string): Rec => ({ role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text }], isError: false });

describe("prepareCompaction", () => {
  it("keeps the most recent turns within the token budget and summarises the rest", () => {
    const ids: string[] = [];
    const session = conversation((add) => {
      for (let i = 0; i < 4; i++) {
        ids.push(add(user(`question ${i} ${"x".repeat(400)}`)).id);
        add(reply(`answer ${i} ${"y".repeat(400)}`, i === 3 ? { usage: { ...(reply("").usage as object), totalTokens: 1234 } } : {}));
      }
    });
    // Each message is about 100 tokens: the budget fills up at the third question, which starts the kept part.
    const prep = prepareCompaction(session.branch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 350 });
    expect(prep.firstKeptEntryId).toBe(ids[2]);
    expect(prep.isSplitTurn).toBe(false);
    expect(prep.messagesToSummarize.map((m) => textOf(m as unknown as Rec).slice(0, 10))).toEqual(["question 0", "answer 0 y", "question 1", "answer 1 y"]);
    // The last reply's reported usage (nothing follows it).
    expect(prep.tokensBefore).toBe(1234);
  });

  it("never cuts between a tool call and its result", () => {
    let replyEntry = "";
    const session = conversation((add) => {
      add(user("read it"));
      add(call("t1", "read", { path: "a.ts" }));
      add(result("t1", "z".repeat(4000)));
      replyEntry = add(reply("done")).id;
    });
    // The budget fills up at the tool result: the cut moves on to the next cut point (the reply),
    // never onto the result itself.
    const prep = prepareCompaction(session.branch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 500 });
    expect(prep.firstKeptEntryId).toBe(replyEntry);
    // Split turn: the user's request and the call (with its result) form the turn prefix.
    expect(prep.isSplitTurn).toBe(true);
    expect(prep.turnPrefixMessages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
    expect(prep.fileOps.read.has("a.ts")).toBe(true);
  });

  it("when everything fits the budget there is nothing to compact (as pi 1.6 says); a budget the latest turn fills keeps that turn", () => {
    const ids: string[] = [];
    const session = conversation((add) => {
      ids.push(add(user("one")).id);
      add(reply("r1"));
      ids.push(add(user("two")).id);
      add(reply("r2"));
    });
    expect(() => prepareCompaction(session.branch())).toThrow("Nothing to compact (session too small)");
    // "r2" and "two" are a token each.
    const prep = prepareCompaction(session.branch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 2 });
    expect(prep.firstKeptEntryId).toBe(ids[1]);
    expect(prep.messagesToSummarize).toHaveLength(2);
    expect(prep.isSplitTurn).toBe(false);
  });

  it("a single turn larger than the budget keeps the reply and summarises the request; within the budget, nothing to compact", () => {
    let replyId = "";
    const session = conversation((add) => {
      add(user("only"));
      replyId = add(reply("answer")).id;
    });
    expect(() => prepareCompaction(session.branch())).toThrow("Nothing to compact (session too small)");
    const prep = prepareCompaction(session.branch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 1 });
    expect(prep.firstKeptEntryId).toBe(replyId);
    expect(prep.isSplitTurn).toBe(true);
    expect(prep.turnPrefixMessages.map((m) => m.role)).toEqual(["user"]);
  });

  it("refuses when there is nothing to compact, or the last entry is a compaction", () => {
    expect(() => prepareCompaction([])).toThrow("Nothing to compact (session too small)");
    const one = conversation((add) => void add(user("hi")));
    expect(() => prepareCompaction(one.branch())).toThrow("Nothing to compact");
    // A failed reply is no place to start the kept part.
    const failed = conversation((add) => {
      add(user("hi"));
      add(reply("", { content: [], stopReason: "error", errorMessage: "boom" }));
    });
    expect(() => prepareCompaction(failed.branch())).toThrow("Nothing to compact");
    const session = conversation((add) => {
      add(user("a"));
      add(reply("b"));
    });
    const first = session.branch()[0]!.id;
    session.append({ type: "compaction", summary: "S", firstKeptEntryId: first, tokensBefore: 1 });
    expect(() => prepareCompaction(session.branch())).toThrow("Already compacted");
  });

  it("after a compaction, starts from its kept boundary and hands over the previous summary", () => {
    const ids: string[] = [];
    const session = conversation((add) => {
      add(user("old"));
      add(reply("old reply"));
      ids.push(add(user("kept")).id);
      add(reply("kept reply"));
    });
    session.append({
      type: "compaction",
      summary: "PREVIOUS",
      firstKeptEntryId: ids[0]!,
      tokensBefore: 10,
      details: { readFiles: ["r.ts"], modifiedFiles: [] },
    });
    session.append({ type: "message", message: { ...user("new"), timestamp: Date.now() } as unknown as { role: string } });
    session.append({ type: "message", message: { ...reply("new reply"), timestamp: Date.now() } as unknown as { role: string } });
    // Everything after the kept boundary fits the default budget: nothing to compact.
    expect(() => prepareCompaction(session.branch())).toThrow("Nothing to compact (session too small)");
    // "new reply" (3 tokens) and "new" (1) fill a budget of 4.
    const prep = prepareCompaction(session.branch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 4 });
    expect(prep.previousSummary).toBe("PREVIOUS");
    expect(prep.messagesToSummarize.map((m) => textOf(m as unknown as Rec))).toEqual(["kept", "kept reply"]);
    expect([...prep.fileOps.read]).toEqual(["r.ts"]);
  });
});

/** Provider "capture": records every request's context and answers "reply N" to the Nth. */
function captureProvider(requests: Context[]): Factory {
  return (pi) => {
    pi.registerProvider("capture", {
      api: "capture-api",
      models: [{ id: "m", contextWindow: 100_000 }],
      streamSimple: (model: Model<Api>, context: Context) => {
        requests.push(context);
        const stream = createAssistantMessageEventStream();
        const message = assistantMessage(model, `reply ${requests.length}`);
        queueMicrotask(() => stream.push({ type: "done", reason: "stop", message }));
        return stream;
      },
    } as never);
  };
}

// ---- the compact command, in-process ---------------------------------------------------------------

describe("compact (in-process)", () => {
  it("summarises with the model, appends the entry and continues from the compacted context", async () => {
    const contexts: Rec[][] = [];
    // "two" and "second question" fill a budget of 2: the second exchange is kept.
    const { transport, request, prompt } = await serve(["one", "two", "## Goal\nSUMMARY TEXT", "three"], [captureContext(contexts)], {}, 2);
    await prompt("first question");
    await prompt("second question");
    const before = (await request({ type: "get_entries" }))["data"] as { entries: SessionEntry[] };
    const secondUser = before.entries.filter((e) => e.type === "message" && e.message.role === "user")[1]!;

    const response = await request({ type: "compact", customInstructions: "focus on questions" });
    expect(response).toMatchObject({ type: "response", command: "compact", success: true });
    const data = response["data"] as Rec;
    expect(data["summary"]).toBe("## Goal\nSUMMARY TEXT");
    expect(data["firstKeptEntryId"]).toBe(secondUser.id);
    expect(data["tokensBefore"]).toBeGreaterThan(0);
    expect(data["details"]).toEqual({ readFiles: [], modifiedFiles: [] });
    expect(typeof data["estimatedTokensAfter"]).toBe("number");

    const start = transport.sent.findIndex((r) => r["type"] === "compaction_start");
    const end = transport.sent.findIndex((r) => r["type"] === "compaction_end");
    expect(transport.sent[start]).toEqual({ type: "compaction_start", reason: "manual" });
    expect(transport.sent[end]).toEqual({ type: "compaction_end", reason: "manual", result: data, aborted: false, willRetry: false });
    expect(start).toBeLessThan(end);
    // The response comes after compaction_end.
    expect(transport.sent.indexOf(response)).toBeGreaterThan(end);

    const messages = ((await request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    // As pi 1.6: the compaction's snapshot of the recorded system prompt, then its summary, then what it kept.
    expect(messages.map((m) => m["role"])).toEqual(["system", "compactionSummary", "user", "assistant"]);
    expect(messages[1]).toMatchObject({ summary: "## Goal\nSUMMARY TEXT", tokensBefore: data["tokensBefore"] });
    const entries = ((await request({ type: "get_entries" }))["data"] as { entries: SessionEntry[] }).entries;
    expect(entries.at(-1)).toMatchObject({
      type: "compaction",
      summary: "## Goal\nSUMMARY TEXT",
      firstKeptEntryId: secondUser.id,
      tokensBefore: data["tokensBefore"],
      systemMessage: { role: "system", content: "", sections: { preamble: expect.any(String) } },
    });
    const compaction = entries.at(-1);
    expect(messages[0]).toEqual(compaction?.type === "compaction" ? compaction.systemMessage : undefined);
    // The system message the first prompt recorded is not summarised (pi 1.6: prompt state, not conversation).
    expect(entries.filter((e) => e.type === "message" && e.message.role === "system")).toHaveLength(1);

    await prompt("third question");
    const seen = contexts.at(-1)!;
    expect(seen.map((m) => m["role"])).toEqual(["compactionSummary", "user", "assistant", "user"]);
    expect(seen.map(textOf).join("|")).not.toContain("first question");
    const last = ((await request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages.at(-1);
    expect(textOf(last)).toBe("three");
    expect(((await request({ type: "get_state" }))["data"] as Rec)["isCompacting"]).toBe(false);
  });

  it("sends the transcript, the previous summary and the custom instructions to the model", async () => {
    const requests: Context[] = [];
    const provider = captureProvider(requests);
    // A reply ("reply N") is 2 tokens, a prompt 1 or 2: a budget of 3 keeps the latest exchange.
    const { request, prompt } = await serve([], [provider], {}, 3);
    expect((await request({ type: "set_model", provider: "capture", modelId: "m" }))["success"]).toBe(true);
    await prompt("alpha");
    await prompt("beta");
    expect((await request({ type: "compact", customInstructions: "mention the greek letters" }))["success"]).toBe(true);
    const summarising = requests.at(-1)!;
    // pi-ai 1.6's request form: the prompt leads as a system message.
    const [system, first] = summarising.messages;
    expect(system?.role).toBe("system");
    expect(textOf(system as unknown as Rec)).toMatch(/summary/i);
    const text = textOf(first as unknown as Rec);
    expect(text).toContain("[User]: alpha");
    expect(text).toContain("[Assistant]: reply 1");
    expect(text).not.toContain("beta");
    expect(text).toContain("Additional focus: mention the greek letters");
    expect(text).not.toContain("<previous-summary>");

    await prompt("gamma");
    expect((await request({ type: "compact" }))["success"]).toBe(true);
    const second = textOf(requests.at(-1)!.messages[1] as unknown as Rec);
    expect(second).toContain("<previous-summary>\nreply 3\n</previous-summary>");
    expect(second).toContain("[User]: beta");
    expect(second).not.toContain("gamma");
  });

  it("a cut inside a turn: the history and the turn's beginning are summarised by two calls and joined, as pi does", async () => {
    const requests: Context[] = [];
    const provider = captureProvider(requests);
    // keepRecentTokens 1: only the last reply is kept, so the cut splits the last turn.
    const { request, prompt } = await serveScripted([], [provider], { agentConfig: { compaction: { keepRecentTokens: 1 } } });
    expect((await request({ type: "set_model", provider: "capture", modelId: "m" }))["success"]).toBe(true);
    await prompt("alpha");
    await prompt("beta");
    const response = await request({ type: "compact", customInstructions: "mention the letters" });
    expect(response["success"]).toBe(true);
    expect(requests).toHaveLength(4);
    const history = textOf(requests[2]!.messages[1] as unknown as Rec);
    expect(history).toContain("[User]: alpha");
    expect(history).not.toContain("beta");
    expect(history).toContain("Additional focus: mention the letters");
    const prefix = textOf(requests[3]!.messages[1] as unknown as Rec);
    expect(prefix).toContain("[User]: beta");
    expect(prefix).not.toContain("alpha");
    expect(prefix).toContain("Additional focus: mention the letters");
    expect((response["data"] as Rec)["summary"]).toBe("reply 3\n\n---\n\n**Turn Context (split turn):**\n\nreply 4");
  });

  it("compaction.modelOverrides: the model in use takes its own token settings, other models the ordinary ones", async () => {
    const summaryOf = async (modelOverrides: Record<string, { keepRecentTokens: number }>): Promise<unknown> => {
      const requests: Context[] = [];
      const { request, prompt } = await serveScripted([], [captureProvider(requests)], {
        agentConfig: { compaction: { keepRecentTokens: 3, modelOverrides } },
      });
      expect((await request({ type: "set_model", provider: "capture", modelId: "m" }))["success"]).toBe(true);
      await prompt("alpha");
      await prompt("beta");
      const response = await request({ type: "compact" });
      expect(response["success"]).toBe(true);
      return (response["data"] as Rec)["summary"];
    };
    // keepRecentTokens 1 for capture/m: only the last reply is kept, the last turn is cut in two.
    expect(await summaryOf({ "capture/m": { keepRecentTokens: 1 } })).toBe("reply 3\n\n---\n\n**Turn Context (split turn):**\n\nreply 4");
    // An override for another model leaves the ordinary 3: the latest turn is kept whole.
    expect(await summaryOf({ "capture/other": { keepRecentTokens: 1 } })).not.toContain("Turn Context");
  });

  it("while the agent is streaming, aborts the run first and then compacts (as pi does)", async () => {
    // The second prompt alone passes this budget (the aborted reply is at most 12 tokens): the first exchange is summarised.
    const { transport, request, until, prompt } = await serve(
      ["hi", "a long reply with many words to stream slowly", "Summary of it all."],
      [],
      {
        PARLEY_STREAM_DELAY_MS: "30",
      },
      20,
    );
    await prompt("hello");
    const updates = transport.of("message_update").length;
    await request({ type: "prompt", message: `go ${"word ".repeat(40)}` });
    await until(() => transport.of("message_update").length > updates);
    const response = await request({ type: "compact" });
    expect(response).toMatchObject({ success: true, data: { summary: expect.stringContaining("Summary of it all.") } });
    const types = transport.sent.map((r) => r["type"]);
    expect(types.lastIndexOf("agent_end")).toBeLessThan(types.indexOf("compaction_start"));
    const end = transport.of("agent_end").at(-1) as { messages: Rec[] };
    expect(end.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
  });

  it("fails clearly when there is nothing to compact", async () => {
    const { transport, request } = await serve([]);
    const response = await request({ type: "compact" });
    expect(response).toMatchObject({ success: false, error: "Nothing to compact (session too small)" });
    expect(transport.of("compaction_end")).toEqual([
      {
        type: "compaction_end",
        reason: "manual",
        aborted: false,
        willRetry: false,
        errorMessage: "Compaction failed: Nothing to compact (session too small)",
      },
    ]);
  });

  it("reports a summarisation failure in compaction_end and the response", async () => {
    // A reply that calls a tool is no summary (pi's words).
    const { transport, request, prompt } = await serve(["one", "two", { toolCalls: [{ name: "ls", arguments: {} }] }], [], {}, 2);
    await prompt("a");
    await prompt("b");
    const response = await request({ type: "compact" });
    expect(response).toMatchObject({ success: false, error: "Summarization attempted to call a tool" });
    expect(transport.of("compaction_end").at(-1)).toMatchObject({
      aborted: false,
      errorMessage: "Compaction failed: Summarization attempted to call a tool",
    });
    expect(transport.of("compaction_end").at(-1)).not.toHaveProperty("result");
    const entries = ((await request({ type: "get_entries" }))["data"] as { entries: SessionEntry[] }).entries;
    expect(entries.some((e) => e.type === "compaction")).toBe(false);
  });
});

describe("ctx.compact()", () => {
  it("aborts a run in progress first, then compacts and reports through the callbacks", async () => {
    const outcome: string[] = [];
    const { transport, request, until } = await serve(
      ["one", "a reply long enough to still be streaming when the command arrives", "CTX SUMMARY"],
      [
        (pi) => {
          pi.registerCommand("squash", {
            handler: (_args, ctx) =>
              ctx.compact({
                onComplete: (result) => void outcome.push(`done:${(result as { summary: string }).summary}`),
                onError: (error) => void outcome.push(`error:${error.message}`),
              }),
          });
        },
      ],
      { PARLEY_STREAM_DELAY_MS: "30" },
      // The second prompt alone passes this budget (the aborted reply is at most 17 tokens): the first exchange is summarised.
      20,
    );
    await request({ type: "prompt", message: "first" });
    await until(() => transport.of("agent_settled").length === 1);
    await request({ type: "prompt", message: `second ${"word ".repeat(40)}` });
    await until(() => transport.of("message_update").length > 8);
    expect((await request({ type: "prompt", message: "/squash" }))["success"]).toBe(true);
    await until(() => outcome.length > 0);
    expect(outcome).toEqual(["done:CTX SUMMARY"]);
    const aborted = transport.of("message_end").map((r) => (r["message"] as Rec)["stopReason"]);
    expect(aborted).toContain("aborted");
    const types = transport.sent.map((r) => r["type"]);
    expect(types.lastIndexOf("agent_end")).toBeLessThan(types.indexOf("compaction_start"));
  });
});

describe("session_before_compact / session_compact", () => {
  it("a handler can cancel", async () => {
    const seen: Rec[] = [];
    const { transport, request, prompt } = await serve(
      ["one", "two"],
      [
        (pi) => {
          pi.on(
            "session_before_compact" as never,
            ((event: Rec) => {
              seen.push(event);
              return { cancel: true };
            }) as never,
          );
        },
      ],
      {},
      2,
    );
    await prompt("a");
    await prompt("b");
    const response = await request({ type: "compact", customInstructions: "ci" });
    expect(response).toMatchObject({ success: false, error: "Compaction cancelled" });
    expect(transport.of("compaction_end").at(-1)).toEqual({ type: "compaction_end", reason: "manual", aborted: true, willRetry: false });
    const event = seen[0]!;
    expect(event["customInstructions"]).toBe("ci");
    expect(event["signal"]).toBeInstanceOf(AbortSignal);
    // The session's start (model, level), the system message the first prompt recorded (as pi 1.6) and the two exchanges.
    expect((event["branchEntries"] as unknown[]).length).toBe(7);
    // Not the system message: it is prompt state, not conversation (pi 1.6).
    expect(event["preparation"]).toMatchObject({
      isSplitTurn: false,
      messagesToSummarize: [expect.objectContaining({ role: "user" }), expect.objectContaining({ role: "assistant" })],
    });
    const messages = ((await request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    expect(messages.map((m) => m["role"])).toEqual(["system", "user", "assistant", "user", "assistant"]);
  });

  it("a handler can supply the summary; session_compact reports the saved entry", async () => {
    const compacted: Rec[] = [];
    const { request, prompt } = await serve(
      ["one", "two", "three"],
      [
        (pi) => {
          pi.on(
            "session_before_compact" as never,
            ((event: { preparation: { firstKeptEntryId: string; tokensBefore: number } }) => ({
              compaction: { summary: "FROM EXTENSION", firstKeptEntryId: event.preparation.firstKeptEntryId, tokensBefore: 1234, details: { mine: true } },
            })) as never,
          );
          pi.on("session_compact" as never, ((event: Rec) => void compacted.push(event)) as never);
        },
      ],
      {},
      2,
    );
    await prompt("a");
    await prompt("b");
    const response = await request({ type: "compact" });
    expect(response["data"]).toMatchObject({ summary: "FROM EXTENSION", tokensBefore: 1234, details: { mine: true } });
    expect(response["data"]).not.toHaveProperty("usage");
    expect(compacted).toEqual([
      {
        type: "session_compact",
        fromExtension: true,
        reason: "manual",
        willRetry: false,
        compactionEntry: expect.objectContaining({ type: "compaction", summary: "FROM EXTENSION", fromHook: true }),
      },
    ]);
    // The model was not asked: the next reply is the next script turn.
    await prompt("c");
    const last = ((await request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages.at(-1);
    expect(textOf(last)).toBe("three");
  });
});

// ---- automatic compaction ---------------------------------------------------------------------------

function assistantMessage(model: Model<Api>, text: string, extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: "assistant",
    content: text ? [{ type: "text", text }] : [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: Date.now(),
    ...extra,
  };
}

/** A provider that plays a list of replies: a string, or an error message for a failed call. */
function scriptedProvider(replies: ({ text: string; totalTokens?: number } | { error: string })[], calls: Context[] = []): Factory {
  return (pi) => {
    pi.registerProvider("scripted", {
      api: "scripted-api",
      models: [{ id: "small", contextWindow: 20_000 }],
      streamSimple: (model: Model<Api>, context: Context) => {
        calls.push(context);
        const next = replies.shift() ?? { text: "(done)" };
        const stream = createAssistantMessageEventStream();
        queueMicrotask(() => {
          if ("error" in next) {
            stream.push({ type: "error", reason: "error", error: assistantMessage(model, "", { stopReason: "error", errorMessage: next.error }) });
          } else {
            const message = assistantMessage(model, next.text);
            message.usage.totalTokens = next.totalTokens ?? 100;
            stream.push({ type: "done", reason: "stop", message });
          }
        });
        return stream;
      },
    } as never);
  };
}

describe("automatic compaction", () => {
  it("compacts after a run once the context passes contextWindow - 16384 (reason threshold)", async () => {
    const { transport, request, prompt } = await serve(
      [],
      [scriptedProvider([{ text: "small", totalTokens: 1000 }, { text: "big", totalTokens: 5000 }, { text: "THRESHOLD SUMMARY" }])],
      {},
      2,
    );
    await request({ type: "set_model", provider: "scripted", modelId: "small" });
    await prompt("a");
    expect(transport.of("compaction_start")).toEqual([]);
    await prompt("b");
    expect(transport.of("compaction_start")).toEqual([{ type: "compaction_start", reason: "threshold" }]);
    const end = transport.of("compaction_end")[0]!;
    expect(end).toMatchObject({ reason: "threshold", aborted: false, willRetry: false, result: { summary: "THRESHOLD SUMMARY" } });
    // Compaction belongs to the run: agent_settled comes after it.
    const types = transport.sent.map((r) => r["type"]);
    expect(types.lastIndexOf("agent_settled")).toBeGreaterThan(types.indexOf("compaction_end"));
    const messages = ((await request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    // As pi 1.6: the compaction's snapshot of the recorded system prompt leads.
    expect(messages.map((m) => m["role"])).toEqual(["system", "compactionSummary", "user", "assistant"]);

    // set_auto_compaction false: no more compactions.
    await request({ type: "set_auto_compaction", enabled: false });
    await prompt("c");
    expect(transport.of("compaction_start")).toHaveLength(1);
  });

  it("a context past the threshold that fits keepRecentTokens is left alone without a record, as pi 1.6 leaves it", async () => {
    const { transport, request, prompt } = await serve(
      [],
      [
        scriptedProvider([
          { text: "small", totalTokens: 1000 },
          { text: "big", totalTokens: 5000 },
        ]),
      ],
    );
    await request({ type: "set_model", provider: "scripted", modelId: "small" });
    await prompt("a");
    await prompt("b");
    expect(transport.of("agent_settled")).toHaveLength(2);
    expect(transport.sent.filter((r) => String(r["type"]).startsWith("compaction_"))).toEqual([]);
    const messages = ((await request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    expect(messages.map((m) => m["role"])).toEqual(["system", "user", "assistant", "user", "assistant"]);
  });

  it("on a context overflow, compacts (reason overflow) and retries the run once", async () => {
    const calls: Context[] = [];
    const { transport, request, prompt } = await serve(
      [],
      [
        scriptedProvider(
          [
            { text: "first answer" },
            { error: "prompt is too long: 250000 tokens > 200000 maximum" },
            { text: "OVERFLOW SUMMARY" },
            { text: "answer after compaction" },
          ],
          calls,
        ),
      ],
      {},
      2,
    );
    await request({ type: "set_model", provider: "scripted", modelId: "small" });
    await prompt("first");
    await prompt("second, too big");
    expect(transport.of("compaction_start")).toEqual([{ type: "compaction_start", reason: "overflow" }]);
    expect(transport.of("compaction_end")[0]).toMatchObject({ reason: "overflow", aborted: false, willRetry: true, result: { summary: "OVERFLOW SUMMARY" } });
    expect(transport.of("auto_retry_start")).toEqual([]);
    // The retried call saw the summary and the prompt, not the failed reply.
    const retried = calls.at(-1)!;
    expect(retried.messages.map((m) => m.role)).toEqual(["system", "user", "user"]);
    expect(textOf(retried.messages[2] as unknown as Rec)).toBe("second, too big");
    const messages = ((await request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    // As pi 1.6: the compaction's snapshot of the recorded system prompt leads.
    expect(messages.map((m) => m["role"])).toEqual(["system", "compactionSummary", "user", "assistant"]);
    expect(textOf(messages.at(-1))).toBe("answer after compaction");
    expect(transport.of("agent_settled").length).toBe(2);
  });
});

// ---- over real pipes ----------------------------------------------------------------------------------
