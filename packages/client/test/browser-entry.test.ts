/**
 * The browser entry (`@parley/client/browser`, and the `browser` condition of `@parley/client`):
 * what it bundles for a browser (no Node API, not `ws`), the event table whose completeness the
 * compiler checks, and the responses that answer no request.
 */
import { build } from "esbuild";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { onEvents, WebSocketTransport, type AgentEventType, type EventTable, type ResponseRecord } from "../src/browser.js";
import { connectFake, settle } from "./helpers/fake-agent.js";

const clientRoot = join(import.meta.dirname, "..");

/** esbuild's browser bundle of `entry` (resolved from the web package, as the page's build does): the files it took in. */
async function browserInputs(entry: string): Promise<string[]> {
  const result = await build({
    stdin: { contents: `export * from ${JSON.stringify(entry)};`, resolveDir: join(clientRoot, "../web"), loader: "js" },
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  return Object.keys(result.metafile.inputs);
}

describe("the browser entry", () => {
  it("bundles for a browser with no Node built-in and without ws, through either name", async () => {
    for (const entry of ["@parley/client/browser", "@parley/client"]) {
      // A `node:` import fails a browser build; `ws` would be taken in by the dynamic import.
      const inputs = await browserInputs(entry);
      expect(inputs.some((input) => input.endsWith("client/dist/browser.js"))).toBe(true);
      expect(inputs.filter((input) => input.includes("node_modules/ws/") || input.includes("jsonl.js") || input.includes("spawn.js"))).toEqual([]);
    }
  });

  it("its WebSocket transport closes with a clear error where there is no WebSocket class", async () => {
    const original = globalThis.WebSocket;
    // Node 22+ has a global WebSocket; a browser entry must not reach for `ws` without one.
    Reflect.deleteProperty(globalThis, "WebSocket");
    try {
      const transport = new WebSocketTransport("ws://127.0.0.1:9/ws");
      const info = await transport.closed;
      expect(info.reason).toBe("error");
      expect(info.error?.message).toContain("no WebSocket class");
      await expect(transport.opened).rejects.toThrow();
    } finally {
      globalThis.WebSocket = original;
    }
  });
});

/** A table that records what reached it. */
function recordingTable(seen: string[]): EventTable {
  const note = (type: AgentEventType) => () => void seen.push(type);
  return {
    agent_start: note("agent_start"),
    agent_end: note("agent_end"),
    agent_settled: note("agent_settled"),
    turn_start: null,
    turn_end: null,
    message_start: note("message_start"),
    message_update: (event) => void seen.push(`message_update:${event.assistantMessageEvent.type}`),
    message_end: note("message_end"),
    tool_execution_start: (event) => void seen.push(`tool_execution_start:${event.toolName}`),
    tool_execution_update: null,
    tool_execution_end: null,
    bash_execution_update: null,
    queue_update: null,
    compaction_start: null,
    compaction_end: null,
    auto_retry_start: null,
    auto_retry_end: null,
    extension_error: null,
    session_info_changed: null,
    entry_appended: null,
    thinking_level_changed: null,
    summarization_retry_scheduled: null,
    summarization_retry_attempt_start: null,
    summarization_retry_finished: null,
    extension_ui_request: (event) => void seen.push(`extension_ui_request:${event.method}`),
    extension_ui_dismissed: (event) => void seen.push(`extension_ui_dismissed:${event.id}`),
    extension_ui_error: null,
  };
}

describe("onEvents", () => {
  it("hands each record to its type's handler, in order; null types and responses reach none; dispose stops it", async () => {
    const { client, agent } = connectFake();
    client.ui.onDialog(() => {});
    const seen: string[] = [];
    const subscription = onEvents(client, recordingTable(seen));
    agent.write({ type: "agent_start" });
    agent.write({ type: "turn_start" });
    agent.write({ type: "message_update", message: {}, usage: {}, assistantMessageEvent: { type: "text_delta", delta: "x" } });
    agent.write({ type: "tool_execution_start", toolCallId: "t", toolName: "read", args: {} });
    agent.write({ type: "extension_ui_request", id: "n", method: "notify", message: "hi" });
    agent.write({ type: "extension_ui_dismissed", id: "d", reason: "timeout" });
    agent.write({ type: "response", command: "get_state", success: true, data: {} });
    agent.write({ type: "agent_settled" });
    await settle();
    expect(seen).toEqual([
      "agent_start",
      "message_update:text_delta",
      "tool_execution_start:read",
      "extension_ui_request:notify",
      "extension_ui_dismissed:d",
      "agent_settled",
    ]);
    subscription.dispose();
    agent.write({ type: "agent_start" });
    await settle();
    expect(seen).toHaveLength(6);
  });

  it("requires every event type: a table that leaves one out does not compile", () => {
    const { agent_start: _left, ...rest } = recordingTable([]);
    // @ts-expect-error agent_start is missing: a front end must handle or ignore (null) every event.
    const incomplete: EventTable = rest;
    expect(Object.keys(incomplete)).not.toContain("agent_start");
  });
});

describe("onUnmatchedResponse", () => {
  it("gets responses that answer no pending request (unsolicited, late), not the ones that do", async () => {
    const { client, agent } = connectFake();
    const unmatched: ResponseRecord[] = [];
    client.onUnmatchedResponse((response) => unmatched.push(response));
    const state = client.getState({ timeoutMs: 0 });
    await expect(state).rejects.toThrow();
    const late = await agent.command("get_state");
    agent.reply(late, {});
    agent.write({ type: "response", command: "parse", success: false, error: "not JSON" });
    const names = client.getCommands();
    agent.reply(await agent.command("get_commands"), { commands: [] });
    await expect(names).resolves.toEqual([]);
    await settle();
    expect(unmatched.map((response) => [response.command, response.success])).toEqual([
      ["get_state", true],
      ["parse", false],
    ]);
  });
});
