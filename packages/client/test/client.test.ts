/**
 * RpcClient over the in-memory pair, with a fake agent on the other end: correlation, errors,
 * timeouts, aborts, close, events, malformed input.
 */
import { describe, expect, it } from "vitest";
import {
  ConnectionClosedError,
  ListenerError,
  type ProtocolError,
  RequestAbortedError,
  RequestTimeoutError,
  RpcError,
  detectCapabilities,
  type AgentRecord,
  type ClientErrorEvent,
  type ConnectionState,
} from "../src/index.js";
import { connectFake, settle } from "./helpers/fake-agent.js";
import { quietFor } from "../../agent/test/helpers/waits.js";

const STATE = {
  thinkingLevel: "off",
  isStreaming: false,
  isCompacting: false,
  steeringMode: "one-at-a-time",
  followUpMode: "one-at-a-time",
  sessionId: "s-1",
  autoCompactionEnabled: true,
  messageCount: 0,
  pendingMessageCount: 0,
} as const;

describe("requests", () => {
  it("generates ids c-1, c-2, … and resolves each request with its own response, in any order", async () => {
    const { client, agent } = connectFake();
    const state = client.getState();
    const commands = client.getCommands();
    const name = client.setSessionName("n");
    const [s, c, n] = [await agent.command("get_state"), await agent.command("get_commands"), await agent.command("set_session_name")];
    expect([s["id"], c["id"], n["id"]]).toEqual(["c-1", "c-2", "c-3"]);
    expect(n).toEqual({ type: "set_session_name", name: "n", id: "c-3" });
    // Answer in reverse order.
    agent.reply(n);
    agent.reply(c, { commands: [{ name: "x", source: "extension" }] });
    agent.reply(s, STATE);
    await expect(name).resolves.toBeUndefined();
    await expect(commands).resolves.toEqual([{ name: "x", source: "extension" }]);
    await expect(state).resolves.toEqual(STATE);
    expect(client.pendingRequests).toBe(0);
  });

  it("sends exactly the command's fields: optional ones only when given", async () => {
    const { client, agent } = connectFake();
    void client.prompt("hi", { streamingBehavior: "steer" });
    void client.prompt("plain");
    void client.newSession();
    void client.bash("ls", { excludeFromContext: true });
    void client.request({ type: "set_model", provider: "p", modelId: "m" });
    await agent.command("set_model");
    expect(agent.received).toEqual([
      { type: "prompt", message: "hi", streamingBehavior: "steer", id: "c-1" },
      { type: "prompt", message: "plain", id: "c-2" },
      { type: "new_session", id: "c-3" },
      { type: "bash", command: "ls", excludeFromContext: true, id: "c-4" },
      { type: "set_model", provider: "p", modelId: "m", id: "c-5" },
    ]);
  });

  it("an error response rejects with RpcError carrying the command and the agent's text", async () => {
    const { client, agent } = connectFake();
    const result = client.setThinkingLevel("high");
    agent.fail(await agent.command("set_thinking_level"), "Model does not support thinking");
    const error = await result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ command: "set_thinking_level", error: "Model does not support thinking", requestId: "c-1" });
    expect((error as RpcError).isUnknownCommand).toBe(false);
  });

  it("pi's id-less `Unknown command` response settles the oldest pending request of that command", async () => {
    const { client, agent } = connectFake();
    const caps = detectCapabilities(client);
    const state = client.getState();
    await agent.command("get_ui_state");
    agent.write({ type: "response", command: "get_ui_state", success: false, error: "Unknown command: get_ui_state" });
    await expect(caps).resolves.toEqual({ uiState: false, dismissRecords: false });
    agent.reply(await agent.command("get_state"), STATE);
    await expect(state).resolves.toEqual(STATE);
  });

  it("detectCapabilities: parley answers get_ui_state", async () => {
    const { client, agent } = connectFake();
    const caps = detectCapabilities(client);
    const data = { statuses: {}, widgets: {}, notifications: [], pendingDialogs: [] };
    agent.reply(await agent.command("get_ui_state"), data);
    await expect(caps).resolves.toEqual({ uiState: true, dismissRecords: true, uiStateData: data });
  });

  it("timeoutMs rejects with RequestTimeoutError; the late response is ignored", async () => {
    const { client, agent } = connectFake();
    const seen: AgentRecord[] = [];
    client.onAny((r) => seen.push(r));
    const slow = client.getState({ timeoutMs: 30 });
    const command = await agent.command("get_state");
    const error = await slow.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({ command: "get_state", requestId: "c-1", timeoutMs: 30 });
    agent.reply(command, STATE);
    const next = client.getMessages();
    agent.reply(await agent.command("get_messages"), { messages: [] });
    await expect(next).resolves.toEqual([]);
    expect(seen.filter((r) => r.type === "response")).toHaveLength(2); // the late one is visible to onAny only
    expect(client.pendingRequests).toBe(0);
  });

  it("there is no default timeout", async () => {
    const { client, agent } = connectFake();
    const result = client.getState();
    const command = await agent.command("get_state");
    // Nothing may end the request on its own: watch a while, then check it is still pending.
    await quietFor(1000);
    expect(client.pendingRequests).toBe(1);
    agent.reply(command, STATE);
    await expect(result).resolves.toEqual(STATE);
  });

  it("an AbortSignal rejects with RequestAbortedError; the late response is ignored", async () => {
    const { client, agent } = connectFake();
    const controller = new AbortController();
    const result = client.getState({ signal: controller.signal });
    const command = await agent.command("get_state");
    controller.abort(new Error("user left"));
    const error = await result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestAbortedError);
    expect((error as RequestAbortedError).cause).toEqual(new Error("user left"));
    agent.reply(command, STATE);
    await settle();
    expect(client.pendingRequests).toBe(0);
  });

  it("an already aborted signal rejects without sending", async () => {
    const { client, agent } = connectFake();
    await expect(client.getState({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(RequestAbortedError);
    await settle();
    expect(agent.received).toEqual([]);
  });

  it("an unserializable command rejects with a TypeError and nothing is sent", async () => {
    const { client, agent } = connectFake();
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    await expect(client.prompt("x", { images: [cyclic as never] })).rejects.toBeInstanceOf(TypeError);
    await settle();
    expect(agent.received).toEqual([]);
    expect(client.pendingRequests).toBe(0);
  });

  it("bash() streams the output of its own command only", async () => {
    const { client, agent } = connectFake();
    const chunks: string[] = [];
    const result = client.bash("echo hi", { onOutput: (d) => chunks.push(d) });
    const command = await agent.command("bash");
    agent.write({ type: "bash_execution_update", id: "other", delta: "nope" });
    agent.write({ type: "bash_execution_update", id: command["id"], delta: "h" });
    agent.write({ type: "bash_execution_update", id: command["id"], delta: "i\n" });
    const data = { output: "hi\n", exitCode: 0, cancelled: false, truncated: false };
    agent.reply(command, data);
    await expect(result).resolves.toEqual(data);
    expect(chunks).toEqual(["h", "i\n"]);
  });
});

describe("connection state and close", () => {
  it("goes connecting → open → closed", async () => {
    const { client } = connectFake();
    const states: ConnectionState[] = [];
    client.onStateChange((s) => states.push(s));
    expect(client.state).toBe("connecting");
    await client.ready;
    expect(client.state).toBe("open");
    await client.close();
    expect(client.state).toBe("closed");
    expect(states).toEqual(["open", "closed"]);
    await expect(client.closed).resolves.toEqual({ reason: "local" });
  });

  it("close(): every pending request rejects with ConnectionClosedError, later ones too", async () => {
    const { client, agent } = connectFake();
    const pending = [client.getState(), client.prompt("x"), client.getTree()];
    await agent.command("get_tree");
    await client.close();
    for (const p of pending) {
      const error = await p.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionClosedError);
      expect(error).toMatchObject({ reason: "local" });
    }
    await expect(client.getState()).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it("the agent side closing rejects pending requests with reason remote", async () => {
    const { client, agent } = connectFake();
    const pending = client.prompt("/slow");
    await agent.command("prompt");
    await agent.transport.close();
    await expect(pending).rejects.toMatchObject({ name: "ConnectionClosedError", reason: "remote" });
    expect(client.state).toBe("closed");
  });

  it("records written before the close still arrive", async () => {
    const { client, agent } = connectFake();
    const result = client.getState();
    agent.reply(await agent.command("get_state"), STATE);
    void agent.transport.close();
    await expect(result).resolves.toEqual(STATE);
  });
});

describe("events", () => {
  it("on(type) gets only that type, typed; dispose stops it; onAny gets everything", async () => {
    const { client, agent } = connectFake();
    const starts: string[] = [];
    const updates: string[] = [];
    const all: string[] = [];
    const sub = client.on("agent_start", (e) => starts.push(e.type));
    client.on("queue_update", (e) => updates.push(`${e.steering.length}/${e.followUp.length}`));
    client.onAny((r) => all.push(r.type));
    agent.write({ type: "agent_start" });
    agent.write({ type: "queue_update", steering: ["a"], followUp: [] });
    await settle();
    sub.dispose();
    sub.dispose(); // idempotent
    agent.write({ type: "agent_start" });
    agent.write({ type: "some_future_event", x: 1 });
    await settle();
    expect(starts).toEqual(["agent_start"]);
    expect(updates).toEqual(["1/0"]);
    expect(all).toEqual(["agent_start", "queue_update", "agent_start", "some_future_event"]);
  });

  it("extension_ui_error records are events", async () => {
    const { client, agent } = connectFake();
    const errors: unknown[] = [];
    client.on("extension_ui_error", (e) => errors.push([e.code, e.pending]));
    agent.write({ type: "extension_ui_error", id: "x", code: "unknown_id", error: "no such dialog", pending: false });
    await settle();
    expect(errors).toEqual([["unknown_id", false]]);
  });

  it("a listener that throws is reported as ListenerError; the others still run", async () => {
    const { client, agent } = connectFake();
    const errors: ClientErrorEvent[] = [];
    const got: string[] = [];
    client.onError((e) => errors.push(e));
    client.on("agent_start", () => {
      throw new Error("boom");
    });
    client.on("agent_start", (e) => got.push(e.type));
    agent.write({ type: "agent_start" });
    const result = client.getState();
    agent.reply(await agent.command("get_state"), STATE);
    await expect(result).resolves.toEqual(STATE);
    expect(got).toEqual(["agent_start"]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ListenerError);
    expect((errors[0] as ListenerError).cause).toEqual(new Error("boom"));
  });

  it("malformed lines become ProtocolError events, not a crash; blank lines are skipped", async () => {
    const { client, agent } = connectFake();
    const errors: ClientErrorEvent[] = [];
    client.onError((e) => errors.push(e));
    const result = client.getState();
    const command = await agent.command("get_state");
    agent.transport.sendRaw("not json\n");
    agent.transport.sendRaw("[1,2]\n\n   \r\n");
    agent.transport.sendRaw('{"no":"type"}\n');
    agent.transport.sendRaw("null\n");
    // A record split over several writes, with CRLF framing.
    const line = JSON.stringify({ type: "response", id: command["id"], command: "get_state", success: true, data: STATE });
    agent.transport.sendRaw(line.slice(0, 10));
    agent.transport.sendRaw(`${line.slice(10)}\r\n`);
    await expect(result).resolves.toEqual(STATE);
    expect(errors.map((e) => [e.constructor.name, (e as ProtocolError).line])).toEqual([
      ["ProtocolError", "not json"],
      ["ProtocolError", "[1,2]"],
      ["ProtocolError", '{"no":"type"}'],
      ["ProtocolError", "null"],
    ]);
    expect(client.state).toBe("open");
  });
});
