import { afterEach, describe, expect, it, vi } from "vitest";

// writeSync is mocked: the first call takes 3 bytes (a partial write), any later one fails as a
// full non-blocking pipe would.
const calls: string[] = [];
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  let n = 0;
  return {
    ...fs,
    writeSync: (fd: number, data: string | Uint8Array) => {
      expect(fd).toBe(2);
      n++;
      if (n === 1) {
        calls.push(Buffer.from(data).subarray(0, 3).toString());
        return 3;
      }
      throw Object.assign(new Error("EAGAIN: resource temporarily unavailable, write"), { code: "EAGAIN" });
    },
  };
});

afterEach(() => vi.restoreAllMocks());

describe("writeStderr", () => {
  it("writes to fd 2 directly; when fd 2 cannot take more, the rest and everything after go through process.stderr, in order", async () => {
    const streamed: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation(((chunk: string | Uint8Array) => {
      streamed.push(Buffer.from(chunk).toString());
      return true;
    }) as typeof process.stderr.write);
    const { writeStderr } = await import("../src/transport/stderr.js");
    writeStderr("hello\n");
    writeStderr("again\n");
    expect(calls).toEqual(["hel"]);
    expect(streamed).toEqual(["lo\n", "again\n"]);
  });
});
