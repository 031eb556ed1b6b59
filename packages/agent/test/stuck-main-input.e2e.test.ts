/**
 * In rpc mode with extensions, fd 0 is read by the stuck-main watchdog's thread and crosses to the
 * main thread through a bounded ring of shared memory (stuck-watchdog.ts). While an extension
 * holds the main thread in a loop, the worker reads ahead until the ring is full, then waits;
 * once the loop ends, every byte must reach the protocol once and in order: written at spawn
 * (before the worker is up) or later, across the ring's wrap-around, through a socket or a pipe.
 * Each command here is an unknown type, answered at once with its id; 4 MiB of them is sixteen
 * times the ring. Every wait is for an event, with a generous ceiling.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deadline } from "./helpers/deadline.js";
import { poll } from "./helpers/waits.js";
import { PARLEY_BIN } from "./helpers/spawn.js";
import { tempDir } from "./fixtures/agent/harness.js";

const STUCK = join(import.meta.dirname, "fixtures/stuck-main.ts");
const CEILING_MS = deadline(60_000);
const COMMANDS = 400;
/** ~10 KiB a line: 4 MiB in all, sixteen times the ring (RING_BYTES). */
const PAD = "x".repeat(10 * 1024);
/** Bytes that must have left the client while the main thread loops: the ring's worth. */
const READ_AHEAD_BYTES = 256 * 1024;

function commandLine(n: number): string {
  return `${JSON.stringify({ type: `nope-${n}`, id: `c${n}`, pad: PAD })}\n`;
}

/** parley (rpc) with the looping extension; stdin a socket pair (Node's spawn) or a pipe (through `cat`). */
function start(via: "socket" | "pipe", env: Record<string, string>) {
  const dir = tempDir();
  const home = mkdtempSync(join(tmpdir(), "parley-home-"));
  const args = ["--mode", "rpc", "--no-session", "--no-extensions", "-e", STUCK];
  const quoted = [PARLEY_BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const child =
    via === "socket"
      ? spawn(PARLEY_BIN, args, { cwd: dir, env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), ...env } })
      : spawn("sh", ["-c", `cat | exec ${quoted}`], {
          cwd: dir,
          env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), ...env },
        });
  const lines: string[] = [];
  let partial = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    const parts = (partial + d).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin.on("error", () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { dir, child, lines, exited, stderr: () => stderr, partial: () => partial };
}

/** The ids of the answers to our commands, in the order they came. */
function answeredIds(lines: string[]): string[] {
  return lines.flatMap((line) => {
    const record: unknown = JSON.parse(line);
    if (typeof record !== "object" || record === null || !("id" in record) || typeof record.id !== "string") return [];
    return record.id.startsWith("c") ? [record.id] : [];
  });
}

describe("stdin read by the watchdog's thread while the main thread loops", () => {
  for (const via of ["socket", "pipe"] as const) {
    for (const where of ["load", "command"] as const) {
      it(
        `${via}, a loop in ${where === "load" ? "load-time code" : "a command handler"}: 4 MiB written meanwhile arrive whole and in order`,
        async () => {
          const release = join(tempDir(), "release");
          const marker = join(tempDir(), "spinning");
          const agent = start(via, { STUCK_FILE: marker, STUCK_RELEASE: release, ...(where === "load" ? { STUCK_AT: "load" } : {}) });
          try {
            const total = Array.from({ length: COMMANDS }, (_, n) => commandLine(n).length).reduce((a, b) => a + b, 0);
            if (where === "command") {
              agent.child.stdin.write(`${JSON.stringify({ type: "prompt", message: "/spin", id: "spin" })}\n`);
              await poll(() => existsSync(marker), "the extension's loop to begin", CEILING_MS);
            }
            // At spawn (the load-time case: before the worker is up) or while the command loops.
            // One line at a time, each once the one before is in the kernel: `flushed` counts what
            // left the client (lines written together would be flushed as one write).
            let flushed = 0;
            const writing = (async () => {
              for (let n = 0; n < COMMANDS; n++) {
                const line = commandLine(n);
                await new Promise<void>((resolve, reject) => agent.child.stdin.write(line, (error) => (error ? reject(error) : resolve())));
                flushed += line.length;
              }
            })();
            await poll(() => existsSync(marker), "the extension's loop to begin", CEILING_MS);
            // The worker reads ahead while the main thread loops: a ring's worth leaves the client.
            await poll(() => flushed >= READ_AHEAD_BYTES, "a ring's worth of input to be read", CEILING_MS);
            expect(answeredIds(agent.lines)).toEqual([]);
            writeFileSync(release, "");
            const expected = Array.from({ length: COMMANDS }, (_, n) => `c${n}`);
            await poll(() => answeredIds(agent.lines).length >= COMMANDS, "every command's answer", CEILING_MS);
            expect(answeredIds(agent.lines)).toEqual(expected);
            await writing;
            expect(flushed).toBe(total);
            // The end of input still ends it, gracefully: the main thread answers.
            agent.child.stdin.end();
            expect(await agent.exited, agent.stderr()).toEqual({ code: 0, signal: null });
            expect(agent.partial()).toBe("");
          } finally {
            agent.child.kill("SIGKILL");
          }
        },
        3 * CEILING_MS,
      );
    }
  }
});
