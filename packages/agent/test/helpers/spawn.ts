/**
 * Drives a real agent process over real pipes: write JSONL to its stdin, read records from its
 * stdout with the protocol's own reader, and wait for records by predicate.
 *
 * Every record a parley process writes is checked against the published outbound JSON Schema:
 * the first that does not fit fails every wait on that process at once, and fails the test that
 * spawned it when it ends (afterEach), naming the record.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach } from "vitest";
import { attachJsonlReader } from "@parley/protocol";
import { outboundViolation } from "./outbound-schema.js";
import { AGENT_CEILING_MS, deadline } from "./deadline.js";

export const ROOT = resolve(import.meta.dirname, "../../../..");
export const PARLEY_BIN = join(ROOT, "node_modules/.bin/parley");
/**
 * pi 0.73.1, kept as a second reference for old clients only (pi 1.6.0, `pi-newest`, is the
 * reference: `spawnPiNewest`; it owns `node_modules/.bin/pi`).
 */
export const PI_BIN = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js");
/** pi 1.6.0's CLI entry (the `pi-newest` devDependency), the reference; run with this Node. */
export const PI_NEWEST_CLI = join(ROOT, "node_modules/pi-newest/dist/cli.js");
export const DEMO = join(ROOT, "examples/extensions/rpc-demo.ts");
export const PI_EXAMPLES = join(ROOT, "node_modules/@mariozechner/pi-coding-agent/examples/extensions");

export type Rec = Record<string, unknown> & { type: string };

export { AGENT_CEILING_MS, DEADLINE_SCALE, deadline } from "./deadline.js";
const ceiling = (ms: number): number => deadline(Math.max(ms, AGENT_CEILING_MS));

export interface AgentProcess {
  child: ChildProcessWithoutNullStreams;
  records: Rec[];
  /** stdout lines that were not valid JSON objects (must stay empty). */
  garbage: string[];
  /** The first record that did not fit outbound.json (parley only), with why. */
  schemaViolation: () => string | undefined;
  /** For a test that provokes a violation on purpose: returns it, and the test does not fail for it. */
  takeSchemaViolation: () => string | undefined;
  stderr: () => string;
  send(record: object): void;
  sendRaw(text: string): void;
  /** Resolves with the first record (from `from` on) matching `match`; rejects after `ms` (default a minute; scaled). */
  waitFor(match: (r: Rec) => boolean, ms?: number, from?: number): Promise<Rec>;
  /** Resolves once `condition()` holds (checked on each new record and stderr chunk); rejects after `ms` (scaled). */
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

/**
 * Parley processes of this test file, checked after each test: a violation fails the test during
 * which it was noticed (a process kept for the whole file included), once.
 */
const checked = new Set<AgentProcess>();
afterEach(() => {
  for (const agent of checked) {
    const violation = agent.schemaViolation();
    if (violation === undefined) continue;
    checked.delete(agent);
    throw new Error(violation);
  }
});

export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Check each stdout record against outbound.json; default: when `bin` is parley. */
  checkSchema?: boolean;
}

export function spawnAgent(bin: string, args: string[], options: SpawnOptions = {}): AgentProcess {
  // A private HOME keeps the user's own extensions and sessions out of tests.
  const home = mkdtempSync(join(tmpdir(), "parley-home-"));
  // pi 1.6's CLI runs on this Node, whatever `node` PATH finds first.
  const [command, argv] = bin === PI_NEWEST_CLI ? [process.execPath, [bin, ...args]] : [bin, args];
  const child = spawn(command, argv, {
    cwd: options.cwd ?? home,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const records: Rec[] = [];
  const garbage: string[] = [];
  const checkSchema = options.checkSchema ?? bin === PARLEY_BIN;
  let violation: string | undefined;
  let stderr = "";
  const waiters = new Set<() => void>();
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    for (const wake of [...waiters]) wake();
  });
  attachJsonlReader(child.stdout, (line) => {
    try {
      const value = JSON.parse(line) as unknown;
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        if (checkSchema && violation === undefined) {
          const problem = outboundViolation(value);
          if (problem !== undefined) violation = `${args.join(" ")}: stdout record #${records.length + 1}: ${problem}`;
        }
        records.push(value as Rec);
      } else garbage.push(line);
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

  const waitFor = (match: (r: Rec) => boolean, ms = AGENT_CEILING_MS, from = 0): Promise<Rec> =>
    new Promise((res, rej) => {
      const check = (): boolean => {
        if (violation !== undefined) {
          waiters.delete(wake);
          clearTimeout(timer);
          rej(new Error(violation));
          return true;
        }
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
        rej(new Error(`timed out after ${ceiling(ms)} ms waiting for a record; got:\n${records.map((r) => JSON.stringify(r)).join("\n")}\nstderr:\n${stderr}`));
      }, ceiling(ms));
      if (!check()) waiters.add(wake);
    });

  const until = (condition: () => boolean, ms = AGENT_CEILING_MS): Promise<void> =>
    new Promise((res, rej) => {
      const wake = (): void => {
        if (violation !== undefined) {
          waiters.delete(wake);
          clearTimeout(timer);
          rej(new Error(violation));
          return;
        }
        if (!condition()) return;
        waiters.delete(wake);
        clearTimeout(timer);
        res();
      };
      const timer = setTimeout(() => {
        waiters.delete(wake);
        rej(
          new Error(
            `timed out after ${ceiling(ms)} ms waiting for a condition; last records:\n${records
              .slice(-20)
              .map((r) => JSON.stringify(r))
              .join("\n")}\nstderr:\n${stderr}`,
          ),
        );
      }, ceiling(ms));
      waiters.add(wake);
      wake();
    });

  const proc: AgentProcess = {
    child,
    records,
    garbage,
    schemaViolation: () => violation,
    takeSchemaViolation: () => {
      checked.delete(proc);
      return violation;
    },
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
  if (checkSchema) checked.add(proc);
  return proc;
}

export const spawnParley = (args: string[], options?: SpawnOptions): AgentProcess =>
  spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", ...args], options);

export const spawnPi = (args: string[], options?: SpawnOptions): AgentProcess => spawnAgent(PI_BIN, ["--mode", "rpc", "--no-session", ...args], options);

/** pi 1.6.0 in RPC mode, on the Node running the tests (its records are not checked against parley's schema). */
export const spawnPiNewest = (args: string[], options?: SpawnOptions): AgentProcess =>
  spawnAgent(PI_NEWEST_CLI, ["--mode", "rpc", "--no-session", ...args], options);

/** The dialog request that `prompt /command` opens (waits for it). */
export async function openDialog(agent: AgentProcess, message: string, method: string): Promise<Rec> {
  const from = agent.records.length;
  agent.send({ type: "prompt", message, id: `open-${++counter}` });
  return agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === method, AGENT_CEILING_MS, from);
}
