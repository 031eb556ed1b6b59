/**
 * The agent loop through the real CLI: a scripted model drives tool calls, and the client sees
 * pi's event sequence, in order, with delta-only message_update records.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentProcess, Rec } from "./helpers/spawn.js";
import {
  AGENT_FIXTURES,
  SLOW,
  ame,
  call,
  isDelta,
  messages,
  msg,
  notes,
  processRegistry,
  runPrompt,
  state,
  tempDir,
  textOf,
  token,
  writeScript,
  type Msg,
} from "./fixtures/agent/harness.js";

const procs = processRegistry();
const LONG = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

/** Collapses runs of message_update into one "message_update*" token; drops tool_execution_update. */
function shape(records: Rec[]): string[] {
  const out: string[] = [];
  for (const r of records) {
    if (r.type === "tool_execution_update") continue;
    const t = r.type === "message_update" ? "message_update*" : token(r);
    if (t === "message_update*" && out.at(-1) === t) continue;
    out.push(t);
  }
  return out;
}

/** pids of every live descendant of `pid`, with their command lines. */
function descendants(pid: number): { pid: number; args: string }[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] as string }));
  const found: { pid: number; args: string }[] = [];
  const walk = (p: number) => {
    for (const row of rows.filter((r) => r.ppid === p)) {
      found.push({ pid: row.pid, args: row.args });
      walk(row.pid);
    }
  };
  walk(pid);
  return found;
}

describe("a multi-turn tool-using conversation", () => {
  const cwd = tempDir();
  let agent: AgentProcess;
  let first: Rec[] = [];

  beforeAll(async () => {
    const script = writeScript([
      { text: "Writing the file.", toolCalls: [{ name: "write", arguments: { path: "notes/hello.txt", content: "hi there\nline two\n" } }] },
      call("read", { path: "notes/hello.txt" }),
      "Done: the file says hi there.",
      "Second answer, same context.",
    ]);
    agent = procs.parley(["--model-script", script], { cwd, keep: "suite" });
    await agent.request({ type: "get_state" });
    first = await runPrompt(agent, "create notes/hello.txt and read it back");
  });

  it("emits pi's full event sequence, in order", () => {
    expect(shape(first)).toEqual([
      "response:prompt",
      "agent_start",
      "turn_start",
      // The first run records the system prompt, as pi 1.6 does.
      "message_start:system",
      "message_end:system",
      "message_start:user",
      "message_end:user",
      // turn 1: text + write call
      "message_start:assistant",
      "message_update*",
      "message_end:assistant",
      "tool_execution_start",
      "tool_execution_end",
      "message_start:toolResult",
      "message_end:toolResult",
      "turn_end",
      // turn 2: read call
      "turn_start",
      "message_start:assistant",
      "message_update*",
      "message_end:assistant",
      "tool_execution_start",
      "tool_execution_end",
      "message_start:toolResult",
      "message_end:toolResult",
      "turn_end",
      // turn 3: the answer
      "turn_start",
      "message_start:assistant",
      "message_update*",
      "message_end:assistant",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
    // tool_execution_update, when present, sits between its start and end.
    for (const u of first.filter((r) => r.type === "tool_execution_update")) {
      const i = first.indexOf(u);
      const start = first.findIndex((r) => r.type === "tool_execution_start" && r["toolCallId"] === u["toolCallId"]);
      const end = first.findIndex((r) => r.type === "tool_execution_end" && r["toolCallId"] === u["toolCallId"]);
      expect(start).toBeLessThan(i);
      expect(i).toBeLessThan(end);
    }
  });

  it("message_update is delta-only: no partial, no message, usage present; toolcall_start names the call", () => {
    const updates = first.filter((r) => r.type === "message_update");
    expect(updates.length).toBeGreaterThan(8);
    for (const u of updates) {
      expect(Object.keys(u).sort()).toEqual(["assistantMessageEvent", "type", "usage"]);
      expect(ame(u)).not.toHaveProperty("partial");
      expect(ame(u)).not.toHaveProperty("message");
      expect(u["usage"]).toMatchObject({ input: expect.any(Number), output: expect.any(Number), totalTokens: expect.any(Number) });
    }
    // Per assistant message: the deltas rebuild message_end's content exactly.
    const ends = first.filter((r) => r.type === "message_end" && msg(r).role === "assistant");
    expect(ends).toHaveLength(3);
    for (const end of ends) {
      const endIdx = first.indexOf(end);
      let startIdx = endIdx;
      while (!(first[startIdx]?.type === "message_start")) startIdx--;
      const events = first.slice(startIdx + 1, endIdx).map((r) => ame(r) as Rec);
      const blocks = msg(end).content as Rec[];
      blocks.forEach((block, index) => {
        const mine = events.filter((e) => e["contentIndex"] === index);
        if (block.type === "text") {
          expect(mine.map((e) => e.type)[0]).toBe("text_start");
          expect(mine.at(-1)?.type).toBe("text_end");
          expect(
            mine
              .filter((e) => e.type === "text_delta")
              .map((e) => e["delta"])
              .join(""),
          ).toBe(block["text"]);
        } else {
          expect(block.type).toBe("toolCall");
          const start = mine.find((e) => e.type === "toolcall_start");
          expect(start).toMatchObject({ id: block["id"], toolName: block["name"] });
          const json = mine
            .filter((e) => e.type === "toolcall_delta")
            .map((e) => e["delta"])
            .join("");
          expect(JSON.parse(json)).toEqual(block["arguments"]);
          expect(mine.find((e) => e.type === "toolcall_end")?.["toolCall"]).toEqual(block);
        }
      });
      // Cumulative usage never goes down while streaming, and ends at message_end's usage.
      const outputs = first.slice(startIdx + 1, endIdx).map((r) => (r["usage"] as { output: number }).output);
      expect([...outputs].sort((a, b) => a - b)).toEqual(outputs);
      expect(outputs.at(-1)).toBe((msg(end)["usage"] as { output: number }).output);
    }
  });

  it("really runs the tools: the file is written and read back; results line up by toolCallId", () => {
    expect(readFileSync(join(cwd, "notes/hello.txt"), "utf8")).toBe("hi there\nline two\n");
    const starts = first.filter((r) => r.type === "tool_execution_start");
    const ends = first.filter((r) => r.type === "tool_execution_end");
    expect(starts.map((r) => r["toolName"])).toEqual(["write", "read"]);
    expect(starts[0]?.["args"]).toEqual({ path: "notes/hello.txt", content: "hi there\nline two\n" });
    expect(ends.map((r) => [r["toolCallId"], r["isError"]])).toEqual(starts.map((r) => [r["toolCallId"], false]));
    expect(textOf(ends[1]?.["result"])).toContain("hi there\nline two");
    const results = first.filter((r) => r.type === "message_end" && msg(r).role === "toolResult").map(msg);
    expect(results.map((m) => [m["toolCallId"], m.toolName, m.isError])).toEqual(starts.map((r) => [r["toolCallId"], r["toolName"], false]));
    const turnEnds = first.filter((r) => r.type === "turn_end");
    expect(turnEnds.map((t) => (t["toolResults"] as Msg[]).map((m) => m["toolCallId"]))).toEqual([
      [starts[0]?.["toolCallId"]],
      [starts[1]?.["toolCallId"]],
      [],
    ]);
    const agentEnd = first.find((r) => r.type === "agent_end") as Rec;
    expect((agentEnd["messages"] as Msg[]).map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
  });

  it("a second prompt continues the same context", async () => {
    const before = await messages(agent);
    // The recorded system message, then the first run's six; the second run records none (nothing changed).
    expect(before).toHaveLength(7);
    const lastInput = (msg(first.filter((r) => r.type === "message_end").at(-1) as Rec)["usage"] as { input: number }).input;
    const second = await runPrompt(agent, "and now?");
    const after = await messages(agent);
    expect(after).toHaveLength(9);
    expect(after.slice(0, 7)).toEqual(before);
    expect(after.slice(7).map((m) => [m.role, textOf(m)])).toEqual([
      ["user", "and now?"],
      ["assistant", "Second answer, same context."],
    ]);
    // The model read the whole conversation: its input grew beyond the previous call's.
    const reply = msg(second.filter((r) => r.type === "message_end").at(-1) as Rec);
    expect((reply["usage"] as { input: number }).input).toBeGreaterThan(lastInput);
    expect((await state(agent))["messageCount"]).toBe(9);
    // A fresh run: one agent_start per prompt.
    expect(second.filter((r) => r.type === "agent_start")).toHaveLength(1);
  });

  it("agent_end carries willRetry: false", () => {
    const agentEnd = first.find((r) => r.type === "agent_end") as Rec;
    expect(agentEnd["willRetry"]).toBe(false);
  });
});

describe("prompting while the agent streams", () => {
  it("prompt without streamingBehavior is refused; steer lands before the next model call, follow-up after the agent would stop", async () => {
    const script = writeScript([LONG, "reply to steer", "reply to follow-up"]);
    const agent = procs.parley(["--model-script", script], { env: SLOW });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "start" });
    await agent.waitFor(isDelta("text_delta"), 10_000, from);

    const refused = await agent.request({ type: "prompt", message: "no behaviour" });
    expect(refused).toMatchObject({ success: false, command: "prompt" });
    expect(refused["error"]).toMatch(/streamingBehavior/);

    expect((await agent.request({ type: "steer", message: "STEER-1" }))["success"]).toBe(true);
    expect((await agent.request({ type: "prompt", message: "FOLLOW-1", streamingBehavior: "followUp" }))["success"]).toBe(true);
    const pending = await state(agent);
    expect(pending).toMatchObject({ isStreaming: true, pendingMessageCount: 2 });
    await agent.waitFor((r) => r.type === "agent_settled", 15_000, from);

    const run = agent.records.slice(from);
    const queues = run.filter((r) => r.type === "queue_update").map((r) => [r["steering"], r["followUp"]]);
    expect(queues).toEqual([
      [["STEER-1"], []],
      [["STEER-1"], ["FOLLOW-1"]],
      [[], ["FOLLOW-1"]],
      [[], []],
    ]);
    // Order of messages on the wire: each queued message enters after the previous reply ended.
    const seq = run.filter((r) => r.type === "message_end").map((r) => `${msg(r).role}:${textOf(msg(r))}`);
    expect(seq).toEqual([
      "system:",
      "user:start",
      `assistant:${LONG}`,
      "user:STEER-1",
      "assistant:reply to steer",
      "user:FOLLOW-1",
      "assistant:reply to follow-up",
    ]);
    // The queue empties exactly when the message is delivered.
    const steerStart = run.findIndex((r) => r.type === "message_start" && textOf(msg(r)) === "STEER-1");
    const q3 = run.findIndex((r) => r.type === "queue_update" && (r["steering"] as string[]).length === 0);
    expect(q3).toBeLessThan(steerStart);
    expect(run.slice(q3, steerStart).some((r) => r.type === "message_update")).toBe(false);
    expect(run.filter((r) => r.type === "agent_settled")).toHaveLength(1);
    expect((await messages(agent)).map((m) => textOf(m))).toEqual(["", "start", LONG, "STEER-1", "reply to steer", "FOLLOW-1", "reply to follow-up"]);
    expect(await state(agent)).toMatchObject({ isStreaming: false, pendingMessageCount: 0 });
  });

  it("steering mode all: every queued steer is delivered before the one next model call", async () => {
    const agent = procs.parley(["--model-script", writeScript([LONG, "one reply to both"])], { env: SLOW });
    await agent.request({ type: "set_steering_mode", mode: "all" });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "start" });
    await agent.waitFor(isDelta("text_delta"), 10_000, from);
    await agent.request({ type: "steer", message: "steer A" });
    await agent.request({ type: "steer", message: "steer B" });
    await agent.waitFor((r) => r.type === "agent_settled", 15_000, from);
    const seq = agent.records
      .slice(from)
      .filter((r) => r.type === "message_end")
      .map((r) => textOf(msg(r)));
    expect(seq).toEqual(["", "start", LONG, "steer A", "steer B", "one reply to both"]);
    expect(agent.records.slice(from).filter((r) => r.type === "turn_start")).toHaveLength(2);
  });

  it("clear_queue returns the queued texts and nothing queued is delivered", async () => {
    const script = writeScript([LONG, "unexpected"]);
    const agent = procs.parley(["--model-script", script], { env: SLOW });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "start" });
    await agent.waitFor(isDelta("text_delta"), 10_000, from);
    await agent.request({ type: "follow_up", message: "F-a" });
    await agent.request({ type: "prompt", message: "S-a", streamingBehavior: "steer" });
    await agent.request({ type: "steer", message: "S-b" });
    const cleared = await agent.request({ type: "clear_queue" });
    expect(cleared).toMatchObject({ success: true, data: { steering: ["S-a", "S-b"], followUp: ["F-a"] } });
    expect(agent.records.filter((r) => r.type === "queue_update").at(-1)).toEqual({ type: "queue_update", steering: [], followUp: [] });
    expect((await state(agent))["pendingMessageCount"]).toBe(0);
    await agent.waitFor((r) => r.type === "agent_settled", 15_000, from);
    expect((await messages(agent)).map((m) => textOf(m))).toEqual(["", "start", LONG]);
    // A second clear_queue has nothing to return.
    expect((await agent.request({ type: "clear_queue" }))["data"]).toEqual({ steering: [], followUp: [] });
  });

  it("/command of an extension runs at once while the agent streams", async () => {
    const script = writeScript([LONG]);
    const agent = procs.parley(["--model-script", script, "-e", join(AGENT_FIXTURES, "probe.ts")], { env: SLOW });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "start" });
    await agent.waitFor(isDelta("text_delta"), 10_000, from);
    const res = await agent.request({ type: "prompt", message: "/probe now" });
    expect(res["success"]).toBe(true);
    expect(notes(agent, from)).toEqual(["probe now idle=false"]);
    // It ran before the reply finished, and it did not become a user message.
    const note = agent.records.findIndex((r) => r["method"] === "notify");
    const endIdx = agent.records.findIndex((r, i) => i >= from && r.type === "message_end" && msg(r).role === "assistant");
    expect(endIdx === -1 || note < endIdx).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled", 15_000, from);
    expect((await messages(agent)).map((m) => m.role)).toEqual(["system", "user", "assistant"]);
  });

  // Was a bug (both answered success:true, the second dropped, agent_settled too early); fixed while
  // this suite was written.
  it("prompts sent back to back are never silently dropped", async () => {
    const script = writeScript(["first reply", "second reply"]);
    const agent = procs.parley(["--model-script", script]);
    await agent.request({ type: "get_state" });
    const from = agent.records.length;
    agent.sendRaw('{"type":"prompt","id":"race-1","message":"one"}\n{"type":"prompt","id":"race-2","message":"two"}\n');
    const [r1, r2] = [await agent.response("race-1"), await agent.response("race-2")];
    // Settled: every run the two prompts started has ended.
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    const texts = (await messages(agent)).filter((m) => m.role === "user").map((m) => textOf(m));
    expect(r1["success"]).toBe(true);
    // Either refused with a clear error, or accepted and delivered.
    if (r2["success"] === true) expect(texts).toContain("two");
    else expect(String(r2["error"])).toMatch(/streamingBehavior/);
    // agent_settled only once everything has ended.
    const run = agent.records.slice(from);
    const settled = run.findIndex((r) => r.type === "agent_settled");
    expect(settled).toBeGreaterThan(run.map((r) => r.type).lastIndexOf("agent_end"));
  });
});

describe("abort", () => {
  it("mid-stream: the reply ends with stopReason aborted, agent_settled follows, the next prompt works", async () => {
    const script = writeScript([LONG, "after abort"]);
    const agent = procs.parley(["--model-script", script], { env: SLOW });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "start" });
    await agent.until(() => agent.records.slice(from).filter(isDelta("text_delta")).length >= 2);
    const res = await agent.request({ type: "abort" });
    expect(res["success"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    const run = agent.records.slice(from);
    const end = msg(run.find((r) => r.type === "message_end" && msg(r).role === "assistant") as Rec);
    expect(end.stopReason).toBe("aborted");
    expect(LONG.startsWith(textOf(end))).toBe(true);
    expect(textOf(end).length).toBeLessThan(LONG.length);
    expect(shape(run.filter((r) => r.type !== "response")).slice(-3)).toEqual(["turn_end", "agent_end", "agent_settled"]);
    expect((await state(agent))["isStreaming"]).toBe(false);
    const next = await runPrompt(agent, "again");
    expect(textOf(msg(next.filter((r) => r.type === "message_end").at(-1) as Rec))).toBe("after abort");
  });

  it("during a bash tool call running an hour's sleep: settles, the tool result is an aborted error, the shell is gone", async () => {
    // Only the abort can end an hour's sleep within the test's ceiling: no clock needed.
    const cwd = tempDir();
    const script = writeScript([call("bash", { command: "sleep 3600; touch after-sleep" }), "never"]);
    const agent = procs.parley(["--model-script", script], { cwd });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "sleep" });
    await agent.waitFor((r) => r.type === "tool_execution_start", 10_000, from);
    await agent.until(() => descendants(agent.child.pid as number).some((p) => /sleep 3600/.test(p.args)));
    const res = await agent.request({ type: "abort" });
    expect(res["success"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    const run = agent.records.slice(from);
    const end = run.find((r) => r.type === "tool_execution_end") as Rec;
    expect(end["isError"]).toBe(true);
    expect(textOf(end["result"])).toMatch(/abort/i);
    const result = msg(run.find((r) => r.type === "message_end" && msg(r).role === "toolResult") as Rec);
    expect(result.isError).toBe(true);
    // The run ends aborted, then settles.
    const assistants = run.filter((r) => r.type === "message_end" && msg(r).role === "assistant").map(msg);
    expect(assistants.at(-1)?.stopReason).toBe("aborted");
    expect(
      run
        .filter((r) => r.type === "message_end")
        .map(msg)
        .some((m) => textOf(m) === "never"),
    ).toBe(false);
    expect(shape(run.filter((r) => r.type !== "response")).slice(-2)).toEqual(["agent_end", "agent_settled"]);
    expect(descendants(agent.child.pid as number).filter((p) => /sleep/.test(p.args))).toEqual([]);
    expect(existsSync(join(cwd, "after-sleep"))).toBe(false);
  });
});

describe("abort and new_session with messages still queued", () => {
  it("abort with a queued follow-up: agent_settled follows, the follow-up stays queued and goes with the next prompt (as in pi)", async () => {
    const agent = procs.parley(["--model-script", writeScript([LONG, "to next", "to follow-up"])], { env: SLOW });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "start" });
    await agent.waitFor(isDelta("text_delta"), 10_000, from);
    await agent.request({ type: "follow_up", message: "queued follow-up" });
    expect((await agent.request({ type: "abort" }, 5000))["success"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled", 2000, from);
    expect(await state(agent)).toMatchObject({ isStreaming: false, pendingMessageCount: 1 });
    const run = await runPrompt(agent, "next");
    expect(run.filter((r) => r.type === "message_end").map((r) => textOf(msg(r)))).toEqual(["next", "to next", "queued follow-up", "to follow-up"]);
    expect((await state(agent))["pendingMessageCount"]).toBe(0);
  });

  it("new_session during a run: the run settles and the old queue does not leak into the new session", async () => {
    const agent = procs.parley(["--model-script", writeScript([LONG, "fresh reply"])], { env: SLOW });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "old session" });
    await agent.waitFor(isDelta("text_delta"), 10_000, from);
    await agent.request({ type: "steer", message: "old steer" });
    expect((await agent.request({ type: "new_session" }, 5000))["data"]).toEqual({ cancelled: false });
    expect(await messages(agent)).toEqual([]);
    const leaked = await runPrompt(agent, "new session");
    // The new session's first run records its system prompt (no text) first, as pi 1.6 does.
    expect(leaked.filter((r) => r.type === "message_end").map((r) => textOf(msg(r)))).toEqual(["", "new session", "fresh reply"]);
    expect((await state(agent))["pendingMessageCount"]).toBe(0);
    // The aborted run settled before the new one started.
    const firstSettled = agent.records.findIndex((r, i) => i >= from && r.type === "agent_settled");
    const secondStart = agent.records.map((r, i) => (i >= from && r.type === "agent_start" ? i : -1)).filter((i) => i >= 0)[1] as number;
    expect(firstSettled).toBeGreaterThan(-1);
    expect(firstSettled).toBeLessThan(secondStart);
  });
});

describe("bad tool calls become error results; the loop goes on", () => {
  it("arguments that break the schema, and an unknown tool name", async () => {
    const cwd = tempDir();
    const script = writeScript([
      {
        toolCalls: [
          { name: "read", arguments: { nopath: 1 } },
          { name: "write", arguments: { path: "x.txt" } },
        ],
      },
      call("no_such_tool", { x: 1 }),
      "still here",
    ]);
    const agent = procs.parley(["--model-script", script], { cwd });
    const run = await runPrompt(agent, "break things");
    const ends = run.filter((r) => r.type === "tool_execution_end");
    expect(ends.map((r) => [r["toolName"], r["isError"]])).toEqual([
      ["read", true],
      ["write", true],
      ["no_such_tool", true],
    ]);
    expect(textOf(ends[0]?.["result"])).toMatch(/path/);
    expect(textOf(ends[1]?.["result"])).toMatch(/content/);
    expect(textOf(ends[2]?.["result"])).toMatch(/no_such_tool/);
    expect(textOf(ends[2]?.["result"])).toMatch(/not found/i);
    expect(existsSync(join(cwd, "x.txt"))).toBe(false);
    const results = run.filter((r) => r.type === "message_end" && msg(r).role === "toolResult").map(msg);
    expect(results.map((m) => m.isError)).toEqual([true, true, true]);
    expect(textOf(msg(run.filter((r) => r.type === "message_end").at(-1) as Rec))).toBe("still here");
    expect(run.some((r) => r.type === "extension_error")).toBe(false);
    expect((await state(agent))["isStreaming"]).toBe(false);
  });
});
