import type { Socket } from "node:net";
import { PassThrough, Writable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ClaimedStdin } from "../src/transport/claim-stdin.js";
import { StdioTransport } from "../src/transport/stdio.js";
import { openFifo, type Fifo } from "./helpers/fifo.js";

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

describe("StdioTransport on descriptors (the CLI on a pipe or socket)", () => {
  let fifo: Fifo | undefined;
  afterEach(() => fifo?.close());
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it("writes to the output descriptor directly; what a full pipe cannot take, and all after it, goes through the stream until the stream has drained", async () => {
    fifo = openFifo();
    // The stream keeps raw bytes: the tail of a record cut by the pipe starts inside a character.
    const streamed: Buffer[] = [];
    const held: (() => void)[] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        streamed.push(chunk);
        held.push(() => callback());
      },
    });
    const transport = new StdioTransport({ input: new PassThrough(), output, outputFd: fifo.writer });
    transport.send({ n: 1 });
    await tick();
    const first = fifo.drain();
    expect(first.toString()).toBe('{"n":1}\n');
    expect(streamed).toEqual([]);
    // Larger than the pipe: the head goes to the pipe, the tail to the stream.
    const big = { n: 2, text: "✓".repeat(100_000) };
    transport.send(big);
    await tick();
    expect(streamed).toHaveLength(1);
    // The stream still holds the tail: the next record queues behind it there, not in the pipe.
    transport.send({ n: 3 });
    await tick();
    const head = fifo.drain();
    expect(head.length).toBeGreaterThan(0);
    while (held.length > 0 || streamed.length < 2) {
      held.shift()?.();
      await tick();
    }
    expect(streamed).toHaveLength(2);
    // Drained: direct again.
    transport.send({ n: 4 });
    await tick();
    const tail = fifo.drain();
    expect(tail.toString()).toBe('{"n":4}\n');
    expect(streamed).toHaveLength(2);
    const text = Buffer.concat([first, head, ...streamed, tail]).toString("utf8");
    const records = text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { n: number });
    expect(records.map((r) => r.n)).toEqual([1, 2, 3, 4]);
    expect(records[1]).toEqual(big);
  });

  it("a failing output descriptor (EPIPE) closes output once: onOutputClosed runs, flush() settles, later records are dropped", async () => {
    fifo = openFifo();
    const stream = recorder();
    const onOutputClosed = vi.fn();
    const transport = new StdioTransport({ input: new PassThrough(), output: stream.output, outputFd: fifo.writer, onOutputClosed });
    fifo.closeReader();
    transport.send({ n: 1 });
    transport.send({ n: 2 });
    await tick();
    transport.send({ n: 3 });
    await transport.flush();
    expect(onOutputClosed).toHaveBeenCalledTimes(1);
    expect((onOutputClosed.mock.calls[0]![0] as NodeJS.ErrnoException).code).toBe("EPIPE");
    expect(stream.chunks).toEqual([]);
  });

  it("a claimed stdin socket: chunks become lines (the buffer may be reused), back-pressure pauses it, EOF ends the input once", async () => {
    // Stands in for the socket on fd 0: a stream for pause/resume/end, chunks through onChunk.
    const socket = new PassThrough();
    const claimed: ClaimedStdin = { kind: "socket", stream: socket as unknown as Socket, onChunk: () => {} };
    const lines: string[] = [];
    const end = vi.fn();
    const slow = recorder({ hold: true, highWaterMark: 16 });
    const transport = new StdioTransport({ stdin: claimed, output: slow.output });
    socket.pause();
    transport.start({ line: (text) => lines.push(text), overflow: () => {}, end });
    expect(socket.isPaused()).toBe(false);
    const buffer = Buffer.from('{"a":1}\n{"b"');
    claimed.onChunk(buffer);
    buffer.fill(0x20); // the reader's buffer is reused for the next read
    claimed.onChunk(Buffer.from(':2}\r\n{"c":"\u2028"}'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
    transport.send({ n: "a record longer than the high-water mark" });
    expect(socket.isPaused()).toBe(true);
    slow.release();
    await tick();
    expect(socket.isPaused()).toBe(false);
    socket.emit("end");
    socket.emit("error", new Error("read ECONNRESET"));
    // The unterminated last line is delivered at EOF, as from any stream.
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":"\u2028"}']);
    expect(end).toHaveBeenCalledTimes(1);
  });

  for (const kind of ["stream", "socket"] as const) {
    it(`output backed up before start() (an extension writing as it loads): the ${kind} input stays paused through the drain and loses nothing`, async () => {
      const input = new PassThrough();
      const claimed: ClaimedStdin = { kind: "socket", stream: input as unknown as Socket, onChunk: () => {} };
      const slow = recorder({ hold: true, highWaterMark: 16 });
      const transport = new StdioTransport(kind === "socket" ? { stdin: claimed, output: slow.output } : { input, output: slow.output });
      if (kind === "socket") input.pause(); // claimStdin() hands the socket over paused
      transport.send({ n: "a record longer than the high-water mark" });
      slow.release();
      await tick();
      input.write('{"early":1}\n');
      await tick();
      const lines: string[] = [];
      if (kind === "socket") input.on("data", (chunk: Buffer) => claimed.onChunk(chunk)); // what onread does
      transport.start({ line: (text) => lines.push(text), overflow: () => {}, end: () => {} });
      await tick();
      expect(lines).toEqual(['{"early":1}']);
    });
  }

  it("an input stream that fails (a reset socket) ends the input once, like EOF", () => {
    const input = new PassThrough();
    const end = vi.fn();
    const transport = new StdioTransport({ input, output: recorder().output });
    transport.start({ line: () => {}, overflow: () => {}, end });
    input.emit("error", new Error("read ECONNRESET"));
    input.emit("end");
    expect(end).toHaveBeenCalledTimes(1);
  });
});
