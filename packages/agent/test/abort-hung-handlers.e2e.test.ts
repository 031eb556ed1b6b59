/**
 * An abort ends what it is asked to end even when an extension's handler never returns: the run
 * (its loop waits on handlers of every event) or the preparation of a prompt (input and
 * before_agent_start handlers), and a tool whose execute ignores its signal. pi waits for ever in
 * each. After the abort, each remaining event of the run gives its handlers a grace period (and
 * the tool one), then goes on.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { ROOT, spawnParley } from "./helpers/spawn.js";
import { tempDir, writeScript } from "./fixtures/agent/harness.js";

const HANG = join(ROOT, "packages/agent/test/fixtures/hang-on-event.ts");
const agents = checkedAgents();

const start = (event: string) => {
  const agent = spawnParley(["--model-script", writeScript(["a reply"]), "-e", HANG], { cwd: tempDir(), env: { HANG_EVENT: event } });
  agents.push(agent);
  return agent;
};

describe("abort with a handler that never returns", () => {
  for (const event of ["input", "before_agent_start"]) {
    it(`${event}: the prompt being prepared is not sent, and the agent is idle`, async () => {
      const agent = start(event);
      agent.send({ type: "prompt", message: "hello", id: "p" });
      await agent.until(() => agent.stderr().includes(`entered ${event}`));
      expect((await agent.request({ type: "abort" }))["success"]).toBe(true);
      expect(await agent.response("p")).toMatchObject({ success: false, error: "Aborted while extensions were preparing the prompt: it was not sent" });
      expect(((await agent.request({ type: "get_state" }))["data"] as { isStreaming: boolean }).isStreaming).toBe(false);
    });
  }

  for (const event of ["context", "context_with_system", "turn_start", "message_start", "message_update", "message_end", "turn_end", "agent_end"]) {
    it(`${event}: the run ends and the agent settles`, async () => {
      const agent = start(event);
      expect((await agent.request({ type: "prompt", message: "hello" }))["success"]).toBe(true);
      await agent.until(() => agent.stderr().includes(`entered ${event}`));
      expect((await agent.request({ type: "abort" }))["success"]).toBe(true);
      await agent.waitFor((r) => r.type === "agent_settled");
      expect(((await agent.request({ type: "get_state" }))["data"] as { isStreaming: boolean }).isStreaming).toBe(false);
    });
  }

  it("a tool whose execute ignores its signal: the run ends, the call answered with an error", async () => {
    const script = writeScript([{ text: "calling", toolCalls: [{ name: "hang", arguments: {} }] }, "done"]);
    const agent = spawnParley(["--model-script", script, "-e", HANG], { cwd: tempDir(), env: { HANG_EVENT: "tool" } });
    agents.push(agent);
    expect((await agent.request({ type: "prompt", message: "hello" }))["success"]).toBe(true);
    await agent.until(() => agent.stderr().includes("entered tool"));
    expect((await agent.request({ type: "abort" }))["success"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled");
    const messages = ((await agent.request({ type: "get_messages" }))["data"] as { messages: Record<string, unknown>[] }).messages;
    const result = messages.find((m) => m["role"] === "toolResult");
    expect(result).toMatchObject({ toolName: "hang", isError: true });
    expect(JSON.stringify(result?.["content"])).toContain("Tool hang did not stop when aborted");
  });

  const onceUsable = async (agent: ReturnType<typeof start>) => {
    // Usable after: idle, not compacting, a prompt runs to its end, a new session is answered.
    const state = (await agent.request({ type: "get_state" }))["data"] as { isStreaming: boolean; isCompacting: boolean };
    expect(state).toMatchObject({ isStreaming: false, isCompacting: false });
    const settled = agent.records.filter((r) => r.type === "agent_settled").length;
    expect(await agent.request({ type: "prompt", message: "again" })).toMatchObject({ success: true });
    await agent.until(() => agent.records.filter((r) => r.type === "agent_settled").length > settled);
    expect(await agent.request({ type: "new_session" })).toMatchObject({ success: true });
  };

  const startOnce = (event: string, turns: Parameters<typeof writeScript>[0]) => {
    // A compaction budget of one token: the two-prompt session below has something to compact (pi 1.6 refuses what fits the budget).
    const agentDir = join(tempDir(), "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
    const agent = spawnParley(["--model-script", writeScript(turns), "-e", HANG], {
      cwd: tempDir(),
      env: { HANG_EVENT: event, HANG_ONCE: "1", PI_CODING_AGENT_DIR: agentDir },
    });
    agents.push(agent);
    return agent;
  };

  for (const event of ["tool_call", "tool_result"]) {
    it(`${event} that never settles: abort is answered, the run ends, and the agent is usable after`, async () => {
      const agent = startOnce(event, [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, "after the tool", "again"]);
      expect(await agent.request({ type: "prompt", message: "hello" })).toMatchObject({ success: true });
      await agent.until(() => agent.stderr().includes(`entered ${event}`));
      expect(await agent.request({ type: "abort" })).toMatchObject({ success: true });
      await agent.waitFor((r) => r.type === "agent_settled");
      await onceUsable(agent);
    });
  }

  it("session_before_compact that never settles: abort answers the compact too, and compaction is over", async () => {
    const agent = startOnce("session_before_compact", ["first reply", "second reply", "a summary", "again"]);
    for (const message of ["one", "two"]) {
      const settled = agent.records.filter((r) => r.type === "agent_settled").length;
      await agent.request({ type: "prompt", message });
      await agent.until(() => agent.records.filter((r) => r.type === "agent_settled").length > settled);
    }
    agent.send({ type: "compact", id: "c" });
    await agent.until(() => agent.stderr().includes("entered session_before_compact"));
    expect(await agent.request({ type: "abort" })).toMatchObject({ success: true });
    expect(await agent.response("c")).toMatchObject({ success: false });
    await onceUsable(agent);
  });

  for (const event of ["session_before_switch", "session_shutdown"]) {
    it(`${event} that never settles: abort answers new_session`, async () => {
      const agent = startOnce(event, ["again"]);
      agent.send({ type: "new_session", id: "n" });
      await agent.until(() => agent.stderr().includes(`entered ${event}`));
      expect(await agent.request({ type: "abort" })).toMatchObject({ success: true });
      expect((await agent.response("n"))["type"]).toBe("response");
      await onceUsable(agent);
    });
  }

  it("a command whose handler never settles: abort answers the prompt that ran it", async () => {
    const agent = startOnce("command", ["again"]);
    agent.send({ type: "prompt", message: "/hang", id: "p" });
    await agent.until(() => agent.stderr().includes("entered command"));
    expect(await agent.request({ type: "abort" })).toMatchObject({ success: true });
    expect((await agent.response("p"))["type"]).toBe("response");
    await onceUsable(agent);
  });

  it("stdin EOF with a tool_call handler that never settles: parley exits 0 within the grace", async () => {
    const agent = startOnce("tool_call", [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, "after the tool"]);
    expect(await agent.request({ type: "prompt", message: "hello" })).toMatchObject({ success: true });
    await agent.until(() => agent.stderr().includes("entered tool_call"));
    agent.closeInput();
    expect(await agent.exited).toMatchObject({ code: 0 });
  });
});
