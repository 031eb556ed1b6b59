/**
 * FdOutput on a real pipe (a FIFO): back-pressure as a Node stream has it (write() says when to
 * wait, 'drain' says when to go on, callbacks in order), and at exit what the pipe has not taken
 * is written synchronously, no byte twice and none lost.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import { serializeJsonLine } from "@parley/protocol/jsonl";
import { FdOutput } from "../src/transport/fd-output.js";
import { StdioTransport } from "../src/transport/stdio.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A FIFO's non-blocking read end (raw, read by the test) and a non-blocking write end in a Socket, as protocol-stdout makes it. */
function pipe(): { readFd: number; output: FdOutput; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), "parley-fd-output-"));
  dirs.push(dir);
  const path = join(dir, "fifo");
  expect(spawnSync("mkfifo", [path]).status).toBe(0);
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  const stream = new Socket({ fd: writeFd, readable: false, writable: true });
  const output = new FdOutput(writeFd, { stream, write: (chunk, callback) => stream.write(chunk, callback) });
  return {
    readFd,
    output,
    close: () => {
      stream.destroy();
      closeSync(readFd);
    },
  };
}

/** Everything the pipe holds now. */
function drainPipe(fd: number): Buffer {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(1024 * 1024);
  for (;;) {
    try {
      const n = readSync(fd, buffer);
      if (n === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") break;
      throw error;
    }
  }
  return Buffer.concat(chunks);
}

describe("FdOutput", () => {
  it("asks the writer to wait while the pipe is full, says when to go on, and calls back in order", async () => {
    const { readFd, output, close } = pipe();
    const order: number[] = [];
    const big = Buffer.alloc(1024 * 1024, 97);
    expect(output.write(big, () => order.push(1))).toBe(false);
    expect(output.write("tail\n", () => order.push(2))).toBe(false);
    expect(output.writableLength).toBeGreaterThan(64 * 1024);
    const drained = new Promise<void>((resolve) => output.once("drain", resolve));
    let received = Buffer.alloc(0);
    while (received.length < big.length + 5) {
      received = Buffer.concat([received, drainPipe(readFd)]);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await drained;
    expect(order).toEqual([1, 2]);
    expect(received.toString("latin1")).toBe(`${"a".repeat(big.length)}tail\n`);
    close();
  });

  it("carries a long record's pieces to a slow reader byte for byte, though their buffers serve again once written", async () => {
    const { readFd, output, close } = pipe();
    const transport = new StdioTransport({ input: new PassThrough(), output });
    transport.start({ line: () => {}, overflow: () => {}, end: () => {} });
    // ~12 MB, every element different: a buffer reused while its bytes were still on their way would show.
    const record = { type: "response", data: { messages: Array.from({ length: 6000 }, (_, i) => ({ i, text: `${i}:${"é".repeat(1000)}` })) } };
    transport.send(record);
    transport.send({ type: "after" });
    const expected = serializeJsonLine(record) + serializeJsonLine({ type: "after" });
    const chunks: Buffer[] = [];
    let received = 0;
    while (received < Buffer.byteLength(expected)) {
      const chunk = drainPipe(readFd);
      chunks.push(chunk);
      received += chunk.length;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(Buffer.concat(chunks).toString("utf8")).toBe(expected);
    close();
  });

  it("finishSync() writes exactly what the pipe has not taken yet, while another process reads: nothing twice, nothing lost", async () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-fd-output-"));
    dirs.push(dir);
    const path = join(dir, "fifo");
    const out = join(dir, "out");
    expect(spawnSync("mkfifo", [path]).status).toBe(0);
    // The reader: another process, so it reads while this thread is inside finishSync().
    const cat = spawn("sh", ["-c", 'cat < "$0" > "$1"', path, out], { stdio: "ignore" });
    const catExited = new Promise((resolve) => cat.on("exit", resolve));
    const waited = openSync(path, constants.O_WRONLY); // waits for cat to open its end
    // Non-blocking, as protocol-stdout opens a pipe: writes are partial and libuv queues the rest.
    const writeFd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    closeSync(waited);
    const stream = new Socket({ fd: writeFd, readable: false, writable: true });
    const output = new FdOutput(writeFd, { stream, write: (chunk, callback) => stream.write(chunk, callback) });
    const records = Array.from({ length: 100 }, (_, i) => `${JSON.stringify({ i, pad: "x".repeat(50_000) })}\n`);
    for (const record of records) output.write(record);
    // About 5 MB handed over in one tick: the pipe has taken a fraction of it.
    expect(output.writableLength).toBeGreaterThan(1024 * 1024);
    output.finishSync(60_000);
    stream.destroy();
    await catExited;
    expect(readFileSync(out, "utf8")).toBe(records.join(""));
  });
});
