/**
 * The newest pi's run boundaries through the spawned CLI: turn_end with the turn's entry ids and
 * BoundaryState, agent_before_settle, entry drafts appended (entry_appended) and continuations.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AGENT_FIXTURES,
  call,
  isDelta,
  messages,
  notes,
  processRegistry,
  runPrompt,
  SLOW,
  tempDir,
  textOf,
  writeScript,
  type Turn,
} from "./fixtures/agent/harness.js";
import type { AgentProcess, Rec } from "./helpers/spawn.js";

const procs = processRegistry();
const MINUTE = 60_000;

function start(mode: string, replies: Turn[], env: NodeJS.ProcessEnv = {}): AgentProcess {
  const args = ["--mode", "rpc", "--no-session", "--model-script", writeScript(replies), "-e", join(AGENT_FIXTURES, "run-boundary.js")];
  return procs.raw(args, { cwd: tempDir(), env: { ...process.env, ...env, BOUNDARY_MODE: mode } });
}

interface Report {
  turns: Rec[];
  settles: Rec[];
  contexts: string[][];
  ends: number;
}

async function report(agent: AgentProcess): Promise<Report> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "/boundary-report" }, MINUTE);
  return JSON.parse(notes(agent, from)[0] as string) as Report;
}

const errors = (agent: AgentProcess) => agent.records.filter((r) => r.type === "extension_error").map((r) => [r["event"], r["error"]]);

describe("turn_end (newest pi)", () => {
  it("names the session entries of the turn's assistant message and tool results, with the outcome and a context preview", async () => {
    const agent = start("", [call("ls", {}), "done"]);
    await runPrompt(agent, "list", MINUTE);
    const { turns, settles } = await report(agent);
    expect(turns).toEqual([
      {
        turnIndex: 0,
        outcome: "completed",
        entryRole: "assistant",
        toolResultRoles: ["toolResult"],
        toolResults: 1,
        entries: [],
        continue: false,
        // A tool result awaits an answer: another request can follow.
        canContinue: true,
        lastLlmRole: "toolResult",
        // The system message the run recorded (as pi 1.6), the prompt, the call, its result.
        contextEntryTypes: ["message", "message", "message", "message"],
        pending: 0,
      },
      {
        turnIndex: 1,
        outcome: "completed",
        entryRole: "assistant",
        toolResultRoles: [],
        toolResults: 0,
        entries: [],
        continue: false,
        canContinue: false,
        lastLlmRole: "assistant",
        contextEntryTypes: ["message", "message", "message", "message", "message"],
        pending: 0,
      },
    ]);
    // Without a proposal agent_before_settle still fires once per settling run (two handlers).
    expect(settles).toEqual([
      { outcome: "completed", canContinue: false, entries: 0 },
      { second: true, continue: false, entryTypes: [], canContinue: false, lastContext: "assistant" },
    ]);
    expect(errors(agent)).toEqual([]);
  });

  it("shows a steering message that waits for the loop in the preview's pendingMessages", async () => {
    const long = Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ");
    const agent = start("", [long, "steered"], SLOW);
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "go" }, MINUTE);
    await agent.until(() => agent.records.slice(from).filter(isDelta("text_delta")).length >= 2, MINUTE);
    expect((await agent.request({ type: "steer", message: "also this" }, MINUTE))["success"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled", MINUTE, from);
    const { turns } = await report(agent);
    expect(turns.map((t) => [t["turnIndex"], t["pending"], t["canContinue"]])).toEqual([
      [0, 1, true],
      [1, 0, false],
    ]);
    expect(errors(agent)).toEqual([]);
  });

  it("appends a handler's drafts before the client's turn_end and makes the one more request it asked for", async () => {
    const agent = start("turn-continue", ["first", "second"]);
    const run = await runPrompt(agent, "go", MINUTE);
    const types = run.map((r) => r.type);
    const appended = run.find((r) => r.type === "entry_appended");
    expect(appended?.["entry"]).toMatchObject({ type: "custom_message", customType: "nudge", content: "Say more.", display: false });
    // Announced before the turn's turn_end, as pi does it.
    expect(types.indexOf("entry_appended")).toBeLessThan(types.indexOf("turn_end"));
    // One run, as pi's loop makes it: the continuation is a next turn, not a new agent_start.
    expect(types.filter((t) => t === "agent_start" || t === "agent_end" || t === "agent_settled" || t === "turn_start")).toEqual([
      "agent_start",
      "turn_start",
      "turn_start",
      "agent_end",
      "agent_settled",
    ]);
    const end = run.find((r) => r.type === "agent_end");
    // The run's messages start with the system message it recorded, as pi 1.6's do.
    expect((end?.["messages"] as { role: string }[]).map((m) => m.role)).toEqual(["system", "user", "assistant", "assistant"]);
    const transcript = (await messages(agent)).map((m) => (m.role === "custom" ? `custom:${textOf(m)}` : `${m.role}:${textOf(m)}`));
    expect(transcript).toEqual(["system:", "user:go", "assistant:first", "custom:Say more.", "assistant:second"]);
    const { contexts, turns } = await report(agent);
    expect(turns.map((t) => t["turnIndex"])).toEqual([0, 1]);
    // The second request saw the appended message.
    expect(contexts).toEqual([["user"], ["user", "assistant", "custom:nudge"]]);
    expect(errors(agent)).toEqual([]);
  });

  it("a context_edit leaves the turn's answer out of the context, the session keeps it, and the run continues from the edited context", async () => {
    const agent = start("edit", ["first", "second"]);
    const run = await runPrompt(agent, "go", MINUTE);
    const appended = run.filter((r) => r.type === "entry_appended").map((r) => r["entry"] as Rec);
    expect(appended.map((e) => e["type"])).toEqual(["context_edit", "custom_message"]);
    const answered = run.find((r) => r.type === "message_end" && (r["message"] as Rec)["role"] === "assistant");
    expect(appended[0]).toMatchObject({ replacement: null });
    // The model's second request did not see the first answer.
    const { contexts } = await report(agent);
    expect(contexts).toEqual([["user"], ["user", "custom:again"]]);
    // The context (get_messages) leaves it out; the session keeps it (get_entries).
    expect((await messages(agent)).map((m) => `${m.role}:${textOf(m)}`)).toEqual(["system:", "user:go", "custom:Answer again.", "assistant:second"]);
    const entries = ((await agent.request({ type: "get_entries" }))["data"] as { entries: Rec[] }).entries;
    const firstAnswer = entries.find((e) => e["type"] === "message" && textOf(e["message"] as Rec) === "first");
    expect(firstAnswer, JSON.stringify(answered)).toBeDefined();
    expect(appended[0]?.["targetId"]).toBe(firstAnswer?.["id"]);
    expect(errors(agent)).toEqual([]);
  });

  it("refuses a proposal parley cannot append (a context_edit of an entry off the branch) as a whole, and a continuation with nothing to answer", async () => {
    const agent = start("invalid", ["only"]);
    const run = await runPrompt(agent, "go", MINUTE);
    expect(run.filter((r) => r.type === "entry_appended")).toEqual([]);
    expect((await messages(agent)).map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    const extensionPath = join(AGENT_FIXTURES, "run-boundary.js");
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([
      {
        type: "extension_error",
        extensionPath,
        event: "turn_end",
        error: "Invalid boundary entries: Entry no-such-entry is not on the active branch",
      },
      {
        type: "extension_error",
        extensionPath: "<boundary>",
        event: "agent_before_settle",
        error: "agent_before_settle requested continuation without runnable model context",
      },
    ]);
  });
});

describe("agent_before_settle (newest pi)", () => {
  it("appends the handlers' drafts in order and continues the run once; later handlers see the proposal and its preview", async () => {
    const agent = start("settle", ["first", "second"]);
    const run = await runPrompt(agent, "go", MINUTE);
    const appended = run.filter((r) => r.type === "entry_appended").map((r) => r["entry"] as Rec);
    expect(appended.map((e) => [e["type"], e["customType"]])).toEqual([
      ["custom_message", "review-reminder"],
      ["custom", "settle-state"],
    ]);
    expect(run.filter((r) => r.type === "agent_settled")).toHaveLength(1);
    const transcript = (await messages(agent)).map((m) => `${m.role}:${textOf(m)}`);
    expect(transcript).toEqual(["system:", "user:go", "assistant:first", "custom:Review the diff.", "assistant:second"]);
    const { settles } = await report(agent);
    expect(settles).toEqual([
      { outcome: "completed", canContinue: false, entries: 0 },
      // The first handler's reminder makes the context end with a user-role message.
      { second: true, continue: true, entryTypes: ["review-reminder"], canContinue: true, lastContext: "custom" },
      // After the continuation the run settles again: nothing more is proposed.
      { outcome: "completed", canContinue: false, entries: 0 },
      { second: true, continue: false, entryTypes: [], canContinue: false, lastContext: "assistant" },
    ]);
    expect(errors(agent)).toEqual([]);
  });

  it("appends a compaction draft that keeps nothing before it: the context is its summary alone, after its snapshot of the recorded prompt", async () => {
    const agent = start("compact", ["first"]);
    const run = await runPrompt(agent, "go", MINUTE);
    const appended = run.filter((r) => r.type === "entry_appended").map((r) => r["entry"] as Rec);
    expect(appended).toHaveLength(1);
    expect(appended[0]).toMatchObject({ type: "compaction", summary: "All of it, briefly.", fromHook: true, details: { by: "test" } });
    expect(appended[0]).not.toHaveProperty("firstKeptEntryId");
    // As pi 1.6: the compaction snapshots the recorded system prompt before its summary.
    expect((await messages(agent)).map((m) => m.role)).toEqual(["system", "compactionSummary"]);
    const { settles } = await report(agent);
    // The second handler saw the summary as the context's last message: a request could follow.
    expect(settles[1]).toEqual({ second: true, continue: false, entryTypes: [null], canContinue: true, lastContext: "compactionSummary" });
    expect(errors(agent)).toEqual([]);
  });

  it("is skipped when the run was aborted: turn_end says the outcome, nothing is asked to settle", async () => {
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const agent = start("settle", [long, "after"], SLOW);
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "go" }, MINUTE);
    await agent.until(() => agent.records.slice(from).filter(isDelta("text_delta")).length >= 2, MINUTE);
    expect((await agent.request({ type: "abort" }, MINUTE))["success"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled", MINUTE, from);
    const { turns, settles } = await report(agent);
    expect(turns.map((t) => t["outcome"])).toEqual(["aborted"]);
    expect(settles).toEqual([]);
    expect(agent.records.slice(from).filter((r) => r.type === "entry_appended")).toEqual([]);
    expect(errors(agent)).toEqual([]);
  });

  it("comes after messages an agent_end handler queued have been answered: the run goes on for them first", async () => {
    const agent = start("followup", ["first", "second"]);
    const run = await runPrompt(agent, "go", MINUTE);
    expect(run.filter((r) => r.type === "agent_settled")).toHaveLength(1);
    expect((await messages(agent)).map((m) => `${m.role}:${textOf(m)}`)).toEqual([
      "system:",
      "user:go",
      "assistant:first",
      "user:follow on",
      "assistant:second",
    ]);
    const { settles, ends } = await report(agent);
    expect(ends).toBe(2);
    // agent_before_settle once, when nothing more is queued (two handlers).
    expect(settles).toHaveLength(2);
    expect(errors(agent)).toEqual([]);
  });
});
