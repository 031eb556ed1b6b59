/**
 * The queue of records waiting while the client is not reading (outbound-queue.ts), and the stdio
 * transport's use of it: exact up to a soft limit, then bounded without changing the client's
 * final state, never losing a response, event or dialog.
 */
import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { OutboundQueue, replacementKey } from "../src/transport/outbound-queue.js";
import { StdioTransport } from "../src/transport/stdio.js";

type Rec = Record<string, unknown>;
const ui = (method: string, fields: Rec): Rec => ({ type: "extension_ui_request", id: `id-${method}`, method, ...fields });
const status = (key: string, text: string): Rec => ui("setStatus", { statusKey: key, statusText: text });
const notify = (message: string): Rec => ui("notify", { message });

function fill(queue: OutboundQueue, records: Rec[]): void {
  for (const r of records) queue.push(`${JSON.stringify(r)}\n`, r);
}
function drain(queue: OutboundQueue): Rec[] {
  let text = "";
  for (let chunk = queue.take(64 * 1024); chunk !== undefined; chunk = queue.take(64 * 1024)) text += chunk.toString("utf8");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Rec);
}

/** What a client shows after applying records in order: the last value per piece of state, and every notification. */
function clientState(records: Rec[]): { state: Map<string, unknown>; notes: unknown[] } {
  const state = new Map<string, unknown>();
  const notes: unknown[] = [];
  for (const r of records) {
    const key = replacementKey(r);
    if (key !== undefined) state.set(key, JSON.stringify(r));
    else if (r["method"] === "notify") notes.push(r["message"]);
  }
  return { state, notes };
}

describe("OutboundQueue", () => {
  it("keys only the records whose latest value is all that matters", () => {
    expect(replacementKey(status("a", "1"))).toBe(replacementKey(status("a", "2")));
    expect(replacementKey(status("a", "1"))).not.toBe(replacementKey(status("b", "1")));
    expect(replacementKey(ui("setWidget", { widgetKey: "w", widgetLines: ["x"] }))).toBe(
      replacementKey(ui("setWidget", { widgetKey: "w", widgetPlacement: "aboveEditor" })),
    );
    expect(replacementKey(ui("setWidget", { widgetKey: "w", widgetPlacement: "belowEditor" }))).not.toBe(replacementKey(ui("setWidget", { widgetKey: "w" })));
    expect(replacementKey(ui("setTitle", { title: "t" }))).toBe("title");
    expect(replacementKey(ui("set_editor_text", { text: "t" }))).toBe("editor_text");
    expect(replacementKey({ type: "tool_execution_update", toolCallId: "c1" })).not.toBe(replacementKey({ type: "tool_execution_update", toolCallId: "c2" }));
    for (const r of [
      notify("n"),
      ui("confirm", { title: "?" }),
      { type: "message_update" },
      { type: "bash_execution_update", delta: "x" },
      { type: "response", id: "1" },
    ]) {
      expect(replacementKey(r)).toBeUndefined();
    }
  });

  it("keeps everything exactly as sent while little waits", () => {
    const queue = new OutboundQueue();
    const records = Array.from({ length: 100 }, (_, i) => status("k", `s${i}`));
    fill(queue, records);
    expect(queue.length).toBe(100);
    expect(drain(queue)).toEqual(records);
    expect(queue.length).toBe(0);
    expect(queue.chars).toBe(0);
  });

  it("beyond the soft limit, a newer status, widget, title or editor text replaces the waiting one and the client ends up the same", () => {
    const queue = new OutboundQueue({ exactChars: 2000 });
    const records: Rec[] = [];
    for (let i = 0; i < 20_000; i++) {
      records.push(status(`k${i % 3}`, `s${i}`));
      if (i % 7 === 0) records.push(ui("setWidget", { widgetKey: "w", widgetLines: [`line ${i}`], widgetPlacement: i % 2 ? "belowEditor" : "aboveEditor" }));
      if (i % 11 === 0) records.push(ui("setTitle", { title: `t${i}` }));
      if (i % 13 === 0) records.push(ui("set_editor_text", { text: `e${i}` }));
      if (i % 1000 === 0) records.push({ type: "response", id: `r${i}`, success: true });
      if (i % 5000 === 0) records.push(ui("confirm", { title: `dialog ${i}` }));
    }
    fill(queue, records);
    // Bounded: the exact part plus one record per key, plus what is never dropped.
    expect(queue.chars).toBeLessThan(2000 + 20_000);
    const sent = drain(queue);
    expect(clientState(sent).state).toEqual(clientState(records).state);
    // Responses and dialogs all arrive, in order.
    const kept = (rs: Rec[]) => rs.filter((r) => r["type"] === "response" || r["method"] === "confirm").map((r) => r["id"] ?? r["title"]);
    expect(kept(sent)).toEqual(kept(records));
    // The survivors keep their order: each is a record that was sent, in the same relative order.
    const index = new Map(records.map((r, i) => [JSON.stringify(r), i]));
    const positions = sent.map((r) => index.get(JSON.stringify(r)) ?? -1);
    expect(positions.every((p, i) => p >= 0 && (i === 0 || p > (positions[i - 1] as number)))).toBe(true);
  });

  it("a widget moved to the other placement and back ends where the last record put it", () => {
    const queue = new OutboundQueue({ exactChars: 0 });
    const records = [
      ui("setWidget", { widgetKey: "w", widgetLines: ["1"], widgetPlacement: "aboveEditor" }),
      ui("setWidget", { widgetKey: "w", widgetLines: ["2"], widgetPlacement: "belowEditor" }),
      ui("setWidget", { widgetKey: "w", widgetLines: ["3"], widgetPlacement: "aboveEditor" }),
    ];
    fill(queue, records);
    // The newest "above" record moved to the end: a client keeping one widget per key shows "3".
    expect(drain(queue).map((r) => (r["widgetLines"] as string[])[0])).toEqual(["2", "3"]);
  });

  it("beyond the soft limit drops the oldest waiting notifications over the cap, reports it, and keeps the newest", () => {
    const dropped: number[] = [];
    const queue = new OutboundQueue({ exactChars: 0, maxNotifications: 50, onNotificationDropped: (n) => dropped.push(n) });
    const records: Rec[] = [];
    for (let i = 0; i < 10_000; i++) {
      records.push(notify(`n${i}`));
      if (i % 100 === 0) records.push(ui("select", { title: `pick ${i}`, options: ["a"] }));
    }
    fill(queue, records);
    const sent = drain(queue);
    const notes = sent.filter((r) => r["method"] === "notify").map((r) => r["message"]);
    expect(notes).toEqual(Array.from({ length: 50 }, (_, i) => `n${10_000 - 50 + i}`));
    // Dialogs are never dropped.
    expect(sent.filter((r) => r["method"] === "select")).toHaveLength(100);
    expect(dropped.at(-1)).toBe(10_000 - 50);
    expect(queue.dropped).toBe(10_000 - 50);
  });

  it("caps notifications by size too, but always keeps the newest one", () => {
    const queue = new OutboundQueue({ exactChars: 0, maxNotificationChars: 1000 });
    fill(queue, [notify("x".repeat(600)), notify("y".repeat(600)), notify("z".repeat(5000))]);
    expect(drain(queue).map((r) => String(r["message"])[0])).toEqual(["z"]);
  });

  it("take() hands out bytes: the exact part in chunks, then merged records joined up to a size, at least one", () => {
    const queue = new OutboundQueue({ exactChars: 10 });
    fill(queue, [{ n: 0, é: "é" }, { n: 1 }, { n: 2 }, { big: "x".repeat(100) }, { n: 3 }]);
    expect(queue.length).toBe(5);
    expect(queue.take(20)?.toString()).toBe('{"n":0,"é":"é"}\n');
    expect(queue.length).toBe(4);
    expect(queue.take(20)?.toString()).toBe('{"n":1}\n{"n":2}\n');
    expect(queue.take(20)?.toString()).toBe(`{"big":"${"x".repeat(100)}"}\n`);
    expect(queue.take(20)?.toString()).toBe('{"n":3}\n');
    expect(queue.take(20)).toBeUndefined();
    expect(queue.length).toBe(0);
    expect(queue.chars).toBe(0);
  });
});

/** A stream that completes writes only when told to, like a pipe whose reader is away. */
function stalledOutput() {
  const chunks: string[] = [];
  const held: (() => void)[] = [];
  const output = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString("utf8"));
      held.push(() => callback());
    },
  });
  return {
    output,
    /** The client reads everything, however much comes. */
    async readAll(done: () => boolean): Promise<void> {
      while (!done()) {
        const next = held.shift();
        if (next) next();
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    records: () =>
      chunks
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Rec),
    bytes: () => chunks.reduce((n, c) => n + c.length, 0),
  };
}

describe("StdioTransport while the client is not reading", () => {
  it("says it is backed up, and whenWritable() resolves once everything waiting has gone", async () => {
    const out = stalledOutput();
    const transport = new StdioTransport({ input: new PassThrough(), output: out.output });
    expect(transport.backedUp).toBe(false);
    await transport.whenWritable();
    transport.send({ n: 0, pad: "x".repeat(2000) });
    expect(transport.backedUp).toBe(true);
    for (let n = 1; n < 100; n++) transport.send({ n });
    let writable = false;
    const waiting = transport.whenWritable().then(() => (writable = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writable).toBe(false);
    await out.readAll(() => writable);
    await waiting;
    expect(transport.backedUp).toBe(false);
    expect(out.records().map((r) => r["n"])).toEqual(Array.from({ length: 100 }, (_, n) => n));
  });

  it("a flood of statuses and notifications stays bounded, and the client ends with the same statuses", async () => {
    const out = stalledOutput();
    const logs: string[] = [];
    const transport = new StdioTransport({ input: new PassThrough(), output: out.output, log: (m) => logs.push(m), waiting: { exactChars: 1024 * 1024 } });
    const sent: Rec[] = [];
    for (let i = 0; i < 200_000; i++) {
      const r = i % 4 === 3 ? notify(`n${i}`) : status(`k${i % 4}`, `s${i}`);
      sent.push(r);
      transport.send(r);
    }
    transport.send({ type: "response", id: "last", success: true });
    // ~20 MB were sent; what the stream was handed stays far below that.
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.bytes()).toBeLessThan(1024 * 1024);
    await out.readAll(() => !transport.backedUp);
    const got = out.records();
    expect(clientState(got).state).toEqual(clientState(sent).state);
    expect(got.at(-1)).toEqual({ type: "response", id: "last", success: true });
    const notes = clientState(got).notes;
    expect(notes.at(-1)).toBe("n199999");
    expect(notes.length).toBeLessThan(50_000);
    // Said once, however many were dropped.
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/notifications are dropped/);
  });

  it("when the client goes away, waiting records are dropped and waiters released", async () => {
    const out = stalledOutput();
    const transport = new StdioTransport({ input: new PassThrough(), output: out.output, onOutputClosed: () => {} });
    transport.send({ pad: "x".repeat(5000) });
    for (let n = 0; n < 10; n++) transport.send({ n });
    const waiting = transport.whenWritable();
    out.output.destroy(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    await waiting;
    expect(transport.backedUp).toBe(false);
    await transport.flush();
  });
});
