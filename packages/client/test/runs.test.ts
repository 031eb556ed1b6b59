/**
 * run()/waitForIdle() against a fake agent, for what a real one makes hard to hit on purpose:
 * a response and agent_settled in one chunk, and pi's way of ending (no agent_settled).
 */
import { describe, expect, it } from "vitest";
import { connectFake, settle } from "./helpers/fake-agent.js";

const ASSISTANT = { role: "assistant", content: [{ type: "text", text: "hello" }], stopReason: "stop" };

describe("waitForIdle and run against a fake agent", () => {
  it("agent_settled in the same chunk as the get_state response that says streaming is not missed", async () => {
    const { client, agent } = connectFake();
    const waiting = client.waitForIdle();
    agent.reply(await agent.command("get_ui_state"), { statuses: {}, widgets: {}, notifications: [], pendingDialogs: [] });
    const state = await agent.command("get_state");
    const response = JSON.stringify({ type: "response", id: state["id"], command: "get_state", success: true, data: { isStreaming: true } });
    agent.transport.sendRaw(`${response}\n{"type":"agent_settled"}\n`);
    await expect(waiting).resolves.toBeUndefined();
  });

  it("pi (no get_ui_state, no agent_settled): a run ends at an agent_end without willRetry once get_state says idle", async () => {
    const { client, agent } = connectFake();
    let result: unknown;
    const run = client.run("hi").then((r) => (result = r));
    const prompt = await agent.command("prompt");
    agent.reply(prompt);
    agent.fail(await agent.command("get_ui_state"), "Unknown command: get_ui_state");
    const first = await agent.command("get_state");
    agent.reply(first, { isStreaming: true });
    agent.write({ type: "agent_start" });
    agent.write({ type: "message_end", message: { role: "user", content: [{ type: "text", text: "hi" }] } });
    agent.write({ type: "message_end", message: { ...ASSISTANT, stopReason: "error", content: [] } });
    agent.write({ type: "agent_end", messages: [], willRetry: true });
    agent.write({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 10, errorMessage: "503" });
    await settle();
    expect(result).toBeUndefined();
    agent.write({ type: "agent_start" });
    agent.write({ type: "message_end", message: ASSISTANT });
    agent.write({ type: "auto_retry_end", success: true, attempt: 1 });
    agent.write({ type: "agent_end", messages: [] });
    agent.reply(await agent.waitFor((r) => r.type === "get_state" && r["id"] !== first["id"]), { isStreaming: false });
    await run;
    expect(result).toMatchObject({ text: "hello", messages: [{ role: "user" }, { role: "assistant", stopReason: "stop" }] });
  });
});
