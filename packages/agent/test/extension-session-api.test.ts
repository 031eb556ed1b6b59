/**
 * The session moves extensions make, as pi defines them. ctx.navigateTree: where the leaf goes (a
 * user message is re-typed, so the leaf goes to its parent and the text comes back as
 * editorText), what session_before_tree handlers
 * see and may change (cancel, summary, instructions, label), the branch summary written by the
 * model or given by an extension, labels, and session_tree. ctx.newSession / fork with `setup`
 * and `withSession` (pi's replacement-session flow, as its handoff example uses it).
 */
import { describe, expect, it } from "vitest";
import type { NavigateTreeOptions } from "../src/extensions/types.js";
import { serveScripted } from "./helpers/in-process.js";

type Rec = Record<string, unknown>;
type Entry = Rec & { id: string; type: string; parentId: string | null };

async function setUp() {
  const results: Rec[] = [];
  const before: Rec[] = [];
  const after: Rec[] = [];
  let answer: Rec | undefined;
  const harness = await serveScripted(
    ["one", "two", "three", "BRANCH SUMMARY from the model"],
    [
      (pi) => {
        pi.registerCommand("tree", {
          handler: async (args, ctx) => {
            const [targetId, json] = [args.split(" ")[0]!, args.slice(args.indexOf(" ") + 1)];
            const options = (args.includes(" ") ? JSON.parse(json) : {}) as NavigateTreeOptions;
            results.push(await ctx.navigateTree(targetId, options));
          },
        });
        pi.on(
          "session_before_tree" as never,
          ((event: { preparation: Rec; signal: AbortSignal }) => {
            before.push({ ...event.preparation, hasSignal: event.signal instanceof AbortSignal });
            return answer;
          }) as never,
        );
        pi.on("session_tree" as never, ((event: Rec) => void after.push(event)) as never);
      },
    ],
  );
  const entries = async (): Promise<Entry[]> => ((await harness.request({ type: "get_entries" }))["data"] as { entries: Entry[] }).entries;
  const messages = async (): Promise<string[]> =>
    ((await harness.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages.map((m) => {
      const content = m["content"] ?? m["summary"];
      const text = typeof content === "string" ? content : (content as { text?: string }[]).map((c) => c.text ?? "").join("");
      return `${String(m["role"])}:${text}`;
    });
  const tree = async (targetId: string, options?: NavigateTreeOptions) => {
    const n = results.length;
    const res = await harness.request({ type: "prompt", message: `/tree ${targetId}${options ? ` ${JSON.stringify(options)}` : ""}` });
    expect(res["success"], JSON.stringify(res)).toBe(true);
    await harness.until(() => results.length > n);
    return results[n]!;
  };
  return { ...harness, before, after, entries, messages, tree, setAnswer: (a: Rec | undefined) => (answer = a) };
}

const idOf = (entries: Entry[], role: string, text: string): string => {
  const entry = entries.find(
    (e) => e.type === "message" && (e["message"] as Rec)["role"] === role && JSON.stringify((e["message"] as Rec)["content"]).includes(text),
  );
  if (!entry) throw new Error(`no ${role} entry with ${text}`);
  return entry.id;
};

describe("ctx.navigateTree", () => {
  it("the model stays what it is, even where the branch recorded another (pi moves only the context)", async () => {
    const h = await setUp();
    await h.prompt("first");
    const a1 = idOf(await h.entries(), "assistant", "one");
    const model = async () => ((await h.request({ type: "get_state" }))["data"] as { model: { id: string } }).model.id;
    const scripted = await model();
    expect((await h.request({ type: "set_model", provider: "parley", modelId: "offline" }))["success"]).toBe(true);
    // Back to before the model_change: the branch there last used the scripted model.
    expect(await h.tree(a1)).toEqual({ cancelled: false });
    // The system message the first prompt recorded (as pi 1.6) stays on the branch.
    expect(await h.messages()).toEqual(["system:", "user:first", "assistant:one"]);
    expect(await model()).toBe("offline");
    expect(scripted).not.toBe("offline");
  });

  it("to a user message: the leaf goes to its parent, the text comes back as editorText; handlers see what is left behind", async () => {
    const h = await setUp();
    await h.prompt("first");
    await h.prompt("second");
    const all = await h.entries();
    const u2 = idOf(all, "user", "second");
    const a1 = idOf(all, "assistant", "one");
    const a2 = idOf(all, "assistant", "two");

    expect(await h.tree(u2)).toEqual({ cancelled: false, editorText: "second" });
    expect(await h.messages()).toEqual(["system:", "user:first", "assistant:one"]);
    expect(h.before[0]).toEqual({
      targetId: u2,
      oldLeafId: a2,
      commonAncestorId: u2,
      entriesToSummarize: [expect.objectContaining({ id: a2 })],
      userWantsSummary: false,
      hasSignal: true,
    });
    expect(h.after[0]).toEqual({ type: "session_tree", newLeafId: a1, oldLeafId: a2 });
    // Already there: nothing happens, no event.
    expect(await h.tree(a1)).toEqual({ cancelled: false });
    expect(h.before).toHaveLength(1);
  });

  it("with summarize: the model summarises the branch left behind into a labelled branch_summary at the target", async () => {
    const h = await setUp();
    await h.prompt("first");
    const a1 = idOf(await h.entries(), "assistant", "one");
    await h.prompt("second");
    await h.prompt("third");
    const before = await h.entries();
    const a3 = idOf(before, "assistant", "three");

    expect(await h.tree(a1, { summarize: true, label: "checkpoint", customInstructions: "mention the numbers" })).toEqual({ cancelled: false });
    const after = await h.entries();
    const summary = after.find((e) => e.type === "branch_summary")!;
    // fromId: the leaf left behind, as the newest pi records it.
    expect(summary).toMatchObject({ parentId: a1, fromId: a3, details: { readFiles: [], modifiedFiles: [] } });
    // A preamble says what the summary stands for, as pi's does; then the model's summary.
    expect(String(summary["summary"])).toMatch(
      /^The user followed another branch of this conversation and then came back here\. What happened on that branch:\n\nBRANCH SUMMARY from the model/,
    );
    expect(summary["fromHook"]).toBe(false);
    const label = after.find((e) => e.type === "label")!;
    expect(label).toMatchObject({ targetId: summary.id, label: "checkpoint", parentId: summary.id });
    expect(h.before[0]).toMatchObject({
      oldLeafId: a3,
      commonAncestorId: a1,
      userWantsSummary: true,
      label: "checkpoint",
      customInstructions: "mention the numbers",
    });
    expect((h.before[0]!["entriesToSummarize"] as Entry[]).map((e) => e.type)).toEqual(["message", "message", "message", "message"]);
    // The label is an entry too, appended last (as in pi): it is the new leaf.
    expect(h.after[0]).toMatchObject({ newLeafId: label.id, oldLeafId: a3, summaryEntry: { id: summary.id }, fromExtension: false });
    const messages = await h.messages();
    expect(messages.slice(0, 3)).toEqual(["system:", "user:first", "assistant:one"]);
    expect(messages[3]).toMatch(/^branchSummary:The user followed another branch.*\n\nBRANCH SUMMARY from the model/);
    // The conversation goes on from the summary.
    await h.prompt("fourth");
    expect((await h.messages()).at(-2)).toBe("user:fourth");
  });

  it("a handler's summary is used instead of the model's, its label wins; a handler can cancel", async () => {
    const h = await setUp();
    await h.prompt("first");
    const a1 = idOf(await h.entries(), "assistant", "one");
    await h.prompt("second");
    const a2 = idOf(await h.entries(), "assistant", "two");

    h.setAnswer({ cancel: true });
    expect(await h.tree(a1, { summarize: true })).toEqual({ cancelled: true });
    expect((await h.entries()).filter((e) => e.type === "branch_summary")).toEqual([]);
    expect(await h.messages()).toEqual(["system:", "user:first", "assistant:one", "user:second", "assistant:two"]);
    expect(h.after).toEqual([]);

    h.setAnswer({ summary: { summary: "what the extension says", details: { by: "ext" } }, label: "from-handler" });
    expect(await h.tree(a1, { summarize: true, label: "from-caller" })).toEqual({ cancelled: false });
    const entries = await h.entries();
    const summary = entries.find((e) => e.type === "branch_summary")!;
    expect(summary).toMatchObject({ summary: "what the extension says", details: { by: "ext" }, fromHook: true, parentId: a1 });
    expect(entries.find((e) => e.type === "label")).toMatchObject({ targetId: summary.id, label: "from-handler" });
    expect(h.after.at(-1)).toMatchObject({ oldLeafId: a2, fromExtension: true });
    // The model was not asked: its next scripted turn is still the third.
    await h.prompt("again");
    expect((await h.messages()).at(-1)).toBe("assistant:three");
  });

  it("the branch summary keeps what it cost: the model's usage, or the usage a handler's summary gives (a malformed one is left out)", async () => {
    const h = await setUp();
    await h.prompt("first");
    const a1 = idOf(await h.entries(), "assistant", "one");
    await h.prompt("second");
    const summaries = async () => (await h.entries()).filter((e) => e.type === "branch_summary");

    h.setAnswer({
      summary: {
        summary: "with usage",
        usage: { input: 3, output: 4, cacheRead: 0, cacheWrite: 0, totalTokens: 7, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 } },
      },
    });
    expect(await h.tree(a1, { summarize: true })).toEqual({ cancelled: false });
    expect((await summaries())[0]).toMatchObject({ summary: "with usage", fromHook: true, usage: { totalTokens: 7, cost: { total: 0.3 } } });

    // The model's own summary records the summary call's usage.
    h.setAnswer(undefined);
    await h.prompt("third");
    expect(await h.tree(a1, { summarize: true })).toEqual({ cancelled: false });
    const written = (await summaries()).find((e) => String(e["summary"]).includes("BRANCH SUMMARY"))!;
    expect(written["usage"]).toMatchObject({
      input: expect.any(Number),
      output: expect.any(Number),
      totalTokens: expect.any(Number),
      cost: expect.any(Object),
    });

    h.setAnswer({ summary: { summary: "bad usage", usage: { input: "lots" } } });
    expect(await h.tree(a1, { summarize: true })).toEqual({ cancelled: false });
    const bad = (await summaries()).find((e) => e["summary"] === "bad usage")!;
    expect(bad).toMatchObject({ fromHook: true });
    expect(bad).not.toHaveProperty("usage");
  });

  it("without summarize, a label goes on the target; an unknown id is an error for the command", async () => {
    const h = await setUp();
    await h.prompt("first");
    await h.prompt("second");
    const a1 = idOf(await h.entries(), "assistant", "one");
    expect(await h.tree(a1, { label: "here" })).toEqual({ cancelled: false });
    expect((await h.entries()).find((e) => e.type === "label")).toMatchObject({ targetId: a1, label: "here" });
    const res = await h.request({ type: "prompt", message: "/tree nope" });
    expect(res["success"]).toBe(true);
    await h.until(() => h.transport.of("extension_error").length > 0);
    expect(String(h.transport.of("extension_error")[0]!["error"])).toMatch(/No entry with id nope/);
  });
});

describe("session switches with setup and withSession (pi's replacement-session flow)", () => {
  it("newSession seeds the new session with setup, then withSession works on it with a fresh context", async () => {
    const seen: Rec[] = [];
    const h = await serveScripted(
      ["one", "kicked off"],
      [
        (pi) => {
          pi.registerCommand("handoff", {
            handler: async (_args, ctx) => {
              const oldId = ctx.sessionManager.getSessionId();
              const result = await ctx.newSession({
                setup: async (sm) => {
                  const first = sm.appendMessage({ role: "user", content: [{ type: "text", text: "context from before" }], timestamp: Date.now() });
                  sm.appendLabelChange(first, "seed");
                  sm.appendCustomEntry("handoff-state", { from: oldId });
                },
                withSession: async (next) => {
                  seen.push({ oldId, newId: next.sessionManager.getSessionId(), entries: next.sessionManager.getEntries().map((e) => e.type) });
                  next.ui.setEditorText("edited prompt");
                  await next.sendUserMessage("kickoff");
                },
              });
              seen.push({ result });
            },
          });
        },
      ],
    );
    await h.prompt("first");
    const n = h.transport.of("agent_settled").length;
    expect((await h.request({ type: "prompt", message: "/handoff" }))["success"]).toBe(true);
    await h.until(() => seen.length === 2 && h.transport.of("agent_settled").length > n);
    expect(seen[0]!["newId"]).not.toBe(seen[0]!["oldId"]);
    // What the session starts with comes first (as pi records it), then the seed.
    expect(seen[0]!["entries"]).toEqual(["model_change", "thinking_level_change", "message", "label", "custom"]);
    expect(seen[1]).toEqual({ result: { cancelled: false } });
    expect(h.transport.sent.some((r) => r["method"] === "set_editor_text" && r["text"] === "edited prompt")).toBe(true);
    const messages = ((await h.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    expect(messages.map((m) => [m["role"], JSON.stringify(m["content"])])).toEqual([
      ["user", expect.stringContaining("context from before")],
      // The kickoff's run is the new session's first: it records the system prompt before its message, as pi 1.6 does.
      ["system", '""'],
      ["user", expect.stringContaining("kickoff")],
      ["assistant", expect.stringContaining("kicked off")],
    ]);
  });

  it("setup runs before the new session's session_start, as in pi: its handlers see the seed", async () => {
    const order: string[] = [];
    const h = await serveScripted(
      [],
      [
        (pi) => {
          pi.on("session_shutdown", (event) => void order.push(`shutdown:${event.reason}`));
          pi.on("session_start", (event, ctx) => {
            const custom = ctx.sessionManager.getEntries().filter((e) => e.type === "custom").length;
            order.push(`start:${event.reason}:${custom} seeded`);
          });
          pi.registerCommand("seeded", {
            handler: async (_args, ctx) => {
              await ctx.newSession({
                setup: (sm) => {
                  order.push("setup");
                  sm.appendCustomEntry("seed", { n: 1 });
                },
                withSession: async () => void order.push("withSession"),
              });
            },
          });
          pi.registerCommand("seed-fails", {
            handler: async (_args, ctx) => {
              await ctx.newSession({
                setup: () => {
                  throw new Error("seed failed");
                },
                withSession: async () => void order.push("withSession after a failed seed"),
              });
            },
          });
        },
      ],
    );
    await h.request({ type: "prompt", message: "/seeded" });
    await h.until(() => order.includes("withSession"));
    expect(order).toEqual(["start:startup:0 seeded", "shutdown:new", "setup", "start:new:1 seeded", "withSession"]);
    // A seed that throws: the new session still starts (its extensions hear session_start), the
    // command's error is reported, and withSession does not run.
    order.length = 0;
    await h.request({ type: "prompt", message: "/seed-fails" });
    await h.until(() => h.transport.sent.some((r) => r["type"] === "extension_error"));
    expect(order).toEqual(["shutdown:new", "start:new:0 seeded"]);
    expect(h.transport.sent.filter((r) => r["type"] === "extension_error").map((r) => r["error"])).toEqual(["seed failed"]);
  });

  it("fork's withSession runs after the fork, bound to the forked session; a cancelled switch does not run it", async () => {
    const seen: string[] = [];
    let cancel = false;
    const h = await serveScripted(
      ["one", "two"],
      [
        (pi) => {
          pi.on("session_before_fork" as never, (() => (cancel ? { cancel: true } : undefined)) as never);
          pi.registerCommand("branch", {
            handler: async (args, ctx) => {
              const before = ctx.sessionManager.getSessionId();
              const result = await ctx.fork(args, {
                withSession: (next) => void seen.push(`${before !== next.sessionManager.getSessionId()}:${next.sessionManager.getBranch().length}`),
              });
              seen.push(`cancelled:${result.cancelled}`);
            },
          });
        },
      ],
    );
    await h.prompt("first");
    await h.prompt("second");
    const entries = ((await h.request({ type: "get_entries" }))["data"] as { entries: Entry[] }).entries;
    const u2 = idOf(entries, "user", "second");
    cancel = true;
    await h.request({ type: "prompt", message: `/branch ${u2}` });
    await h.until(() => seen.length === 1);
    expect(seen).toEqual(["cancelled:true"]);
    cancel = false;
    await h.request({ type: "prompt", message: `/branch ${u2}` });
    await h.until(() => seen.length === 3);
    // "before" the second prompt: the fork holds the session's start (model, level), the system message
    // the first prompt recorded (as pi 1.6) and the first exchange only.
    expect(seen.slice(1)).toEqual(["true:5", "cancelled:false"]);
  });
});
