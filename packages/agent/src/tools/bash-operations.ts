/**
 * Running shell commands: the process plumbing the bash tool and the `bash` RPC command share.
 * No schemas here, so the RPC command does not load TypeBox.
 */
import { existsSync, statSync } from "node:fs";
import type { TruncationResult } from "./truncate.js";
import { nodeChildProcess } from "../lazy-node.js";
import { killProcessTree, trackChild } from "../child-processes.js";
import { guardedEnv } from "../child-watchdog.js";
import type { OutputPressure } from "../output-pressure.js";

export interface BashToolDetails {
  truncation?: TruncationResult;
  /** Where the complete output was saved when it had to be truncated. */
  fullOutputPath?: string;
}

/** Pluggable command execution, so extensions can run commands remotely (e.g. over SSH). */
export interface BashOperations {
  /**
   * Run `command` in `cwd`, streaming output through `onData`.
   * Resolves with the exit code (null if killed by a signal).
   */
  exec: (
    command: string,
    cwd: string,
    options: {
      onData: (data: Buffer) => void;
      signal?: AbortSignal;
      timeout?: number;
      env?: NodeJS.ProcessEnv;
      /**
       * Where `onData`'s output goes, when it can back up: while it does, the command's output
       * is not read (the command waits on its full pipe). Operations may ignore it.
       */
      output?: OutputPressure;
    },
  ) => Promise<{ exitCode: number | null }>;
}

export interface BashSpawnContext {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export type BashSpawnHook = (context: BashSpawnContext) => BashSpawnContext;

export interface BashToolOptions {
  operations?: BashOperations;
  /** Prepended (on its own line) to every command, e.g. shell setup. */
  commandPrefix?: string;
  /** Explicit shell binary; defaults to bash. */
  shellPath?: string;
  /** Adjust command, cwd or env right before execution. */
  spawnHook?: BashSpawnHook;
  /**
   * Whether commands get the calling session's PI_SESSION_ID, PI_SESSION_FILE, PI_PROVIDER,
   * PI_MODEL and PI_REASONING_LEVEL, as pi 1.6 gives them (default true). Inherited values of
   * these names are removed either way, so a nested agent's never leak in.
   */
  exposeSessionEnvironment?: boolean;
}

export interface ShellConfig {
  shell: string;
  args: string[];
}

/** Shell used for commands: an explicit path if it exists, else bash, else sh. */
export function getShellConfig(customShellPath?: string): ShellConfig {
  if (customShellPath && existsSync(customShellPath)) return { shell: customShellPath, args: ["-c"] };
  for (const candidate of ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]) {
    if (existsSync(candidate)) return { shell: candidate, args: ["-c"] };
  }
  return { shell: existsSync("/bin/sh") ? "/bin/sh" : "sh", args: ["-c"] };
}

export const ABORTED = "aborted";
export const TIMEOUT_PREFIX = "timeout:";

/**
 * The local shell backend. Exposed (like pi's) so extensions intercepting
 * user bash commands can reuse process spawning and tree killing.
 */
export function createLocalBashOperations(options: { shellPath?: string } = {}): BashOperations {
  return {
    exec(command, cwd, { onData, signal, timeout, env, output }) {
      return new Promise((resolve, reject) => {
        if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
          reject(new Error(`Working directory does not exist: ${cwd}\nCannot execute bash commands.`));
          return;
        }
        if (signal?.aborted) {
          reject(new Error(ABORTED));
          return;
        }
        const { shell, args } = getShellConfig(options.shellPath);
        // detached: the shell leads its own process group, which we can kill as a whole.
        const child = nodeChildProcess().spawn(shell, [...args, command], {
          cwd,
          // Tagged, so that the watchdog finds the command and all it starts should parley be killed.
          env: guardedEnv(env ?? process.env),
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        });
        // Until it is done, shutdown kills the group (no child outlives parley).
        const tracked = trackChild(child.pid, { group: true });
        let settled = false;
        let timedOut = false;
        let exitCode: number | null = null;
        let exitTimer: NodeJS.Timeout | undefined;
        const timeoutTimer =
          timeout !== undefined && timeout > 0
            ? setTimeout(() => {
                timedOut = true;
                killProcessTree(child.pid);
              }, timeout * 1000)
            : undefined;
        const onAbort = () => killProcessTree(child.pid);
        signal?.addEventListener("abort", onAbort, { once: true });

        const finish = (error?: Error) => {
          if (settled) return;
          settled = true;
          tracked.dispose();
          if (timeoutTimer) clearTimeout(timeoutTimer);
          if (exitTimer) clearTimeout(exitTimer);
          signal?.removeEventListener("abort", onAbort);
          if (error) reject(error);
          else if (signal?.aborted) reject(new Error(ABORTED));
          else if (timedOut) reject(new Error(`${TIMEOUT_PREFIX}${timeout}`));
          else resolve({ exitCode });
        };

        // While the output backs up, the command's pipes are not read: it waits, instead of its
        // output waiting in our memory. Once it has exited, what is left in the pipes is read.
        let held = false;
        let exited = false;
        const release = (): void => {
          if (!held) return;
          held = false;
          child.stdout.resume();
          child.stderr.resume();
        };
        const onChunk = (data: Buffer): void => {
          onData(data);
          if (held || exited || !output?.backedUp) return;
          held = true;
          child.stdout.pause();
          child.stderr.pause();
          void output.whenWritable().then(release);
        };
        child.stdout.on("data", onChunk);
        child.stderr.on("data", onChunk);
        child.on("error", (error) => finish(error));
        child.on("exit", (code) => {
          exitCode = code;
          exited = true;
          release();
          // A background job (`cmd &`) can hold our pipes open indefinitely;
          // once the shell itself exited, give the pipes a moment to drain and stop waiting.
          exitTimer = setTimeout(() => {
            child.stdout.destroy();
            child.stderr.destroy();
            finish();
          }, 100);
        });
        child.on("close", () => finish());
      });
    },
  };
}
