/**
 * The extension UI sub-protocol's edge paths through the real wire (dialog-hunt): sequences that
 * the main dialog tests (rpc-extension-ui, dialogs-stress, rpc-lifecycle) do not cover.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, writeScript } from "./fixtures/agent/harness.js";
import { checkedAgents } from "./helpers/checked-agents.js";
import { spawnParley, type AgentProcess, type Rec } from "./helpers/spawn.js";

const FIXTURE = join(import.meta.dirname, "fixtures/dialog-hunt.ts");
const agents = checkedAgents();
function start(args: string[] = ["-e", FIXTURE], env?: NodeJS.ProcessEnv): AgentProcess {
  const agent = spawnParley(args, env ? { env: { ...process.env, ...env } } : undefined);
  agents.push(agent);
  return agent;
}

const isNotify = (r: Rec) => r.type === "extension_ui_request" && r["method"] === "notify";
const dialogs = (agent: AgentProcess) =>
  agent.records.filter((r) => r.type === "extension_ui_request" && ["select", "confirm", "input", "editor"].includes(String(r["method"])));

describe("timeouts", () => {
  it("a negative timeout has already run out: the dialog resolves with its default at once and is never shown (it used to wait forever)", async () => {
    const agent = start();
    expect(await agent.request({ type: "prompt", message: "/expired" })).toMatchObject({ success: true });
    expect(agent.records.find(isNotify)?.["message"]).toBe("expired: false");
    expect(dialogs(agent)).toEqual([]);
  });
});

describe("options that are not an object", () => {
  it("null options are no options: the dialog opens and takes its answer (it rejected with a TypeError)", async () => {
    const agent = start();
    agent.send({ type: "prompt", message: "/null-options", id: "n" });
    const confirm = await agent.waitFor((r) => r["method"] === "confirm");
    expect(confirm).not.toHaveProperty("timeout");
    agent.send({ type: "extension_ui_response", id: confirm["id"], confirmed: true });
    await agent.response("n");
    expect(agent.records.find(isNotify)?.["message"]).toBe("null-options: true");
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
  });
});

describe("timeouts that are not numbers", () => {
  it("a numeric string is read as its number (as pi's setTimeout reads it), reported on stderr; other text is dropped (one report per method)", async () => {
    const agent = start();
    agent.send({ type: "prompt", message: "/text-timeout", id: "t1" });
    const select = await agent.waitFor((r) => r["method"] === "select");
    expect(select["timeout"]).toBe(150);
    // Resolved agent-side: without the repair it had no timeout and waited for ever.
    expect(await agent.waitFor((r) => r.type === "extension_ui_dismissed")).toMatchObject({ id: select["id"], reason: "timeout" });
    await agent.response("t1");
    expect(agent.records.find(isNotify)?.["message"]).toBe("text-timeout: undefined");
    await agent.until(() => agent.stderr().includes('ctx.ui.select(): timeout is "150", not a number; read as 150 ms'));

    agent.send({ type: "prompt", message: "/text-timeout soon", id: "t2" });
    const untimed = await agent.waitFor((r) => r["method"] === "select" && r["id"] !== select["id"]);
    expect(untimed).not.toHaveProperty("timeout");
    agent.send({ type: "extension_ui_response", id: untimed["id"], value: "b" });
    await agent.response("t2");
    expect(agent.records.filter(isNotify).at(-1)?.["message"]).toBe("text-timeout: b");
    // One report per extension and method: the second repair is not repeated.
    expect(agent.stderr().split("ctx.ui.select(): timeout is").length - 1).toBe(1);
  });
});

describe("dialogs of a run and of a session switch", () => {
  it("a tool_call gate's dialog tied to ctx.signal is dismissed by the client's abort: the tool is blocked, the run settles, a late answer is refused", async () => {
    const script = writeScript([call("bash", { command: "echo gated" }), "after the gate"]);
    const agent = start(["--model-script", script, "-e", FIXTURE], { DIALOG_HUNT_GATE: "1" });
    agent.send({ type: "prompt", message: "go", id: "go" });
    const gate = await agent.waitFor((r) => r["method"] === "confirm");
    agent.send({ type: "abort", id: "ab" });
    expect(await agent.waitFor((r) => r.type === "extension_ui_dismissed")).toEqual({
      type: "extension_ui_dismissed",
      id: gate["id"],
      method: "confirm",
      reason: "aborted",
    });
    await agent.response("ab");
    await agent.waitFor((r) => r.type === "agent_settled");
    expect(agent.records.find(isNotify)?.["message"]).toBe("gate: false, aborted: true");
    expect(agent.records.find((r) => r.type === "tool_execution_end")).toMatchObject({ isError: true });
    agent.send({ type: "extension_ui_response", id: gate["id"], confirmed: true });
    expect(await agent.waitFor((r) => r.type === "extension_ui_error")).toMatchObject({ id: gate["id"], code: "already_resolved", pending: false });
  });

  it("an abort and an answer in one write: line order decides, whichever comes first", async () => {
    for (const abortFirst of [true, false]) {
      const script = writeScript([call("bash", { command: "echo gated" }), "after the gate"]);
      const agent = start(["--model-script", script, "-e", FIXTURE], { DIALOG_HUNT_GATE: "1" });
      agent.send({ type: "prompt", message: "go", id: "go" });
      const gate = await agent.waitFor((r) => r["method"] === "confirm");
      const abort = JSON.stringify({ type: "abort", id: "ab" });
      const yes = JSON.stringify({ type: "extension_ui_response", id: gate["id"], confirmed: true });
      agent.sendRaw(abortFirst ? `${abort}\n${yes}\n` : `${yes}\n${abort}\n`);
      await agent.response("ab");
      await agent.waitFor((r) => r.type === "agent_settled");
      const notes = agent.records.filter(isNotify).map((r) => r["message"]);
      const dismissed = agent.records.filter((r) => r.type === "extension_ui_dismissed");
      const refused = agent.records.filter((r) => r.type === "extension_ui_error");
      if (abortFirst) {
        expect(notes).toEqual(["gate: false, aborted: true"]);
        expect(dismissed).toMatchObject([{ id: gate["id"], reason: "aborted" }]);
        expect(refused).toMatchObject([{ id: gate["id"], code: "already_resolved", pending: false }]);
      } else {
        expect(notes).toEqual(["gate: true, aborted: true"]);
        expect(dismissed).toEqual([]);
        expect(refused).toEqual([]);
      }
      // Either way the tool did not complete: blocked at the gate, or aborted as it started.
      expect(agent.records.find((r) => r.type === "tool_execution_end")).toMatchObject({ isError: true });
    }
  });

  it("a second new_session while the first waits in session_before_switch: each gets its own dialog and its own answer", async () => {
    const agent = start(["-e", FIXTURE], { DIALOG_HUNT_SWITCH: "1" });
    const before = (await agent.request({ type: "get_state" }))["data"] as Rec;
    agent.send({ type: "new_session", id: "ns1" });
    const first = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Switch?");
    agent.send({ type: "new_session", id: "ns2" });
    const second = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Switch?" && r["id"] !== first["id"]);
    agent.send({ type: "extension_ui_response", id: first["id"], confirmed: false });
    expect((await agent.response("ns1"))["data"]).toEqual({ cancelled: true });
    agent.send({ type: "extension_ui_response", id: second["id"], confirmed: true });
    // The switch runs the old session's session_shutdown, whose dialog the client answers too.
    const save = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Save?");
    agent.send({ type: "extension_ui_response", id: save["id"], confirmed: true });
    expect((await agent.response("ns2"))["data"]).toEqual({ cancelled: false });
    await agent.until(() => agent.stderr().includes("dialog-hunt: shutdown (new) confirm: true"));
    const after = (await agent.request({ type: "get_state" }))["data"] as Rec;
    expect(after["sessionId"]).not.toBe(before["sessionId"]);
  });

  it("stdin ends while session_before_switch waits for its answer: the dialog is dismissed (shutdown), the switch is cancelled and answered, the exit's session_shutdown dialog resolves at once, exit 0", async () => {
    const agent = start(["-e", FIXTURE], { DIALOG_HUNT_SWITCH: "1" });
    agent.send({ type: "new_session", id: "ns" });
    const ask = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Switch?");
    agent.closeInput();
    expect(await agent.exited).toEqual({ code: 0, signal: null });
    expect(agent.records.filter((r) => r.type === "extension_ui_dismissed")).toEqual([
      { type: "extension_ui_dismissed", id: ask["id"], method: "confirm", reason: "shutdown" },
    ]);
    expect(agent.records.find((r) => r["id"] === "ns")).toMatchObject({ success: true, data: { cancelled: true } });
    // The exit's session_shutdown dialog never reached the client: it resolved with its default.
    expect(agent.records.filter((r) => r["title"] === "Save?")).toEqual([]);
    expect(agent.stderr()).toContain("dialog-hunt: shutdown (quit) confirm: false");
  });
});

describe("ctx.ui.theme in RPC mode", () => {
  it('styles nothing: escape getters give "", border colours are functions that return their text, and the theme is not a thenable', async () => {
    const agent = start();
    expect(await agent.request({ type: "prompt", message: "/theme" })).toMatchObject({ success: true });
    expect(JSON.parse(String(agent.records.find(isNotify)?.["message"]))).toEqual({
      styled: "xy",
      escaped: "accented",
      thinking: "thinking",
      bash: "bash",
      same: true,
    });
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
  });
});
