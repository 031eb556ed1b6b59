import { afterEach, describe, expect, it, vi } from "vitest";

afterEach(() => vi.restoreAllMocks());

describe("writeStderr", () => {
  it("writes through process.stderr, in order; once stderr has failed (EPIPE) diagnostics are dropped and callbacks still run", async () => {
    const streamed: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation(((chunk: string | Uint8Array) => {
      streamed.push(Buffer.from(chunk).toString());
      return true;
    }) as typeof process.stderr.write);
    const { writeStderr, writeToStderr } = await import("../src/transport/stderr.js");
    writeStderr("hello\n");
    writeToStderr("again\n");
    expect(streamed).toEqual(["hello\n", "again\n"]);
    process.stderr.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    writeStderr("dropped\n");
    const called = await new Promise<boolean>((resolve) => writeToStderr("dropped too\n", () => resolve(true)));
    expect(called).toBe(true);
    expect(streamed).toEqual(["hello\n", "again\n"]);
  });
});
