/**
 * `parley --mode web` over the wire, without a browser: the HTTP rules (token, Origin, /health,
 * headers), the routing of records between several connections (responses to their sender,
 * dialogs to all, first answer wins, "answered" dismiss records), a dialog that waits while no
 * connection is open, and @parley/client's WebSocket transport driving the real CLI.
 */
import { RpcClient, webSocketTransport } from "@parley/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectRaw, DEMO, startWeb, START_MS, type RawClient, type Rec, type WebAgent } from "./helpers/web-server.js";

/** The largest WebSocket message this agent takes (its --max-line-bytes). */
const MAX_MESSAGE_BYTES = 256 * 1024;

let agent: WebAgent;
const clients: RawClient[] = [];
const connect = async (options: { origin?: string } = {}): Promise<RawClient> => {
  const client = await connectRaw(agent.wsUrl, options);
  clients.push(client);
  return client;
};

beforeAll(async () => {
  agent = await startWeb(["-e", DEMO, "--max-line-bytes", String(MAX_MESSAGE_BYTES)]);
}, START_MS);

afterAll(async () => {
  for (const client of clients) await client.close();
  await agent?.stop();
  for (const client of clients) expect(client.invalid).toEqual([]);
});

describe("HTTP", { timeout: START_MS }, () => {
  it("prints the URL with its token as the first line of stdout and on stderr", async () => {
    expect(agent.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{20,}$/);
    expect(agent.stdout().split("\n")[0]).toBe(agent.url);
    await expect.poll(() => agent.stderr(), { timeout: START_MS }).toContain(agent.url);
  });

  it("answers /health without a token", async () => {
    const response = await fetch(`${agent.origin}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });

  it("refuses the page and its assets without the right token (401)", async () => {
    for (const path of ["/", "/app.js", "/app.css", "/nothing"]) {
      expect((await fetch(`${agent.origin}${path}`)).status).toBe(401);
      expect((await fetch(`${agent.origin}${path}?token=wrong`)).status).toBe(401);
    }
    const bearer = await fetch(`${agent.origin}/app.js`, { headers: { authorization: `Bearer ${agent.token}` } });
    expect(bearer.status).toBe(200);
  });

  it("serves the page with a strict CSP and nosniff", async () => {
    const response = await fetch(agent.url);
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    const html = await response.text();
    expect(html).not.toMatch(/<script>(?!<\/script>)|<script[^>]*>[^<]+<\/script>/);
    expect(html).toContain('src="/app.js?token=');
    const script = await fetch(`${agent.origin}/app.js?token=${agent.token}`);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(script.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("refuses a WebSocket without the token (401) or from a foreign Origin (403)", async () => {
    await expect(connectRaw(agent.wsUrl.replace(/token=[^&]+/, "token=wrong"))).rejects.toThrow("HTTP 401");
    await expect(connectRaw(agent.wsUrl.replace(/\?token=[^&]+/, ""))).rejects.toThrow("HTTP 401");
    await expect(connectRaw(agent.wsUrl, { origin: "http://evil.example" })).rejects.toThrow("HTTP 403");
    const own = await connect({ origin: agent.origin });
    expect((await own.request({ type: "get_state" }))["success"]).toBe(true);
  });

  it("refuses a non-loopback host without a token", async () => {
    await expect(startWeb(["--web-host", "0.0.0.0", "--web-token", ""])).rejects.toThrow(/exited \(1\)[\s\S]*needs a token/);
  });
});

describe("several connections", { timeout: START_MS }, () => {
  it("sends a response only to the connection that sent the command, with its own id", async () => {
    const a = await connect();
    const b = await connect();
    const fromB = b.records.length;
    a.send({ type: "get_state", id: "same-id" });
    const response = await a.waitFor((r) => r.type === "response" && r["id"] === "same-id");
    expect(response["command"]).toBe("get_state");
    a.send({ type: "get_state" });
    const noId = await a.waitFor((r) => r.type === "response" && r["command"] === "get_state" && !("id" in r));
    expect(noId["success"]).toBe(true);
    a.send({ type: "no_such_command", id: 7 });
    expect((await a.waitFor((r) => r.type === "response" && r["id"] === 7))["success"]).toBe(false);
    a.socket.send("not json");
    expect((await a.waitFor((r) => r.type === "response" && r["command"] === "parse"))["success"]).toBe(false);
    await b.request({ type: "get_state" });
    expect(b.records.slice(fromB).filter((r) => r.type === "response" && r["id"] !== undefined && String(r["id"]).startsWith("raw-") === false)).toEqual([]);
  });

  it("answers every message it cannot take with one error record, to its sender only, and the connection goes on", async () => {
    const a = await connect();
    const b = await connect();
    const fromB = b.records.length;
    // Each: the message as sent, and what the one record it gets back must say.
    const bad: [string | Buffer, (r: Rec) => boolean][] = [
      ["not json", (r) => r.type === "response" && r["command"] === "parse" && r["success"] === false],
      ['{"type":"get_state"', (r) => r.type === "response" && r["command"] === "parse" && r["success"] === false],
      ["[1,2]", (r) => r.type === "response" && r["command"] === "parse" && r["success"] === false],
      ["null", (r) => r.type === "response" && r["command"] === "parse" && r["success"] === false],
      ['"a string"', (r) => r.type === "response" && r["command"] === "parse" && r["success"] === false],
      ['{"type":42}', (r) => r.type === "response" && r["success"] === false],
      ['{"id":"x"}', (r) => r.type === "response" && r["success"] === false && r["id"] === "x"],
      [
        '{"type":"prompt","message":5,"id":"m"}',
        (r) => r.type === "response" && r["success"] === false && r["id"] === "m" && String(r["error"]).includes('"message"'),
      ],
      ['{"type":"set_thinking_level","level":"hot","id":"t"}', (r) => r.type === "response" && r["success"] === false && r["id"] === "t"],
      ['{"type":"get_state","id":{"nested":true}}', (r) => r.type === "response" && r["success"] === false && !("id" in r)],
      ['{"type":"extension_ui_response","id":"no-such-dialog","value":"x"}', (r) => r.type === "extension_ui_error" && r["code"] === "unknown_id"],
      ['{"type":"extension_ui_response","value":"x"}', (r) => r.type === "extension_ui_error" && r["code"] === "invalid_response"],
      // A binary frame holding JSON is a record like a text frame; one that is not UTF-8 is refused.
      [Buffer.from('{"type":"get_state","id":"bin"}'), (r) => r.type === "response" && r["id"] === "bin" && r["success"] === true],
      [Buffer.from([0xff, 0xfe, 0x00, 0x7b]), (r) => r.type === "response" && r["command"] === "parse" && String(r["error"]).includes("UTF-8")],
    ];
    for (const [message, expected] of bad) {
      const from = a.records.length;
      a.socket.send(message);
      // A command after it: its response proves the bad one was answered first, and only once.
      const after = await a.request({ type: "get_state" });
      expect(after["success"]).toBe(true);
      const between = a.records.slice(from, a.records.indexOf(after));
      expect(between, `the reply to ${String(message)}`).toHaveLength(1);
      expect(expected(between[0]!), `the reply to ${String(message)}: ${JSON.stringify(between[0])}`).toBe(true);
    }
    expect(a.socket.readyState).toBe(a.socket.OPEN);
    // Nothing of it reached the other connection.
    expect(b.records.slice(fromB).filter((r) => r.type === "response" || r.type === "extension_ui_error")).toEqual([]);
  });

  it("closes only the connection whose message is over the limit (1009), and keeps serving the others", async () => {
    const a = await connect();
    const b = await connect();
    const closed = new Promise<number>((resolve) => a.socket.once("close", (code) => resolve(code)));
    a.socket.send(JSON.stringify({ type: "prompt", message: "x".repeat(MAX_MESSAGE_BYTES), id: "huge" }));
    expect(await closed).toBe(1009);
    expect(a.records.some((r) => r["id"] === "huge")).toBe(false);
    expect((await b.request({ type: "get_state" }))["success"]).toBe(true);
    expect(agent.child.exitCode).toBeNull();
  });

  it("shows a dialog to every connection; the first answer wins, the others get an 'answered' dismiss and a late answer an error", async () => {
    const a = await connect();
    const b = await connect();
    const fromA = a.records.length;
    const fromB = b.records.length;
    a.send({ type: "prompt", message: "/demo-select", id: "p" });
    const requestA = await a.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "select", fromA);
    const requestB = await b.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "select", fromB);
    expect(requestB["id"]).toBe(requestA["id"]);
    const id = requestA["id"];
    b.send({ type: "extension_ui_response", id, value: "green" });
    await a.waitFor((r) => r.type === "extension_ui_dismissed" && r["id"] === id && r["reason"] === "answered", fromA);
    await a.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify" && r["message"] === "select: green", fromA);
    await a.waitFor((r) => r.type === "response" && r["id"] === "p", fromA);
    // The winner gets no dismiss record of its own.
    expect(b.records.slice(fromB).some((r) => r.type === "extension_ui_dismissed" && r["id"] === id)).toBe(false);
    a.send({ type: "extension_ui_response", id, value: "red" });
    const error = await a.waitFor((r) => r.type === "extension_ui_error" && r["id"] === id, fromA);
    expect(error["code"]).toBe("already_resolved");
    await b.request({ type: "get_state" });
    expect(b.records.slice(fromB).some((r) => r.type === "extension_ui_error")).toBe(false);
    // Only the sender got the prompt's response.
    expect(b.records.slice(fromB).some((r) => r.type === "response" && r["id"] === "p")).toBe(false);
  });

  it("keeps a dialog waiting while no connection is open; a later one sees it with its time left and answers it", async () => {
    const a = await connect();
    const from = a.records.length;
    a.send({ type: "prompt", message: "/demo-timed 120000" });
    const request = await a.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "confirm", from);
    for (const client of clients) await client.close();
    const late = await connect();
    const state = await late.request({ type: "get_ui_state" });
    const pending = (state["data"] as { pendingDialogs: { request: { id: string }; remainingMs?: number }[] }).pendingDialogs;
    const entry = pending.find((p) => p.request.id === request["id"]);
    expect(entry?.remainingMs).toBeGreaterThan(0);
    expect(entry?.remainingMs).toBeLessThanOrEqual(120_000);
    const fromLate = late.records.length;
    late.send({ type: "extension_ui_response", id: request["id"], confirmed: true });
    await late.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify" && r["message"] === "timed confirm: true", fromLate);
  });
});

describe("@parley/client over a WebSocket", { timeout: START_MS }, () => {
  it("drives web mode like RPC mode: commands, dialogs, events", async () => {
    const client = new RpcClient(webSocketTransport(agent.wsUrl));
    try {
      await client.transport.opened;
      client.ui.handle("select", (request) => request.options[2]);
      const notes: string[] = [];
      client.on("extension_ui_request", (record) => {
        if (record.method === "notify") notes.push(record.message);
      });
      expect((await client.getState()).isStreaming).toBe(false);
      await client.prompt("/demo-select");
      expect(notes).toContain("select: blue");
    } finally {
      await client.close();
    }
  });
});
