import { PassThrough, Writable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import type { ClaimedStdin } from "../src/transport/claim-stdin.js";
import { StdioTransport } from "../src/transport/stdio.js";

/** An output stream that records each chunk it is handed; `hold` delays completion of writes. */
function recorder(options: { highWaterMark?: number; hold?: boolean } = {}) {
  const chunks: string[] = [];
  const held: (() => void)[] = [];
  const output = new Writable({
    highWaterMark: options.highWaterMark ?? 16 * 1024,
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      chunks.push(String(chunk));
      if (options.hold) held.push(() => callback());
      else callback();
    },
  });
  const release = () => {
    while (held.length > 0) held.shift()!();
  };
  return {
    output,
    chunks,
    release,
    lines: () =>
      chunks
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { n: number }),
  };
}

const sink = { line: () => {}, overflow: () => {}, end: () => {} };

describe("StdioTransport", () => {
  it("writes the first record of a burst at once and the rest of the burst as one chunk after it", async () => {
    const { output, chunks, lines } = recorder();
    const transport = new StdioTransport({ input: new PassThrough(), output });
    transport.start(sink);
    transport.send({ n: 1 });
    // Handed over before send() returned: a dialog request does not wait for the tick to end.
    expect(chunks).toEqual(['{"n":1}\n']);
    transport.send({ n: 2 });
    transport.send({ n: 3 });
    expect(chunks).toHaveLength(1);
    await Promise.resolve();
    expect(chunks).toEqual(['{"n":1}\n', '{"n":2}\n{"n":3}\n']);
    // A later tick starts a new burst.
    await new Promise((resolve) => setImmediate(resolve));
    transport.send({ n: 4 });
    expect(chunks.at(-1)).toBe('{"n":4}\n');
    expect(lines().map((r) => r.n)).toEqual([1, 2, 3, 4]);
  });

  it("hands a synchronous flood over in chunks of about 64 KiB, in order, without waiting for the tick to end", () => {
    const { output, chunks, lines } = recorder({ highWaterMark: 1 << 30 });
    const transport = new StdioTransport({ input: new PassThrough(), output });
    for (let n = 0; n < 20_000; n++) transport.send({ n });
    // Everything but the tail of the burst is already with the stream.
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.slice(1, -1).every((c) => c.length >= 64 * 1024 && c.length < 64 * 1024 + 100)).toBe(true);
    return Promise.resolve().then(() => {
      expect(lines().map((r) => r.n)).toEqual(Array.from({ length: 20_000 }, (_, n) => n));
    });
  });

  it("flush() waits until the stream has taken everything, and settles when the reader went away", async () => {
    const slow = recorder({ hold: true, highWaterMark: 64 });
    const transport = new StdioTransport({ input: new PassThrough(), output: slow.output });
    for (let n = 0; n < 10; n++) transport.send({ n });
    let flushed = false;
    const flush = transport.flush().then(() => (flushed = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(flushed).toBe(false);
    // Completing the held writes one by one lets the stream move on to the next.
    for (let i = 0; i < 10 && !flushed; i++) {
      slow.release();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await flush;
    expect(slow.lines()).toHaveLength(10);

    const gone = recorder({ hold: true, highWaterMark: 64 });
    let closedWith: Error | undefined;
    const failing = new StdioTransport({ input: new PassThrough(), output: gone.output, onOutputClosed: (e) => (closedWith = e) });
    failing.send({ n: 1 });
    failing.send({ n: 2 });
    const pending = failing.flush();
    gone.output.destroy(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    await pending;
    expect(closedWith?.message).toBe("write EPIPE");
    // Later output is dropped quietly, and flush() answers at once.
    failing.send({ n: 3 });
    await failing.flush();
  });

  it("stops reading input while the client is not reading output, and resumes when it drains", async () => {
    const slow = recorder({ hold: true, highWaterMark: 16 });
    const input = new PassThrough();
    const transport = new StdioTransport({ input, output: slow.output });
    transport.start(sink);
    transport.send({ n: "a record longer than the high-water mark" });
    expect(input.isPaused()).toBe(true);
    slow.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(input.isPaused()).toBe(false);
  });
});

describe("StdioTransport and a record with a long array (get_messages of a big session)", () => {
  it("makes its pieces as the reader takes them: later records follow it, the reader gets the whole line, and what waits stays small", async () => {
    const slow = recorder({ hold: true });
    const input = new PassThrough();
    const transport = new StdioTransport({ input, output: slow.output });
    transport.start(sink);
    const messages = Array.from({ length: 3000 }, (_, i) => ({ i, text: "y".repeat(2000) }));
    transport.send({ n: 1, messages });
    transport.send({ n: 2 });
    // ~6 MB of text: a few pieces (~1 MiB each) are made ahead of the reader, not all of it.
    expect(slow.chunks[0]!.length).toBeLessThan(2 << 20);
    expect(slow.output.writableLength).toBeGreaterThan(0);
    expect(slow.output.writableLength).toBeLessThan(5.5 * 2 ** 20);
    expect(transport.backedUp).toBe(true);
    expect(input.isPaused()).toBe(true);
    const writable = transport.whenWritable();
    let rounds = 0;
    while (transport.backedUp && rounds++ < 100) {
      slow.release();
      await new Promise((resolve) => setImmediate(resolve));
      expect(Math.max(...slow.chunks.map((c) => c.length))).toBeLessThan(2 << 20);
    }
    await writable;
    expect(input.isPaused()).toBe(false);
    const lines = slow.lines() as unknown as { n: number; messages?: { i: number; text: string }[] }[];
    expect(lines.map((l) => l.n)).toEqual([1, 2]);
    expect(lines[0]!.messages).toEqual(messages);
  });
});

describe("StdioTransport on the claimed stdin", () => {
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it("output backed up before start() (an extension writing as it loads): the input stays paused through the drain and loses nothing", async () => {
    const input = new PassThrough();
    const claimed: ClaimedStdin = { stream: input };
    const slow = recorder({ hold: true, highWaterMark: 16 });
    const transport = new StdioTransport({ stdin: claimed, output: slow.output });
    transport.send({ n: "a record longer than the high-water mark" });
    slow.release();
    await tick();
    input.write('{"early":1}\n');
    await tick();
    const lines: string[] = [];
    transport.start({ line: (text) => lines.push(text), overflow: () => {}, end: () => {} });
    await tick();
    expect(lines).toEqual(['{"early":1}']);
  });

  it("an input stream that fails (a reset socket) ends the input once, like EOF", () => {
    const input = new PassThrough();
    const end = vi.fn();
    const transport = new StdioTransport({ stdin: { stream: input }, output: recorder().output });
    transport.start({ line: () => {}, overflow: () => {}, end });
    input.emit("error", new Error("read ECONNRESET"));
    input.emit("end");
    expect(end).toHaveBeenCalledTimes(1);
  });
});
