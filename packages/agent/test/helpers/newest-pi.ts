/**
 * pi 1.6 (the `pi-newest` devDependency) and parley side by side, for the tests that run the
 * same command in both and compare: each side's command line, a private world per side, a run
 * of a short-lived command (its exit status and output), and an RPC agent of either side.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { NO_KEYS } from "./pi-home.js";
import { CLI } from "./offline-agents.js";
import { type AgentProcess, ROOT, type SpawnOptions, spawnAgent } from "./spawn.js";

/** pi 1.6.0's CLI entry, run with this Node. */
export const NEWEST_PI = join(ROOT, "node_modules/pi-newest/dist/cli.js");

export type Side = "pi" | "parley";
export const SIDES: Side[] = ["pi", "parley"];

/** The command that starts a side: its CLI entry under this Node. */
export const sideCommand = (side: Side): [string, ...string[]] => [process.execPath, side === "pi" ? NEWEST_PI : CLI.parley];

export interface SideWorld {
  /** The folder the side's world is in. */
  base: string;
  home: string;
  /** `<home>/.pi/agent`, created. */
  agentDir: string;
  /** `<base>/project`, created. */
  cwd: string;
  /** Provider keys blanked, HOME and PI_CODING_AGENT_DIR set, no colours; `extra` on top. */
  env: NodeJS.ProcessEnv;
}

/** A side's private world in `base`: a HOME with its agent directory and a project folder. */
export function sideWorld(base: string, extra: NodeJS.ProcessEnv = {}): SideWorld {
  const home = join(base, "home");
  const agentDir = join(home, ".pi", "agent");
  const cwd = join(base, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { base, home, agentDir, cwd, env: { ...NO_KEYS, HOME: home, PI_CODING_AGENT_DIR: agentDir, NO_COLOR: "1", ...extra } };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  /** Laid over this process's environment. */
  env: NodeJS.ProcessEnv;
  /** How long the command may take: past it, it is killed and the run fails. */
  ms: number;
  /** Written to stdin; without it stdin is closed from the start. */
  input?: string;
  /** Leaves stdin open after `input` (the caller ends it from `onStdout`). */
  holdStdin?: boolean;
  /** Each stdout chunk, with all of stdout so far. */
  onStdout?: (stdout: string, child: ChildProcess) => void;
}

/** Runs a side's command to its end: its exit status and output. */
export function runSide(side: Side, args: string[], options: CliOptions): Promise<CliResult> {
  const [bin, ...pre] = sideCommand(side);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...pre, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      options.onStdout?.(stdout, child);
    });
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${side} ${args.join(" ")} did not end: ${stdout}\n${stderr}`));
    }, options.ms);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (options.input === undefined) return;
    if (options.holdStdin) child.stdin?.write(options.input);
    else child.stdin?.end(options.input);
  });
}

/** Calls `onLine` with each complete line of stdout, as it comes. */
export function stdoutLines(onLine: (line: string) => void): (stdout: string) => void {
  let done = 0;
  return (stdout) => {
    const end = stdout.lastIndexOf("\n");
    if (end < done) return;
    for (const line of stdout.slice(done, end).split("\n")) onLine(line);
    done = end + 1;
  };
}

/** A side's agent in RPC mode (or any mode `args` give): parley's records checked against the schema, pi's not. */
export function startSide(side: Side, args: string[], options: Omit<SpawnOptions, "checkSchema">): AgentProcess {
  const [bin, ...pre] = sideCommand(side);
  return spawnAgent(bin, [...pre, ...args], { ...options, checkSchema: side === "parley" });
}

/** Runs a scenario on both sides at once. */
export async function sideBySide<T>(scenario: (side: Side) => Promise<T>): Promise<Record<Side, T>> {
  const [pi, parley] = await Promise.all([scenario("pi"), scenario("parley")]);
  return { pi, parley };
}
