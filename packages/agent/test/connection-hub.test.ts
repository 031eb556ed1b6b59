/**
 * The web mode's connection hub in-process, on a real RpcServer with fake sockets: who receives
 * which record, the "answered" dismiss, refusals to their sender, no output lost or misrouted
 * when a connection goes away, and a connection that stops reading cut off.
 */
import { describe, expect, it } from "vitest";
import type { ExtensionAPI } from "../src/index.js";
import { RpcServer } from "../src/modes/rpc/server.js";
import { ConnectionHub, type HubSocket } from "../src/modes/web/connection-hub.js";

type Rec = Record<string, unknown>;

class FakeSocket implements HubSocket {
  readonly received: Rec[] = [];
  bufferedAmount = 0;
  terminated = false;
  send(data: string, callback: (error?: Error) => void): void {
    this.received.push(JSON.parse(data) as Rec);
    queueMicrotask(() => callback());
  }
  terminate(): void {
    this.terminated = true;
  }
}

const demo = (pi: ExtensionAPI): void => {
  pi.registerCommand("ask", {
    description: "a select",
    handler: async (_args, ctx) => {
      const value = await ctx.ui.select("Pick", ["a", "b"]);
      ctx.ui.notify(`picked ${value ?? "nothing"}`);
    },
  });
};

async function setup(options: { maxTotalBufferedBytes?: number } = {}) {
  const hub = new ConnectionHub({ maxBufferedBytes: 1000, ...options });
  const server = new RpcServer({ transport: hub, cwd: process.cwd(), extensions: [{ path: "/ext/demo.ts", factory: demo }], shutdownGraceMs: 200 });
  hub.setDialogs(server.dialogs);
  await server.start();
  const connect = () => {
    const socket = new FakeSocket();
    const connection = hub.add(socket);
    const send = (record: Rec | string): void => connection.receive(typeof record === "string" ? record : JSON.stringify(record));
    return { socket, connection, send };
  };
  const until = async (condition: () => boolean): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error("timed out");
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  return { hub, server, connect, until };
}

describe("ConnectionHub", () => {
  it("routes responses to their sender with the sender's own id, in every shape of command", async () => {
    const { server, connect, until } = await setup();
    const a = connect();
    const b = connect();
    a.send({ type: "get_state", id: "x" });
    b.send({ type: "get_state", id: "x" });
    a.send({ type: "get_state", id: 5 });
    a.send({ type: "get_state" });
    a.send("{not json");
    a.send({ type: "get_state", id: null });
    a.send("   ");
    await until(() => a.socket.received.filter((r) => r["type"] === "response").length === 5);
    const responses = a.socket.received.filter((r) => r["type"] === "response");
    expect(responses.map((r) => r["id"])).toEqual(["x", 5, undefined, undefined, undefined]);
    expect(responses.map((r) => r["success"])).toEqual([true, true, true, false, false]);
    expect(b.socket.received.filter((r) => r["type"] === "response").map((r) => r["id"])).toEqual(["x"]);
    await server.shutdown();
  });

  it("sends dialogs to all; the first answer wins, the rest hear 'answered'; a refusal goes to its sender only", async () => {
    const { server, connect, until } = await setup();
    const a = connect();
    const b = connect();
    const c = connect();
    a.send({ type: "prompt", message: "/ask", id: "p" });
    await until(() => c.socket.received.some((r) => r["method"] === "select"));
    const id = c.socket.received.find((r) => r["method"] === "select")?.["id"];
    for (const x of [a, b]) expect(x.socket.received.some((r) => r["id"] === id && r["method"] === "select")).toBe(true);
    b.send({ type: "extension_ui_response", id, value: "zzz" }); // not an option: refused, still pending
    expect(b.socket.received.at(-1)).toMatchObject({ type: "extension_ui_error", id, code: "invalid_response", pending: true });
    expect(a.socket.received.some((r) => r["type"] === "extension_ui_error")).toBe(false);
    b.send({ type: "extension_ui_response", id, value: "b" });
    for (const x of [a, c])
      expect(x.socket.received.filter((r) => r["type"] === "extension_ui_dismissed")).toEqual([
        { type: "extension_ui_dismissed", id, method: "select", reason: "answered" },
      ]);
    expect(b.socket.received.some((r) => r["type"] === "extension_ui_dismissed")).toBe(false);
    c.send({ type: "extension_ui_response", id, value: "a" });
    expect(c.socket.received.at(-1)).toMatchObject({ type: "extension_ui_error", id, code: "already_resolved" });
    await until(() => a.socket.received.some((r) => r["type"] === "response" && r["id"] === "p"));
    for (const x of [a, b, c]) expect(x.socket.received.some((r) => r["method"] === "notify" && r["message"] === "picked b")).toBe(true);
    expect([b, c].some((x) => x.socket.received.some((r) => r["type"] === "response" && r["id"] === "p"))).toBe(false);
    await server.shutdown();
  });

  it("keeps the routes of a closed connection, so later responses reach nobody else", async () => {
    const { server, connect, until } = await setup();
    const a = connect();
    const b = connect();
    a.send({ type: "prompt", message: "/ask", id: "gone" });
    await until(() => b.socket.received.some((r) => r["method"] === "select"));
    a.connection.close();
    const id = b.socket.received.find((r) => r["method"] === "select")?.["id"];
    b.send({ type: "extension_ui_response", id, value: "a" });
    await until(() => b.socket.received.some((r) => r["message"] === "picked a"));
    b.send({ type: "get_state", id: "after" });
    await until(() => b.socket.received.some((r) => r["id"] === "after"));
    expect(b.socket.received.some((r) => r["id"] === "gone")).toBe(false);
    await server.shutdown();
  });

  it("cuts off a connection that stops reading and keeps serving the others", async () => {
    const { hub, server, connect, until } = await setup();
    const slow = connect();
    const fine = connect();
    slow.socket.bufferedAmount = 10_000;
    fine.send({ type: "prompt", message: "/ask", id: "p" });
    await until(() => fine.socket.received.some((r) => r["method"] === "select"));
    expect(slow.socket.terminated).toBe(true);
    expect(hub.connectionCount).toBe(1);
    await server.shutdown();
  });

  it("hands a stalled socket no more than its high-water mark: the rest waits in the hub, and the cut drops it without failing a write per record", async () => {
    /** A socket whose peer reads nothing: every send stays in its buffer and no callback comes. */
    class StalledSocket implements HubSocket {
      bufferedAmount = 0;
      sends = 0;
      terminated = false;
      send(data: string): void {
        this.sends++;
        this.bufferedAmount += data.length;
      }
      terminate(): void {
        this.terminated = true;
      }
    }
    const hub = new ConnectionHub({ maxBufferedBytes: 4 * 1024 * 1024, socketHighWaterBytes: 64 * 1024 });
    hub.start({ line: () => {}, overflow: () => {}, end: () => {} });
    const stalled = new StalledSocket();
    hub.add(stalled);
    const healthy = new FakeSocket();
    hub.add(healthy);
    const record = { type: "extension_ui_request", id: "n", method: "notify", message: "x".repeat(1000) };
    const size = JSON.stringify(record).length;
    let sent = 0;
    while (!stalled.terminated && sent < 100_000) {
      hub.send(record);
      sent++;
    }
    // Cut once it held its 4 MiB, of which the socket itself was handed at most 64 KiB (one record past it).
    expect(stalled.terminated).toBe(true);
    expect(sent).toBeGreaterThan((4 * 1024 * 1024) / size);
    expect(stalled.sends).toBeLessThanOrEqual(Math.ceil((64 * 1024) / size) + 1);
    expect(hub.connectionCount).toBe(1);
    // The healthy one got every record, in order.
    await new Promise((resolve) => setImmediate(resolve));
    expect(healthy.received).toHaveLength(sent);
  });

  it("keeps several stalled connections within one total budget: the one holding the most is cut first", async () => {
    const { hub, server, connect, until } = await setup({ maxTotalBufferedBytes: 1500 });
    // Each is under the per-connection ceiling (1000); together they are over the total.
    const stalled = [connect(), connect(), connect()];
    stalled.forEach((c, i) => (c.socket.bufferedAmount = 600 + i * 100));
    const fine = connect();
    fine.send({ type: "prompt", message: "/ask", id: "p" });
    await until(() => fine.socket.received.some((r) => r["method"] === "select"));
    // 600 + 700 + 800 > 1500: the 800 goes, then 600 + 700 fits.
    expect(stalled.map((c) => c.socket.terminated)).toEqual([false, false, true]);
    expect(hub.connectionCount).toBe(3);
    await server.shutdown();
  });

  it("answers a message it cannot read to its sender alone, with a parse error", async () => {
    const { server, connect, until } = await setup();
    const a = connect();
    const b = connect();
    a.connection.refuse("Failed to parse command: not text");
    await until(() => a.socket.received.length > 0);
    expect(a.socket.received).toEqual([{ type: "response", command: "parse", success: false, error: "Failed to parse command: not text" }]);
    expect(b.socket.received).toEqual([]);
    await server.shutdown();
  });
});
