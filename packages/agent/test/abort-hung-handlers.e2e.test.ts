/**
 * An abort ends what it is asked to end even when an extension's handler never returns: the run
 * (its loop waits on handlers of every event) or the preparation of a prompt (input and
 * before_agent_start handlers), and a tool whose execute ignores its signal. pi waits for ever in
 * each. After the abort, each remaining event of the run gives its handlers a grace period (and
 * the tool one), then goes on.
 */
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
});
