/**
 * The newest pi's tool surface for extensions, through the spawned CLI: ctx.tools and
 * ctx.executeTool (nested calls: their ids, hooks, events and record), tool_call `terminate`,
 * tool_result `structuredContent`/`usage`, a result's own `isError`, tool exposure, and
 * `durationMs` only for tools that ran. The fixture (fixtures/agent/tool-surface.js) reports what
 * its handlers heard and what executeTool resolved to.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AGENT_FIXTURES, call, messages, notes, processRegistry, runPrompt, tempDir, writeScript, type Msg, type Turn } from "./fixtures/agent/harness.js";
import type { AgentProcess, Rec } from "./helpers/spawn.js";

const procs = processRegistry();
const MINUTE = 60_000;

function start(turns: Turn[]): AgentProcess {
  const args = ["--mode", "rpc", "--no-session", "--model-script", writeScript(turns), "-e", join(AGENT_FIXTURES, "tool-surface.js")];
  return procs.raw(args, { cwd: tempDir() });
}

type Report = { seen: Rec[]; outcomes: Rec[]; toolsSeen: string[]; active: string[] };
async function report(agent: AgentProcess): Promise<Report> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "/tool-report" });
  return JSON.parse(notes(agent, from)[0] as string) as Report;
}

const orchestrate = (calls: { name: string; args: unknown }[], extra: Record<string, unknown> = {}): Turn => ({
  toolCalls: [{ name: "orchestrate", arguments: { calls, ...extra } }],
});
const usage = (n: number) => ({
  input: n,
  output: n,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 2 * n,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: n / 1000 },
});
const text = (result: unknown) => ((result as { content: { text: string }[] }).content ?? []).map((b) => b.text).join("");
const ofType = (records: Rec[], type: string) => records.filter((r) => r.type === type);

describe("ctx.executeTool", () => {
  it(
    "runs each named tool as a model call runs: ids <caller>/<n>, hooks and tool_execution_* with parentToolCallId, never rejecting; the caller's result records the calls and adds their usage",
    async () => {
      const plan = [
        { name: "echo", args: { text: "hi" } },
        { name: "secret", args: {} },
        { name: "nope", args: {} },
        { name: "echo", args: { text: "forbidden" } },
        { name: "boom", args: {} },
        { name: "echo", args: { text: "redact" } },
        { name: "echo", args: { text: "restructure" } },
        { name: "echo", args: { text: "soft-fail" } },
        { name: "echo", args: { text: "gate-crash" } },
        { name: "echo", args: {} },
      ];
      const agent = start([orchestrate(plan), "done"]);
      const records = await runPrompt(agent, "go", MINUTE);
      const caller = String(ofType(records, "tool_execution_start")[0]?.["toolCallId"]);
      const id = (n: number) => `${caller}/${n}`;

      // What executeTool resolved to, call by call (in the order made; they ran concurrently).
      const { outcomes, toolsSeen, seen } = await report(agent);
      expect(outcomes).toEqual([
        { id: id(1), name: "echo", isError: false, text: "echo: hi", structuredContent: { echoed: "hi" }, ran: true },
        { id: id(2), name: "secret", isError: false, text: "the secret", ran: true },
        { id: id(3), name: "nope", isError: true, text: "Tool nope not found", ran: false },
        { id: id(4), name: "echo", isError: true, text: "echo of forbidden is blocked", ran: false },
        { id: id(5), name: "boom", isError: true, text: "boom went the tool", ran: true },
        // New content without new structured content drops the old one (it may not match).
        { id: id(6), name: "echo", isError: false, text: "[redacted]", ran: true },
        { id: id(7), name: "echo", isError: false, text: "echo: restructure", structuredContent: { replaced: true }, ran: true },
        // A result may say it failed without throwing; its details stay.
        { id: id(8), name: "echo", isError: true, text: "soft failure", ran: true },
        // A tool_call handler that throws blocks the call with its error (pi: a failing check must not let it run).
        { id: id(9), name: "echo", isError: true, text: "the gate crashed", ran: false },
        { id: id(10), name: "echo", isError: true, text: expect.stringMatching(/^Validation failed for tool "echo"/), ran: false },
      ]);
      // ctx.tools: the active direct tools and codemode tools (secret is not active, yet callable).
      expect(toolsSeen).toEqual(["bash", "boom", "echo", "edit", "orchestrate", "read", "secret", "wait-abort", "write"]);

      // On the wire: every nested call starts and ends once, with the caller's id; only tools that ran have durationMs.
      const nestedStarts = ofType(records, "tool_execution_start").filter((r) => r["parentToolCallId"] === caller);
      const nestedEnds = ofType(records, "tool_execution_end").filter((r) => r["parentToolCallId"] === caller);
      expect(nestedStarts.map((r) => r["toolCallId"]).sort()).toEqual(plan.map((_, i) => id(i + 1)).sort());
      expect(nestedEnds.map((r) => r["toolCallId"]).sort()).toEqual(plan.map((_, i) => id(i + 1)).sort());
      const ran = new Set([1, 2, 5, 6, 7, 8].map(id));
      for (const end of nestedEnds) expect(typeof end["durationMs"] === "number", String(end["toolCallId"])).toBe(ran.has(String(end["toolCallId"])));
      const end = (n: number) => nestedEnds.find((r) => r["toolCallId"] === id(n)) as Rec;
      expect(end(1)["result"]).toMatchObject({ structuredContent: { echoed: "hi" }, usage: usage(1) });
      expect(end(7)["result"]).toMatchObject({ structuredContent: { replaced: true }, usage: usage(5) });
      expect(end(8)).toMatchObject({ isError: true, result: { details: { kept: true } } });
      const updates = ofType(records, "tool_execution_update").filter((r) => r["parentToolCallId"] === caller);
      expect(updates.map((r) => r["toolCallId"]).sort()).toEqual([1, 6, 7, 8].map(id).sort());
      // The caller's own events carry no parent; nested calls never become messages of their own.
      const callerEnd = ofType(records, "tool_execution_end").find((r) => r["toolCallId"] === caller) as Rec;
      expect(callerEnd).not.toHaveProperty("parentToolCallId");
      expect(text(callerEnd["result"])).toBe('made 10 calls; updates ["partial hi","partial redact","partial restructure","partial soft-fail"]');

      // Extensions heard the same: tool_call for each call that got past validation, tool_result for each that ran.
      const heard = (type: string) => seen.filter((e) => e["type"] === type && e["parentToolCallId"] === caller).map((e) => e["toolCallId"]);
      expect(heard("tool_call").sort()).toEqual([1, 2, 4, 5, 6, 7, 8, 9].map(id).sort());
      expect(heard("tool_result").sort()).toEqual([...ran].sort());
      expect(seen.find((e) => e["type"] === "tool_result" && e["toolCallId"] === id(1))).toMatchObject({ structuredContent: { echoed: "hi" }, usage: 2 });
      expect(seen.find((e) => e["type"] === "tool_execution_end" && e["toolCallId"] === id(3))).toMatchObject({ isError: true, ran: false });

      // The caller's result message: the record of its calls, and its usage includes theirs (1 + 1 + 5).
      const result = (await messages(agent)).find((m) => m.role === "toolResult") as Msg;
      // Summed as pi 1.6's combineUsage sums: the total is from the provider only when every part's was.
      expect(result["usage"]).toEqual({ ...usage(7), cost: { ...usage(7).cost, totalFromProvider: false } });
      expect(typeof result["durationMs"]).toBe("number");
      const record = result["nestedCalls"] as { calls: Rec[]; complete: boolean };
      expect(record.complete).toBe(true);
      expect(record.calls.map((c) => [c["id"], c["name"], c["status"]])).toEqual([
        [id(1), "echo", "ok"],
        [id(2), "secret", "ok"],
        [id(3), "nope", "error"],
        [id(4), "echo", "error"],
        [id(5), "boom", "error"],
        [id(6), "echo", "ok"],
        [id(7), "echo", "ok"],
        [id(8), "echo", "error"],
        [id(9), "echo", "error"],
        [id(10), "echo", "error"],
      ]);
      expect(record.calls[0]).toMatchObject({ arguments: { text: "hi" } });
      expect(record.calls[2]).toMatchObject({ error: "Tool nope not found" });
      // The conversation holds one tool call and one result: the nested ones are not in it.
      expect((await messages(agent)).map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    },
    2 * MINUTE,
  );

  it(
    "an aborted signal answers every call without running it; aborting the run stops a nested call, and the caller still finishes",
    async () => {
      const agent = start([
        orchestrate([{ name: "echo", args: { text: "x" } }], { abortFirst: true }),
        "after abort-first",
        orchestrate([{ name: "wait-abort", args: {} }]),
        "not reached",
      ]);
      await runPrompt(agent, "first", MINUTE);
      const first = (await report(agent)).outcomes;
      expect(first).toEqual([{ id: expect.stringMatching(/\/1$/), name: "echo", isError: true, text: "Operation aborted", ran: false }]);

      const from = agent.records.length;
      await agent.request({ type: "prompt", message: "second" });
      // The nested tool says it waits (an update), then the run is aborted.
      await agent.waitFor((r) => r.type === "tool_execution_update" && r["toolName"] === "wait-abort" && r["parentToolCallId"] !== undefined, MINUTE, from);
      await agent.request({ type: "abort" });
      await agent.waitFor((r) => r.type === "agent_settled", MINUTE, from);
      const ends = ofType(agent.records.slice(from), "tool_execution_end");
      const nested = ends.find((r) => r["parentToolCallId"] !== undefined) as Rec;
      expect(nested).toMatchObject({ toolName: "wait-abort", isError: true });
      expect(text(nested["result"])).toBe("aborted while waiting");
      // Exactly one end per call: the nested one and its caller.
      expect(ends.map((r) => r["toolName"])).toEqual(["wait-abort", "orchestrate"]);
      const second = (await report(agent)).outcomes.slice(1);
      expect(second).toEqual([{ id: expect.stringMatching(/\/1$/), name: "wait-abort", isError: true, text: "aborted while waiting", ran: true }]);
      // The orchestrating tool's updates list, as the nested call's onUpdate received it.
      expect(text(ends[1]?.["result"])).toBe('made 1 calls; updates ["waiting"]');
    },
    2 * MINUTE,
  );
});

describe("model-issued tool calls", () => {
  it(
    "a tool_call block with terminate ends the run after the batch; without it the model goes on; the blocked call did not run",
    async () => {
      const agent = start([call("echo", { text: "forbidden" }), "went on", call("echo", { text: "stop" }), "never said"]);
      const first = await runPrompt(agent, "one", MINUTE);
      const blocked = ofType(first, "tool_execution_end")[0] as Rec;
      expect(blocked).toMatchObject({ isError: true });
      expect(blocked).not.toHaveProperty("durationMs");
      expect(text(blocked["result"])).toBe("echo of forbidden is blocked");
      expect(ofType(first, "message_end").map((r) => (r["message"] as Msg).role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);

      const second = await runPrompt(agent, "two", MINUTE);
      const stopped = ofType(second, "tool_execution_end")[0] as Rec;
      expect(stopped).toMatchObject({ isError: true, result: { terminate: true } });
      expect(stopped).not.toHaveProperty("durationMs");
      expect(text(stopped["result"])).toBe("stop here");
      // No model call after the batch: the run ends with the tool result.
      expect(ofType(second, "message_end").map((r) => (r["message"] as Msg).role)).toEqual(["user", "assistant", "toolResult"]);
      const { seen } = await report(agent);
      // Neither blocked call reached tool_result handlers.
      expect(seen.filter((e) => e["type"] === "tool_result")).toEqual([]);
    },
    2 * MINUTE,
  );

  it(
    "a result's structuredContent, usage and isError reach tool_result handlers, tool_execution_end and the result message",
    async () => {
      const agent = start([
        {
          toolCalls: [
            { name: "echo", arguments: { text: "restructure" } },
            { name: "echo", arguments: { text: "soft-fail" } },
          ],
        },
        "ok",
        call("secret", {}),
        "fine",
      ]);
      const records = await runPrompt(agent, "go", MINUTE);
      const ends = ofType(records, "tool_execution_end");
      expect(ends[0]).toMatchObject({ isError: false, result: { structuredContent: { replaced: true }, usage: usage(5) } });
      expect(ends[1]).toMatchObject({ isError: true, result: { details: { kept: true } } });
      for (const end of ends) expect(typeof end["durationMs"]).toBe("number");
      const results = ofType(records, "message_end")
        .map((r) => r["message"] as Msg)
        .filter((m) => m.role === "toolResult");
      expect(results[0]).toMatchObject({ isError: false, usage: usage(5) });
      expect(results[0]).not.toHaveProperty("nestedCalls");
      expect(results[1]).toMatchObject({ isError: true, details: { kept: true } });
      const { seen } = await report(agent);
      expect(seen.filter((e) => e["type"] === "tool_result")).toEqual([
        { type: "tool_result", toolCallId: expect.any(String), toolName: "echo", isError: false, structuredContent: { echoed: "restructure" }, usage: 2 },
        { type: "tool_result", toolCallId: expect.any(String), toolName: "echo", isError: true },
      ]);

      // A codemode tool is callable by tools but not active: the model cannot call it.
      const next = await runPrompt(agent, "again", MINUTE);
      expect(text(ofType(next, "tool_execution_end")[0]?.["result"])).toBe("Tool secret not found");
    },
    2 * MINUTE,
  );
});

describe("session_before_tree", () => {
  it(
    "a handler's summary.usage is kept on the branch_summary entry",
    async () => {
      const agent = start(["one", "two"]);
      await runPrompt(agent, "first", MINUTE);
      await runPrompt(agent, "second", MINUTE);
      const entries = async () => ((await agent.request({ type: "get_entries" }))["data"] as { entries: Rec[] }).entries;
      const firstReply = (await entries()).find((e) => e["type"] === "message" && (e["message"] as Msg).role === "assistant") as Rec;
      const res = await agent.request({ type: "prompt", message: `/tree-to ${String(firstReply["id"])}` }, MINUTE);
      expect(res["success"]).toBe(true);
      const summary = (await entries()).find((e) => e["type"] === "branch_summary");
      expect(summary).toMatchObject({ summary: "from the fixture", fromHook: true, parentId: firstReply["id"], usage: usage(3) });
    },
    2 * MINUTE,
  );

  it(
    "files a tool read or changed through ctx.executeTool count in the branch summary's file lists, as pi reads them from nestedCalls",
    async () => {
      const cwd = tempDir();
      writeFileSync(join(cwd, "notes.txt"), "a note\n");
      const script = writeScript(["one", orchestrate([{ name: "read", args: { path: "notes.txt" } }]), "done", "THE SUMMARY"]);
      const agent = procs.raw(["--mode", "rpc", "--no-session", "--model-script", script, "-e", join(AGENT_FIXTURES, "tool-surface.js")], { cwd });
      await runPrompt(agent, "first", MINUTE);
      await runPrompt(agent, "read it via a tool", MINUTE);
      const entries = async () => ((await agent.request({ type: "get_entries" }))["data"] as { entries: Rec[] }).entries;
      const firstReply = (await entries()).find((e) => e["type"] === "message" && (e["message"] as Msg).role === "assistant") as Rec;
      expect((await agent.request({ type: "prompt", message: `/tree-model ${String(firstReply["id"])}` }, MINUTE))["success"]).toBe(true);
      const summary = (await entries()).find((e) => e["type"] === "branch_summary") as Rec;
      expect(summary).toMatchObject({ details: { readFiles: ["notes.txt"], modifiedFiles: [] } });
      expect(String(summary["summary"])).toMatch(/\n\nTHE SUMMARY[\s\S]*<read-files>\nnotes.txt\n<\/read-files>/);
    },
    2 * MINUTE,
  );
});

describe("tool exposure", () => {
  it(
    "codemode, hidden and defaultActive:false tools start inactive; activating works for all but the hidden one, which stays unreachable",
    async () => {
      const agent = start([orchestrate([{ name: "ghost", args: {} }]), "ok", call("later", {}), "fine"]);
      const builtIns = ["bash", "edit", "read", "write"];
      expect((await report(agent)).active).toEqual([...builtIns, "boom", "echo", "orchestrate", "wait-abort"].sort());
      await runPrompt(agent, "call the ghost", MINUTE);
      expect((await report(agent)).outcomes).toEqual([{ id: expect.any(String), name: "ghost", isError: true, text: "Tool ghost not found", ran: false }]);

      await agent.request({ type: "prompt", message: "/activate-all" });
      expect((await report(agent)).active).toEqual([...builtIns, "boom", "echo", "later", "orchestrate", "secret", "wait-abort"].sort());
      const records = await runPrompt(agent, "call later", MINUTE);
      expect(ofType(records, "tool_execution_end")[0]).toMatchObject({ toolName: "later", isError: false, result: { content: [{ text: "later" }] } });
    },
    2 * MINUTE,
  );
});

describe("pi.getAllTools", () => {
  it(
    "reports each tool's exposure, and its namespace and annotations when it has them",
    async () => {
      const agent = start(["hi"]);
      const from = agent.records.length;
      await agent.request({ type: "prompt", message: "/all-tools" });
      expect(JSON.parse(notes(agent, from)[0] as string)).toEqual([
        {
          name: "secret",
          description: "Only tools may call this",
          exposure: "codemode",
          namespace: { name: "vault", description: "Secrets" },
          annotations: { readOnlyHint: true },
        },
        { name: "echo", description: "Echoes text", exposure: "direct" },
        { name: "read", description: expect.any(String), exposure: "direct", promptGuidelines: expect.any(Array) },
      ]);
    },
    2 * MINUTE,
  );
});
