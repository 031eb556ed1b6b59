/**
 * stdin and stdout of every kind a client can hand parley: a socket pair (what Node's spawn
 * makes), a pipe (a shell pipeline), a regular file, /dev/null, one socket as both. The records
 * must be the same whatever the kind, and process.stdin must never reach the protocol's input.
 */
import { expectOutbound } from "./helpers/outbound-schema.js";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createConnection, createServer, type Socket } from "node:net";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnParley, type AgentProcess, type Rec } from "./helpers/spawn.js";

const EXT = join(import.meta.dirname, "fixtures/stdio-kinds.ts");
/** 2,000,000 two-byte characters: one record of ~4 MB, more than any pipe or socket buffer holds. */
const BIG = 2_000_000;

const lines = (items: (object | string)[]): string => items.map((item) => `${typeof item === "string" ? item : JSON.stringify(item)}\n`).join("");
const FIRST = lines([
  { type: "get_state", id: "s1" },
  "this is not JSON",
  { type: "prompt", message: `/big ${BIG}`, id: "b1" },
  { type: "prompt", message: "/stdin-report", id: "r1" },
]);
// Sent after the extension has destroyed process.stdin (where the client can wait for that).
const LAST = lines([{ type: "get_state", id: "s2" }]);

const agents: AgentProcess[] = [];
afterEach(() => {
  for (const a of agents.splice(0)) a.kill();
});

/**
 * What must be the same for every kind: each record reduced to what identifies it. Responses are
 * listed apart and sorted: a prompt is answered when its command has run, so a get_state read in
 * the same chunk may be answered first or not.
 */
function outline(records: Rec[]): string[] {
  const responses = records.filter((r) => r.type === "response").map((r) => `response ${String(r["command"])} ${String(r["id"])} ${String(r["success"])}`);
  return [...records.filter((r) => r.type !== "response").map(summary), ...responses.sort()];
}

function summary(r: Rec): string {
  if (r.type !== "extension_ui_request") return r.type;
  const detail = r["method"] === "setStatus" ? String(r["statusText"]) : r["method"] === "notify" ? String(r["message"]).slice(0, 40) : "";
  return `ui ${String(r["method"])} ${detail}`;
}

function checkRecords(records: Rec[]): void {
  const big = records.find((r) => r["method"] === "notify" && String(r["message"]).startsWith("é"));
  expect(big?.["message"]).toBe("é".repeat(BIG));
  const at = records.indexOf(big as Rec);
  const statuses = records.filter((r) => r["method"] === "setStatus").map((r) => r["statusText"]);
  expect(statuses).toEqual(Array.from({ length: 100 }, (_, i) => `s${i}`));
  expect(records.findIndex((r) => r["method"] === "setStatus")).toBeGreaterThan(at);
  const report = records.find((r) => r["method"] === "notify" && String(r["message"]).startsWith("{"));
  // The extension's own listener on process.stdin saw none of the protocol's bytes.
  expect(JSON.parse(String(report?.["message"]))).toEqual({ seen: 0, fd: 0, isTTY: false });
  const responses = records.filter((r) => r.type === "response");
  expect(responses.map((r) => [r["id"], r["success"]]).sort()).toEqual(
    [
      ["b1", true],
      ["r1", true],
      ["s1", true],
      ["s2", true],
      [undefined, false],
    ].sort(),
  );
  expect(responses.findIndex((r) => r["id"] === "s1")).toBeLessThan(responses.findIndex((r) => r["id"] === "s2"));
}

function parseLines(text: string): Rec[] {
  expect(text.endsWith("\n")).toBe(true);
  const records = text
    .slice(0, -1)
    .split("\n")
    .map((line) => JSON.parse(line) as Rec);
  expectOutbound(records);
  return records;
}

/** Runs parley under sh with `redirections` around it; returns its stdout records. */
function runShell(redirections: (bin: string) => string): { records: Rec[]; status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), "parley-kinds-"));
  const input = join(dir, "in.jsonl");
  const output = join(dir, "out.jsonl");
  writeFileSync(input, FIRST + LAST);
  const bin = `"${PARLEY_BIN}" --mode rpc --no-session -e "${EXT}"`;
  const run = spawnSync("sh", ["-c", redirections(bin)], {
    cwd: dir,
    env: { ...process.env, HOME: dir, IN: input, OUT: output },
    encoding: "utf8",
    timeout: deadline(AGENT_CEILING_MS),
  });
  return { records: parseLines(readFileSync(output, "utf8")), status: run.status, stderr: run.stderr };
}

describe("stdin and stdout of every kind", () => {
  let reference: string[] | undefined;

  it("socket pairs (a spawning program): all records, the 4 MB one whole and in order", async () => {
    const agent = spawnParley(["-e", EXT]);
    agents.push(agent);
    agent.sendRaw(FIRST);
    await agent.response("r1", 30_000);
    agent.sendRaw(LAST);
    await agent.response("s2", 30_000);
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(agent.garbage).toEqual([]);
    checkRecords(agent.records);
    reference = outline(agent.records);
  });

  it("pipes (a shell pipeline): the same records", () => {
    const { records, status } = runShell((bin) => `cat "$IN" | ${bin} | cat > "$OUT"`);
    expect(status).toBe(0);
    checkRecords(records);
    expect(outline(records)).toEqual(reference);
  });

  it("regular files (< in > out): the same records", () => {
    const { records, status } = runShell((bin) => `${bin} < "$IN" > "$OUT"`);
    expect(status).toBe(0);
    checkRecords(records);
    expect(outline(records)).toEqual(reference);
  });

  it("a pipe in and a file out, a file in and a pipe out: the same records", () => {
    for (const shape of [(bin: string) => `cat "$IN" | ${bin} > "$OUT"`, (bin: string) => `${bin} < "$IN" | cat > "$OUT"`]) {
      const { records, status } = runShell(shape);
      expect(status).toBe(0);
      expect(outline(records)).toEqual(reference);
    }
  });

  it("one socket as stdin and stdout (inetd, socat): the end of input does not end output", async () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-kinds-"));
    // Paused: this process must not read what is meant for the child.
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true });
    server.listen(join(dir, "s.sock"));
    await once(server, "listening");
    const accepted = once(server, "connection") as Promise<[Socket]>;
    const client = createConnection({ path: join(dir, "s.sock"), allowHalfOpen: true });
    const [socket] = await accepted;
    const child = spawn(process.execPath, [PARLEY_BIN, "--mode", "rpc", "--no-session", "-e", EXT], {
      cwd: dir,
      env: { ...process.env, HOME: dir },
      stdio: [socket, socket, "ignore"],
    });
    socket.destroy(); // the child has its own copy of the descriptor
    server.close();
    const chunks: Buffer[] = [];
    client.on("data", (chunk: Buffer) => chunks.push(chunk));
    const ended = once(client, "end");
    const exited = once(child, "exit") as Promise<[number | null]>;
    // Everything at once, then the input half closed: every answer must still arrive.
    client.end(FIRST + LAST);
    const [code] = await exited;
    await ended;
    expect(code).toBe(0);
    const records = parseLines(Buffer.concat(chunks).toString("utf8"));
    checkRecords(records);
    expect(outline(records)).toEqual(reference);
  });

  it("/dev/null as stdin: exits 0 at once, with nothing on stdout", () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-kinds-"));
    const run = spawnSync(PARLEY_BIN, ["--mode", "rpc", "--no-session"], {
      cwd: dir,
      env: { ...process.env, HOME: dir },
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8",
      timeout: deadline(AGENT_CEILING_MS),
    });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe("");
  });
});
