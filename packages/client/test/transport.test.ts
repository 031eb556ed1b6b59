/**
 * Transports: JSONL framing over streams, the in-memory pair, and a spawned process's
 * exit code, signal, stderr tail and spawn failure.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  ConnectionClosedError,
  RpcClient,
  StreamTransport,
  createInMemoryTransportPair,
  spawnTransport,
  type AgentRecord,
  type CloseInfo,
  type ProtocolError,
} from "../src/index.js";
import { settle } from "./helpers/fake-agent.js";

describe("StreamTransport", () => {
  it("frames on LF only: CRLF stripped, U+2028/U+2029 kept, records split across chunks and bytes", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const transport = new StreamTransport(input, output);
    const records: AgentRecord[] = [];
    transport.onRecord((r) => records.push(r));
    const text = `{"type":"a","s":"x\u2028y\u2029z"}\r\n{"type":"b","s":"é€😀"}\n`;
    const bytes = Buffer.from(text, "utf8");
    for (let i = 0; i < bytes.length; i += 3) input.write(bytes.subarray(i, i + 3));
    input.write('{"type":"c"}'); // no final LF: flushed at end
    input.end();
    const closed = await transport.closed;
    expect(records).toEqual([{ type: "a", s: "x\u2028y\u2029z" }, { type: "b", s: "é€😀" }, { type: "c" }]);
    expect(closed).toEqual({ reason: "remote" });
    expect(transport.isClosed).toBe(true);
  });

  it("writes one line per record and refuses to send once closed", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const transport = new StreamTransport(input, output);
    const written: string[] = [];
    output.on("data", (chunk: Buffer) => written.push(chunk.toString("utf8")));
    transport.send({ type: "get_state", id: "c-1", note: "a\nb\u2028" });
    await transport.close();
    await settle();
    expect(written.join("")).toBe('{"type":"get_state","id":"c-1","note":"a\\nb\u2028"}\n');
    expect(() => transport.send({ type: "x" })).toThrow(ConnectionClosedError);
    expect(output.writableEnded).toBe(true);
  });

  it("reports over-long lines as ProtocolError and keeps reading", async () => {
    const input = new PassThrough();
    const transport = new StreamTransport(input, new PassThrough(), { maxLineBytes: 64 });
    const records: AgentRecord[] = [];
    const errors: ProtocolError[] = [];
    transport.onRecord((r) => records.push(r));
    transport.onProtocolError((e) => errors.push(e));
    input.write(`{"type":"big","x":"${"y".repeat(200)}"}\n{"type":"small"}\n`);
    input.end();
    await transport.closed;
    expect(records).toEqual([{ type: "small" }]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/limit is 64/);
  });

  it("keeps records that arrive before the first listener", async () => {
    const input = new PassThrough();
    const transport = new StreamTransport(input, new PassThrough());
    input.write('{"type":"early"}\n');
    await settle();
    const records: AgentRecord[] = [];
    transport.onRecord((r) => records.push(r));
    expect(records).toEqual([{ type: "early" }]);
  });
});

describe("in-memory pair", () => {
  it("delivers in order, both ways, and close on one end closes both", async () => {
    const [a, b] = createInMemoryTransportPair();
    const atB: AgentRecord[] = [];
    const atA: AgentRecord[] = [];
    b.onRecord((r) => atB.push(r));
    a.onRecord((r) => atA.push(r));
    for (let i = 0; i < 5; i++) a.send({ type: "n", i });
    b.send({ type: "back", dropped: undefined });
    await settle();
    const closes: CloseInfo[] = [];
    a.onClose((i) => closes.push(i));
    b.onClose((i) => closes.push(i));
    await a.close();
    await b.closed;
    expect(atB.map((r) => r["i"])).toEqual([0, 1, 2, 3, 4]);
    expect(atA).toEqual([{ type: "back" }]);
    expect(closes).toEqual([{ reason: "local" }, { reason: "remote" }]);
    // onClose after the fact still reports, once.
    const late: CloseInfo[] = [];
    b.onClose((i) => late.push(i));
    await settle();
    expect(late).toEqual([{ reason: "remote" }]);
  });
});

describe("spawnTransport", () => {
  it("surfaces the exit code and the stderr tail when the agent exits, and rejects pending requests with them", async () => {
    const script = "process.stdin.once('data', () => { process.stderr.write('x'.repeat(100) + 'fatal: out of cheese\\n'); process.exit(3); });";
    const transport = spawnTransport(process.execPath, ["-e", script], { stderrTailChars: 30 });
    const client = new RpcClient(transport);
    await client.ready;
    expect(client.state).toBe("open");
    const error = await client.getState().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect(error).toMatchObject({ reason: "remote", exitCode: 3, signal: null });
    expect((error as ConnectionClosedError).stderrTail).toBe(`${"x".repeat(100)}fatal: out of cheese\n`.slice(-30));
    expect((error as ConnectionClosedError).message).toMatch(/exit code 3[\s\S]*out of cheese/);
    expect(client.state).toBe("closed");
  });

  it("streams stderr to listeners and reports a signal", async () => {
    const transport = spawnTransport(process.execPath, ["-e", "process.stderr.write('hello\\n'); setInterval(() => {}, 1000);"]);
    const chunks: string[] = [];
    transport.onStderr((t) => chunks.push(t));
    await transport.opened;
    while (!chunks.join("").includes("hello")) await new Promise((r) => setTimeout(r, 10));
    transport.kill("SIGTERM");
    expect(await transport.closed).toMatchObject({ reason: "remote", exitCode: null, signal: "SIGTERM", stderrTail: "hello\n" });
  });

  it("close({killAfterMs}) ends stdin, then kills an agent that does not exit", async () => {
    const script = "process.on('SIGTERM', () => {}); process.stderr.write('ready'); setInterval(() => {}, 1000);";
    const transport = spawnTransport(process.execPath, ["-e", script]);
    await new Promise<void>((resolve) => transport.onStderr(() => resolve())); // its SIGTERM handler is installed
    await transport.close({ killAfterMs: 50 });
    expect(await transport.closed).toMatchObject({ reason: "local", signal: "SIGKILL" });
  });

  it("a command that cannot be spawned: ready rejects and requests fail with ConnectionClosedError (reason error)", async () => {
    const client = new RpcClient(spawnTransport("/nonexistent/agent-binary", ["--mode", "rpc"]));
    const request = client.getState();
    await expect(client.ready).rejects.toBeInstanceOf(ConnectionClosedError);
    const error = await request.catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ConnectionClosedError", reason: "error" });
    expect(((error as ConnectionClosedError).cause as NodeJS.ErrnoException).code).toBe("ENOENT");
    expect(client.state).toBe("closed");
  });
});
