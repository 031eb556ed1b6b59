/**
 * stdout carries protocol records only, whatever an extension writes behind the protocol's back,
 * and every way an extension can end the process leaves whole lines there.
 *
 * - stdout and stderr pipes (a shell pipeline, Python's subprocess): the protocol has a
 *   descriptor of its own and fd 1 is stderr, so every kind of stray write lands on stderr.
 * - stdout and stderr sockets (Node's spawn): a socket cannot be reopened, so a worker passes
 *   the descriptors to itself (socket-stdout.ts); every kind of stray write lands on stderr too.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { attachJsonlReader } from "@parley/protocol";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";
import { expectOutbound } from "./helpers/outbound-schema.js";
import { spawnParleyOnPipe } from "./helpers/pipe-stdout.js";
import { PARLEY_BIN, type Rec } from "./helpers/spawn.js";
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";

const EXT = join(import.meta.dirname, "fixtures/stray-writes.ts");
const ALL_KINDS = ["writeSync", "stdoutWrite", "stdoutInnerWrite", "stdoutHandle", "consoleLog", "spawnInherit", "execSyncInherit"];
const BIG = 5 * 1024 * 1024;

type Kind = "pipe" | "socket";

interface Run {
  stdin: Writable;
  stdout: Readable;
  /** stdout as text (all of it), records parsed from it. */
  text: () => string;
  records: Rec[];
  stderr: () => string;
  send(record: object): void;
  until(condition: () => boolean, what: string): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

const runs: Run[] = [];
afterEach(() => {
  for (const run of runs.splice(0)) run.kill();
});

function start(kind: Kind, args: string[]): Run {
  const fullArgs = ["--mode", "rpc", "--no-session", "-e", EXT, ...args];
  let child: {
    stdin: Writable;
    kill(signal?: NodeJS.Signals): boolean;
    on(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  };
  let stdout: Readable;
  let stderrStream: Readable;
  if (kind === "pipe") {
    const piped = spawnParleyOnPipe(fullArgs);
    child = piped.child;
    stdout = piped.stdout;
    stderrStream = piped.stderr;
  } else {
    const home = mkdtempSync(join(tmpdir(), "parley-stray-"));
    const spawned = spawn(process.execPath, [PARLEY_BIN, ...fullArgs], {
      cwd: home,
      env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child = spawned;
    stdout = spawned.stdout;
    stderrStream = spawned.stderr;
  }
  const chunks: Buffer[] = [];
  let stderr = "";
  const records: Rec[] = [];
  let wake = (): void => {};
  stdout.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    wake();
  });
  attachJsonlReader(stdout, (line) => {
    try {
      records.push(JSON.parse(line) as Rec);
    } catch {
      // counted by the whole-text check
    }
    wake();
  });
  stderrStream.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
    wake();
  });
  child.stdin.on("error", () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void exited.then(() => {
    done = true;
    wake();
  });
  const run: Run = {
    stdin: child.stdin,
    stdout,
    text: () => Buffer.concat(chunks).toString("utf8"),
    records,
    stderr: () => stderr,
    send: (record) => child.stdin.write(`${JSON.stringify(record)}\n`),
    until: async (condition, what) => {
      const ceiling = Date.now() + deadline(AGENT_CEILING_MS);
      while (!condition()) {
        if (Date.now() > ceiling) throw new Error(`timed out waiting for ${what}; exited: ${done}; stderr:\n${stderr.slice(-3000)}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 100);
        });
      }
    },
    exited,
    kill: () => {
      if (!done) child.kill("SIGKILL");
    },
  };
  runs.push(run);
  return run;
}

/** stdout holds whole JSON object lines only (and the schema's records). */
function expectRecordsOnly(text: string): Rec[] {
  expect(text.endsWith("\n"), `stdout ends mid-line: …${text.slice(-200)}`).toBe(true);
  const lines = text.slice(0, -1).split("\n");
  const bad = lines.filter((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value !== "object" || value === null || Array.isArray(value);
    } catch {
      return true;
    }
  });
  expect(bad.map((line) => line.slice(0, 200))).toEqual([]);
  const records = lines.map((line) => JSON.parse(line) as Rec);
  expectOutbound(records);
  return records;
}

async function strayRun(kind: Kind, kinds: string[]): Promise<Run> {
  const run = start(kind, []);
  run.send({ type: "prompt", message: `/stray ${kinds.join(",")}`, id: "stray" });
  await run.until(() => run.records.some((r) => r["method"] === "confirm"), "the dialog");
  await run.until(() => run.stderr().includes("STRAYS-DURING-DONE"), "the strays written while the dialog is open");
  const dialog = run.records.find((r) => r["method"] === "confirm") as Rec;
  run.send({ type: "extension_ui_response", id: dialog["id"], confirmed: true });
  await run.until(() => run.records.some((r) => r["message"] === "answered true"), "the dialog's answer");
  run.send({ type: "get_state", id: "after" });
  await run.until(() => run.records.some((r) => r["id"] === "after"), "get_state after the strays");
  run.stdin.end();
  expect(await run.exited).toEqual({ code: 0, signal: null });
  return run;
}

describe("stray writes never reach stdout", () => {
  it("stdout a pipe: every kind (fd 1, process.stdout, its inner write and handle, console.log, inheriting children) lands on stderr", async () => {
    const run = await strayRun("pipe", ALL_KINDS);
    const text = run.text();
    expect(text).not.toContain("STRAY-");
    expectRecordsOnly(text);
    for (const kind of ALL_KINDS) {
      expect(run.stderr()).toContain(`STRAY-${kind}-before`);
      expect(run.stderr()).toContain(`STRAY-${kind}-during`);
    }
  });

  it("stdout a file opened for appending (>>): what was there stays, every kind lands on stderr", () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-stray-file-"));
    const out = join(dir, "out.jsonl");
    const input = join(dir, "in.jsonl");
    writeFileSync(out, "written before parley\n");
    writeFileSync(input, `${JSON.stringify({ type: "prompt", message: `/stray ${ALL_KINDS.join(",")}`, id: "stray" })}\n`);
    const run = spawnSync("sh", ["-c", `"${PARLEY_BIN}" --mode rpc --no-session -e "${EXT}" < "$IN" >> "$OUT" 2> "$ERR"`], {
      cwd: dir,
      env: { ...process.env, HOME: dir, PI_CODING_AGENT_DIR: join(dir, ".pi", "agent"), IN: input, OUT: out, ERR: join(dir, "err.txt") },
      encoding: "utf8",
      timeout: deadline(AGENT_CEILING_MS),
    });
    expect(run.status).toBe(0);
    const text = readFileSync(out, "utf8");
    expect(text.startsWith("written before parley\n")).toBe(true);
    expect(text).not.toContain("STRAY-");
    const records = expectRecordsOnly(text.slice("written before parley\n".length));
    expect(
      records.some((r) => r["message"] === "strays written"),
      JSON.stringify(records).slice(0, 2000),
    ).toBe(true);
    const stderr = readFileSync(join(dir, "err.txt"), "utf8");
    for (const kind of ALL_KINDS) expect(stderr).toContain(`STRAY-${kind}-before`);
  });

  it("stdout a socket (Node's spawn): every kind of stray write lands on stderr", async () => {
    const run = await strayRun("socket", ALL_KINDS);
    const text = run.text();
    expect(text).not.toContain("STRAY-");
    expectRecordsOnly(text);
    for (const kind of ALL_KINDS) {
      expect(run.stderr()).toContain(`STRAY-${kind}-before`);
      expect(run.stderr()).toContain(`STRAY-${kind}-during`);
    }
  });
  it("stdout a socket, stderr a file: every kind lands in the file", () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-stray-socket-file-"));
    const errPath = join(dir, "err.txt");
    const errFd = openSync(errPath, "a");
    try {
      // spawnSync's stdout is a socket too; stderr is the file itself.
      const run = spawnSync(process.execPath, [PARLEY_BIN, "--mode", "rpc", "--no-session", "-e", EXT], {
        cwd: dir,
        env: { ...process.env, HOME: dir, PI_CODING_AGENT_DIR: join(dir, ".pi", "agent") },
        input: `${JSON.stringify({ type: "prompt", message: `/stray ${ALL_KINDS.join(",")}`, id: "stray" })}\n`,
        stdio: ["pipe", "pipe", errFd],
        encoding: "utf8",
        timeout: deadline(AGENT_CEILING_MS),
      });
      expect(run.status).toBe(0);
      expect(run.stdout).not.toContain("STRAY-");
      const records = expectRecordsOnly(run.stdout);
      expect(records.some((r) => r["message"] === "strays written")).toBe(true);
      const stderr = readFileSync(errPath, "utf8");
      for (const kind of ALL_KINDS) expect(stderr).toContain(`STRAY-${kind}-before`);
    } finally {
      closeSync(errFd);
    }
  });
});

describe("every way an extension ends the process leaves whole lines on stdout", () => {
  const paths: { how: string; command: object; exits: boolean }[] = [
    { how: "process.exit(0) in a command", command: { type: "prompt", message: "/exit-after-notify exit" }, exits: true },
    { how: "process.exit(0) from a timer", command: { type: "prompt", message: "/exit-after-notify exit-in-timer" }, exits: true },
    { how: "process.exit(0) in an event hook", command: { type: "prompt", message: "exit in a hook" }, exits: true },
    { how: "process.kill(process.pid, 'SIGTERM')", command: { type: "prompt", message: "/exit-after-notify sigterm" }, exits: true },
    { how: "an uncaught exception", command: { type: "prompt", message: "/exit-after-notify throw" }, exits: false },
    { how: "an unhandled rejection", command: { type: "prompt", message: "/exit-after-notify reject" }, exits: false },
  ];
  for (const kind of ["pipe", "socket"] as const) {
    for (const path of paths) {
      it(`${path.how}, right after a 5 MB notify (stdout a ${kind})`, async () => {
        const run = start(kind, []);
        run.send({ type: "get_state", id: "ready" });
        await run.until(() => run.records.some((r) => r["id"] === "ready"), "start-up");
        // The client stops reading: the notify cannot have left when the process ends.
        run.stdout.pause();
        run.send({ ...path.command, id: "big" });
        await run.until(() => run.stderr().includes("EXITING"), "the extension to end the process");
        run.stdout.resume();
        if (!path.exits) {
          // parley reports the error and keeps serving; then the client ends it.
          await run.until(() => run.records.some((r) => typeof r["message"] === "string" && (r["message"] as string).length === BIG), "the big notify");
          run.stdin.end();
        }
        const exit = await run.exited;
        if (path.exits) expect(exit.signal).toBeNull();
        await run.until(() => run.stdout.readableEnded, "the end of stdout");
        const records = expectRecordsOnly(run.text());
        const big = records.find((r) => r["method"] === "notify" && typeof r["message"] === "string" && (r["message"] as string).length === BIG);
        expect(big, "the 5 MB notify arrived whole").toBeDefined();
      });
    }
  }
});
