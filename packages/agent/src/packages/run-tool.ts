/**
 * npm and git as pi's package commands run them: without a shell; the tool's own output goes to
 * the terminal (inherited), or is captured with a time limit when parley reads the answer. Every
 * child is tracked, so none outlives parley (child-processes.ts). Failures read as pi's:
 * `<command> <args> failed with code N`.
 */
import { trackChild } from "../child-processes.js";
import { nodeChildProcess } from "../lazy-node.js";

/** pi's limit for a command whose answer it reads (`npm view`, `git rev-parse`). */
export const NETWORK_TIMEOUT_MS = 10_000;
const MAX_CAPTURE = 1024 * 1024;

export interface RunOptions {
  cwd?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/** Runs the tool with the terminal as its output; rejects unless it exits 0. */
export function runTool(command: string, args: readonly string[], options: RunOptions = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = nodeChildProcess().spawn(command, [...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "inherit", "inherit"] });
    const tracked = trackChild(child.pid, { group: false });
    child.once("error", (error) => {
      tracked.dispose();
      reject(error);
    });
    child.once("exit", (code) => {
      tracked.dispose();
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(" ")} failed with code ${code}`));
    });
  });
}

/** Runs the tool and resolves to its trimmed output; rejects on a failure or after `timeoutMs`. */
export function captureTool(command: string, args: readonly string[], options: RunOptions & { timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = nodeChildProcess().spawn(command, [...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    const tracked = trackChild(child.pid, { group: false });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill();
          }, options.timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_CAPTURE) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_CAPTURE) stderr += d;
    });
    child.once("error", (error) => {
      clearTimeout(timer);
      tracked.dispose();
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      tracked.dispose();
      if (timedOut) reject(new Error(`${command} ${args.join(" ")} timed out after ${options.timeoutMs}ms`));
      else if (code === 0) resolve(stdout.trim());
      else
        reject(new Error(`${command} ${args.join(" ")} failed with ${code === null ? `signal ${signal ?? "unknown"}` : `code ${code}`}: ${stderr || stdout}`));
    });
  });
}
