/**
 * Drives a real agent process over real pipes: write JSONL to its stdin, read records from its
 * stdout with the protocol's own reader, and wait for records by predicate.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { attachJsonlReader } from "@parley/protocol";

export const ROOT = resolve(import.meta.dirname, "../../../..");
export const PARLEY_BIN = join(ROOT, "node_modules/.bin/parley");
export const PI_BIN = join(ROOT, "node_modules/.bin/pi");
export const DEMO = join(ROOT, "examples/extensions/rpc-demo.ts");
export const PI_EXAMPLES = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/examples/extensions");

export type Rec = Record<string, unknown> & { type: string };

export interface AgentProcess {
  child: ChildProcessWithoutNullStreams;
  records: Rec[];
  /** stdout lines that were not valid JSON objects (must stay empty). */
  garbage: string[];
  stderr: () => string;
  send(record: object): void;
  sendRaw(text: string): void;
  /** Resolves with the first record (from `from` on) matching `match`; rejects after `ms`. */
  waitFor(match: (r: Rec) => boolean, ms?: number, from?: number): Promise<Rec>;
  /** Resolves once `condition()` holds (checked on each new record); rejects after `ms`. */
  until(condition: () => boolean, ms?: number): Promise<void>;
  /** The response to the command with this id. */
  response(id: string, ms?: number): Promise<Rec>;
  /** Sends a command with a fresh id and waits for its response. */
  request(command: object, ms?: number): Promise<Rec>;
  closeInput(): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

let counter = 0;

export function spawnAgent(bin: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): AgentProcess {
  // A private HOME keeps the user's own extensions and sessions out of tests.
  const home = mkdtempSync(join(tmpdir(), "parley-home-"));
  const child = spawn(bin, args, {
    cwd: options.cwd ?? home,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const records: Rec[] = [];
  const garbage: string[] = [];
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  attachJsonlReader(child.stdout, (line) => {
    try {
      const value = JSON.parse(line) as unknown;
      if (typeof value === "object" && value !== null && !Array.isArray(value)) records.push(value as Rec);
      else garbage.push(line);
    } catch {
      garbage.push(line);
    }
    for (const wake of [...waiters]) wake();
  });
  child.stdin.on("error", () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.on("exit", (code, signal) => {
      for (const wake of [...waiters]) wake();
      res({ code, signal });
    }),
  );

  const waitFor = (match: (r: Rec) => boolean, ms = 10_000, from = 0): Promise<Rec> =>
    new Promise((res, rej) => {
      const check = (): boolean => {
        const found = records.slice(from).find(match);
        if (found) {
          waiters.delete(wake);
          clearTimeout(timer);
          res(found);
          return true;
        }
        return false;
      };
      const wake = (): void => void check();
      const timer = setTimeout(() => {
        waiters.delete(wake);
        rej(new Error(`timed out after ${ms} ms waiting for a record; got:\n${records.map((r) => JSON.stringify(r)).join("\n")}\nstderr:\n${stderr}`));
      }, ms);
      if (!check()) waiters.add(wake);
    });

  const until = (condition: () => boolean, ms = 10_000): Promise<void> =>
    new Promise((res, rej) => {
      const wake = (): void => {
        if (!condition()) return;
        waiters.delete(wake);
        clearTimeout(timer);
        res();
      };
      const timer = setTimeout(() => {
        waiters.delete(wake);
        rej(new Error(`timed out after ${ms} ms waiting for a condition; last records:\n${records.slice(-20).map((r) => JSON.stringify(r)).join("\n")}\nstderr:\n${stderr}`));
      }, ms);
      waiters.add(wake);
      wake();
    });

  const proc: AgentProcess = {
    child,
    records,
    garbage,
    stderr: () => stderr,
    send: (record) => child.stdin.write(`${JSON.stringify(record)}\n`),
    sendRaw: (text) => child.stdin.write(text),
    waitFor,
    until,
    response: (id, ms) => waitFor((r) => r.type === "response" && r["id"] === id, ms),
    request: (command, ms) => {
      const id = `req-${++counter}`;
      proc.send({ ...command, id });
      return proc.response(id, ms);
    },
    closeInput: () => child.stdin.end(),
    exited,
    kill: () => child.kill("SIGKILL"),
  };
  return proc;
}

export const spawnParley = (args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv }): AgentProcess =>
  spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", ...args], options);

export const spawnPi = (args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv }): AgentProcess =>
  spawnAgent(PI_BIN, ["--mode", "rpc", "--no-session", ...args], options);

/** The dialog request that `prompt /command` opens (waits for it). */
export async function openDialog(agent: AgentProcess, message: string, method: string): Promise<Rec> {
  const from = agent.records.length;
  agent.send({ type: "prompt", message, id: `open-${++counter}` });
  return agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === method, 10_000, from);
}
