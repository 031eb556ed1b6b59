import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeWithoutWaiting } from "../src/transport/fd-write.js";
import { openFifo, type Fifo } from "./helpers/fifo.js";

describe("writeWithoutWaiting", () => {
  let fifo: Fifo | undefined;
  afterEach(() => fifo?.close());

  it("writes a record the pipe has room for completely and returns nothing", () => {
    fifo = openFifo();
    expect(writeWithoutWaiting(fifo.writer, '{"a":"é✓😀"}\n')).toBeUndefined();
    expect(fifo.drain().toString("utf8")).toBe('{"a":"é✓😀"}\n');
  });

  it("returns exactly the bytes a full pipe did not take, cut inside a multi-byte character, and all of them once it is full", () => {
    fifo = openFifo();
    // Three-byte characters: the pipe's capacity (a power of two) falls inside one of them.
    const text = "✓".repeat(200_000);
    const full = Buffer.from(text, "utf8");
    const rest = writeWithoutWaiting(fifo.writer, text);
    expect(rest).toBeInstanceOf(Uint8Array);
    expect(rest!.length).toBeGreaterThan(0);
    expect(rest!.length).toBeLessThan(full.length);
    // The pipe is full now: nothing more goes, and EAGAIN is not an error.
    expect(Buffer.from(writeWithoutWaiting(fifo.writer, "more\n")!).toString()).toBe("more\n");
    expect(Buffer.concat([fifo.drain(), rest!]).equals(full)).toBe(true);
  });

  it("throws the descriptor's error when the reader has gone (EPIPE)", () => {
    fifo = openFifo();
    fifo.closeReader();
    expect(() => writeWithoutWaiting(fifo!.writer, "x\n")).toThrow(expect.objectContaining({ code: "EPIPE" }));
  });

  it("writes to a regular file completely", () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-fd-write-"));
    const path = join(dir, "out");
    const fd = openSync(path, "w");
    try {
      expect(writeWithoutWaiting(fd, "line\n".repeat(100_000))).toBeUndefined();
      expect(readFileSync(path, "utf8")).toBe("line\n".repeat(100_000));
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
