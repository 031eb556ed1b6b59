/**
 * Bugs found by driving the built CLI side by side with pi 0.73.1 over raw stdin/stdout, one
 * describe per class of bug. Each test waits for events, never for time.
 *
 * - Commands pi runs concurrently must not be refused: two `bash` commands at once both run (pi
 *   keeps a set of them, and abort_bash cancels every one), and two `compact` commands arriving
 *   together while a run streams never answer "already running" (a check, then an await, then
 *   the act: the second request slipped in between).
 * - A session switch while a run streams acts on the session as it was when the command came: clone
 *   copies the branch up to the leaf it names to session_before_fork (pi captures it on receipt),
 *   not the tail the aborted run appends afterwards.
 * - A session switch while the user's shell command runs cancels it (as the newest pi, whose switch
 *   disposes the old session's commands), and the result is recorded in the session it started
 *   in: it used to keep running and land in the next session.
 * - A prompt still being prepared (its input handlers, the loop loading, before_agent_start) when a
 *   session switch comes is refused ("the session was switched"): it used to start afterwards, in
 *   the new session, which then held the old session's prompt and a running tool.
 * - Paths sent over the wire are read as the newest pi reads them: `~/…` is the home folder and a
 *   `file://` URL is its path (export_html wrote `./~/x.html`; switch_session could not open them).
 * - `abort` ends everything in progress, a compaction included (as the newest pi): a manual
 *   `compact` waiting on its session_before_compact handler answers "Compaction cancelled" and
 *   appends nothing; it used to go on and compact after the abort was answered.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { PARLEY_BIN, ROOT, spawnAgent, spawnParley, type AgentProcess, type Rec, type SpawnOptions } from "./helpers/spawn.js";

const OFFLINE = join(ROOT, "packages/agent/test/fixtures/offline-provider.ts");
const offlineArgs = ["-e", OFFLINE, "--provider", "offline", "--model", "echo"];

/**
 * An agent directory of its own whose settings give a compaction a budget of one token: pi 1.6
 * refuses to compact a session that fits keepRecentTokens, and these sessions are small.
 */
function tightCompaction(): SpawnOptions {
  const dir = mkdtempSync(join(tmpdir(), "parley-wire-hunt-agent-"));
  writeFileSync(join(dir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return { env: { PI_CODING_AGENT_DIR: dir } };
}

const messagesOf = async (agent: AgentProcess): Promise<Rec[]> => ((await agent.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;

describe("commands pi runs concurrently", () => {
  const agent = spawnParley(offlineArgs, tightCompaction());
  afterAll(() => agent.kill());

  it("a second bash runs while the first one is still running, and abort_bash cancels every running one", async () => {
    agent.send({ type: "bash", id: "long-1", command: "echo first; sleep 3600" });
    await agent.waitFor((r) => r.type === "bash_execution_update" && r["id"] === "long-1");
    // A short one meanwhile: it runs and answers while long-1 still runs.
    agent.send({ type: "bash", id: "short", command: "echo second" });
    expect(await agent.response("short")).toMatchObject({ success: true, data: { output: "second\n", exitCode: 0, cancelled: false } });
    agent.send({ type: "bash", id: "long-2", command: "echo third; sleep 3600" });
    await agent.waitFor((r) => r.type === "bash_execution_update" && r["id"] === "long-2");
    expect(agent.records.some((r) => r.type === "response" && r["id"] === "long-1")).toBe(false);
    // One abort_bash ends both long ones (pi aborts every running command).
    expect(await agent.request({ type: "abort_bash" })).toMatchObject({ success: true });
    expect(await agent.response("long-1")).toMatchObject({ success: true, data: { output: "first\n", cancelled: true } });
    expect(await agent.response("long-2")).toMatchObject({ success: true, data: { output: "third\n", cancelled: true } });
    // All three are in the context (the two aborted ones end in either order).
    const runs = (await messagesOf(agent)).filter((m) => m["role"] === "bashExecution").map((m) => String(m["command"]));
    expect(runs[0]).toBe("echo second");
    expect(runs.slice(1).sort()).toEqual(["echo first; sleep 3600", "echo third; sleep 3600"]);
  });

  it("two compact commands sent together while a run streams: each answered once, none refused as already running", async () => {
    const from = agent.records.length;
    agent.send({ type: "prompt", id: "warm", message: "Reply with just: warm" });
    await agent.waitFor((r) => r.type === "agent_end", undefined, from);
    agent.send({ type: "prompt", id: "sleepy", message: "please sleep" });
    await agent.waitFor((r) => r.type === "tool_execution_start", undefined, from);
    agent.sendRaw(`${JSON.stringify({ type: "compact", id: "c1" })}\n${JSON.stringify({ type: "compact", id: "c2" })}\n`);
    const [c1, c2] = [await agent.response("c1"), await agent.response("c2")];
    for (const response of [c1, c2]) expect(String(response["error"] ?? "")).not.toMatch(/already running/);
    // The later request wins; the earlier one either finished first or was cancelled by it.
    expect(c2).toMatchObject({ success: true, data: { summary: expect.stringContaining("Summary of the conversation.") } });
    if (c1["success"] !== true) expect(c1["error"]).toMatch(/cancel/i);
    expect(agent.records.filter((r) => r.type === "response" && (r["id"] === "c1" || r["id"] === "c2"))).toHaveLength(2);
    const state = (await agent.request({ type: "get_state" }))["data"] as Rec;
    expect(state).toMatchObject({ isStreaming: false, isCompacting: false });
    // And the agent goes on.
    const next = agent.records.length;
    agent.send({ type: "prompt", id: "after", message: "Reply with just: after" });
    const end = await agent.waitFor((r) => r.type === "agent_end", undefined, next);
    expect(JSON.stringify(end)).toContain("after");
  });
});

describe("a session switch while a run streams", () => {
  const agent = spawnParley(offlineArgs);
  afterAll(() => agent.kill());

  it("clone copies the branch as it was when the command came (the entry session_before_fork names), not the aborted turn's tail", async () => {
    const from = agent.records.length;
    agent.send({ type: "prompt", id: "warm", message: "Reply with just: warm" });
    await agent.waitFor((r) => r.type === "agent_end", undefined, from);
    agent.send({ type: "prompt", id: "sleepy", message: "please sleep" });
    await agent.waitFor((r) => r.type === "tool_execution_start", undefined, from);
    // The leaf now is the assistant message that called the tool (as in pi: the runtime captures it on receipt).
    const entries = (await agent.request({ type: "get_entries" }))["data"] as { entries: Rec[]; leafId: string };
    const leaf = entries.entries.find((e) => e["id"] === entries.leafId);
    expect(leaf?.["message"]).toMatchObject({ role: "assistant" });
    expect(await agent.request({ type: "clone" })).toMatchObject({ success: true, data: { cancelled: false } });
    const roles = (await messagesOf(agent)).map((m) => m["role"]);
    expect(roles).toEqual(["system", "user", "assistant", "user", "assistant"]);
    expect((await agent.request({ type: "get_state" }))["data"]).toMatchObject({ isStreaming: false, messageCount: 5 });
  });
});

describe("a session switch right behind a prompt", () => {
  const agent = spawnParley(offlineArgs);
  afterAll(() => agent.kill());

  it("a prompt still being prepared when new_session comes never runs in the new session", async () => {
    // One write: the switch arrives while the prompt is being prepared (its loop still loading).
    agent.sendRaw(`${JSON.stringify({ type: "prompt", id: "early", message: "please sleep" })}\n${JSON.stringify({ type: "new_session", id: "switch" })}\n`);
    expect(await agent.response("switch")).toMatchObject({ success: true, data: { cancelled: false } });
    // The prompt is answered once: started (and aborted by the switch) or refused; never running on.
    const early = await agent.response("early");
    expect(agent.records.filter((r) => r.type === "response" && r["id"] === "early")).toHaveLength(1);
    if (early["success"] !== true) expect(early["error"]).toMatch(/session/i);
    expect((await agent.request({ type: "get_state" }))["data"]).toMatchObject({ isStreaming: false, messageCount: 0 });
    expect(await messagesOf(agent)).toEqual([]);
    // The new session works.
    const from = agent.records.length;
    agent.send({ type: "prompt", id: "next", message: "Reply with just: fresh" });
    await agent.waitFor((r) => r.type === "agent_end", undefined, from);
    expect((await messagesOf(agent)).map((m) => m["role"])).toEqual(["system", "user", "assistant"]);
  });
});

describe("a prompt right behind a session switch", () => {
  const agent = spawnParley(offlineArgs);
  afterAll(() => agent.kill());

  it("new_session then prompt and follow_up in one write: the switch goes first, both land in the new session", async () => {
    agent.send({ type: "prompt", id: "old", message: "Reply with just: old" });
    await agent.waitFor((r) => r.type === "agent_end");
    const from = agent.records.length;
    agent.sendRaw(
      [
        { type: "new_session", id: "switch" },
        { type: "prompt", id: "fresh", message: "Reply with just: fresh" },
        { type: "follow_up", id: "later", message: "Reply with just: later" },
      ]
        .map((c) => `${JSON.stringify(c)}\n`)
        .join(""),
    );
    expect(await agent.response("switch")).toMatchObject({ success: true, data: { cancelled: false } });
    expect(await agent.response("fresh")).toMatchObject({ success: true });
    expect(await agent.response("later")).toMatchObject({ success: true });
    // The follow-up runs after the prompt, in the same run.
    await agent.waitFor((r) => r.type === "agent_end", undefined, from);
    const users = (await messagesOf(agent)).filter((m) => m["role"] === "user").map((m) => JSON.stringify(m["content"]));
    expect(users).toHaveLength(2);
    expect(users[0]).toContain("fresh");
    expect(users[1]).toContain("later");
  });
});

describe("a session switch while a message waits on its input handler", () => {
  const agent = spawnParley([...offlineArgs, "-e", join(ROOT, "packages/agent/test/fixtures/input-gate.ts")]);
  afterAll(() => agent.kill());

  for (const [kind, command] of [
    ["prompt", { type: "prompt", message: "Reply with just: gate" }],
    ["follow_up during a run", { type: "follow_up", message: "Reply with just: gate" }],
  ] as const) {
    it(`${kind}: let through after the switch, it is refused, and the new session stays empty`, async () => {
      const from = agent.records.length;
      if (kind !== "prompt") {
        agent.send({ type: "prompt", id: `run-${kind}`, message: "please sleep" });
        await agent.waitFor((r) => r.type === "tool_execution_start", undefined, from);
      }
      agent.send({ ...command, id: `gated-${kind}` });
      const dialog = await agent.waitFor((r) => r.type === "extension_ui_request" && r["title"] === "Send?", undefined, from);
      expect(await agent.request({ type: "new_session" })).toMatchObject({ success: true, data: { cancelled: false } });
      agent.send({ type: "extension_ui_response", id: dialog["id"], confirmed: true });
      expect(await agent.response(`gated-${kind}`)).toMatchObject({ success: false, error: expect.stringMatching(/session was switched/) });
      expect((await agent.request({ type: "get_state" }))["data"]).toMatchObject({ isStreaming: false, messageCount: 0, pendingMessageCount: 0 });
    });
  }
});

describe("a session switch while the user's shell command runs", () => {
  // A persisted session, so the test can go back to it.
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", ...offlineArgs]);
  afterAll(() => agent.kill());

  it("new_session cancels the running command, which is recorded in the session it started in, not the new one", async () => {
    const first = (await agent.request({ type: "get_state" }))["data"] as Rec;
    expect(await agent.request({ type: "prompt", message: "Reply with just: kept" })).toMatchObject({ success: true });
    await agent.waitFor((r) => r.type === "agent_end");
    agent.send({ type: "bash", id: "long", command: "echo started; sleep 3600" });
    await agent.waitFor((r) => r.type === "bash_execution_update" && r["id"] === "long");
    expect(await agent.request({ type: "new_session" })).toMatchObject({ success: true, data: { cancelled: false } });
    expect(await agent.response("long")).toMatchObject({ success: true, data: { output: "started\n", cancelled: true } });
    expect(await messagesOf(agent)).toEqual([]);
    // A prompt in the new session does not see it either.
    expect(await agent.request({ type: "get_state" })).toMatchObject({ data: { messageCount: 0 } });
    // It is in the first session, after what was there.
    expect(await agent.request({ type: "switch_session", sessionPath: first["sessionFile"] })).toMatchObject({ success: true });
    const roles = (await messagesOf(agent)).map((m) => `${String(m["role"])}${m["role"] === "bashExecution" ? `:${String(m["cancelled"])}` : ""}`);
    expect(roles).toEqual(["system", "user", "assistant", "bashExecution:true"]);
  });

  it("a command that ended during a run (its recording deferred until the run ends) stays with its session when a switch ends the run", async () => {
    const before = (await agent.request({ type: "get_state" }))["data"] as Rec;
    const from = agent.records.length;
    agent.send({ type: "prompt", id: "sleepy", message: "please sleep" });
    await agent.waitFor((r) => r.type === "tool_execution_start", undefined, from);
    expect(await agent.request({ type: "bash", command: "echo during-the-run" })).toMatchObject({ success: true, data: { output: "during-the-run\n" } });
    expect(await agent.request({ type: "new_session" })).toMatchObject({ success: true });
    expect(await messagesOf(agent)).toEqual([]);
    expect(await agent.request({ type: "switch_session", sessionPath: before["sessionFile"] })).toMatchObject({ success: true });
    const commands = (await messagesOf(agent)).filter((m) => m["role"] === "bashExecution").map((m) => m["command"]);
    expect(commands.at(-1)).toBe("echo during-the-run");
  });
});

describe("abort while a compaction is in progress", () => {
  const agent = spawnParley([...offlineArgs, "-e", join(ROOT, "packages/agent/test/fixtures/compact-gate.ts")], tightCompaction());
  afterAll(() => agent.kill());

  it("cancels it: compact answers Compaction cancelled and nothing is compacted", async () => {
    const from = agent.records.length;
    agent.send({ type: "prompt", id: "warm", message: "Reply with just: warm" });
    await agent.waitFor((r) => r.type === "agent_end", undefined, from);
    agent.send({ type: "compact", id: "gated" });
    const dialog = await agent.waitFor((r) => r.type === "extension_ui_request" && r["title"] === "Compact?", undefined, from);
    expect(await agent.request({ type: "abort" })).toMatchObject({ success: true });
    // The handler lets it go ahead only now: the abort came first.
    agent.send({ type: "extension_ui_response", id: dialog["id"], confirmed: true });
    expect(await agent.response("gated")).toMatchObject({ success: false, error: expect.stringMatching(/cancel/i) });
    const end = await agent.waitFor((r) => r.type === "compaction_end", undefined, from);
    expect(end).toMatchObject({ aborted: true });
    expect((await messagesOf(agent)).map((m) => m["role"])).toEqual(["system", "user", "assistant"]);
    expect((await agent.request({ type: "get_state" }))["data"]).toMatchObject({ isCompacting: false, isStreaming: false });
  });
});

describe("paths sent over the wire", () => {
  // A persisted session (there is a file to switch to); its HOME is the agent's working directory.
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", ...offlineArgs]);
  afterAll(() => agent.kill());

  it("export_html and switch_session expand ~ and read file:// URLs, as pi", async () => {
    const home = ((await agent.request({ type: "bash", command: 'printf %s "$HOME"' }))["data"] as { output: string }).output;
    expect(home).not.toBe("");
    const from = agent.records.length;
    agent.send({ type: "prompt", id: "one", message: "Reply with just: one" });
    await agent.waitFor((r) => r.type === "agent_end", undefined, from);
    expect(await agent.request({ type: "export_html", outputPath: "~/wire-hunt-export.html" })).toMatchObject({
      success: true,
      data: { path: join(home, "wire-hunt-export.html") },
    });
    expect(existsSync(join(home, "~"))).toBe(false);
    const state = (await agent.request({ type: "get_state" }))["data"] as Rec;
    const file = String(state["sessionFile"]);
    expect(file.startsWith(`${home}/`)).toBe(true);
    for (const sessionPath of [`~/${relative(home, file)}`, pathToFileURL(file).href]) {
      expect(await agent.request({ type: "new_session" })).toMatchObject({ success: true });
      expect(await agent.request({ type: "switch_session", sessionPath })).toMatchObject({ success: true, data: { cancelled: false } });
      expect((await agent.request({ type: "get_state" }))["data"]).toMatchObject({ sessionFile: file, messageCount: state["messageCount"] });
    }
  });
});
