/**
 * `pi.exec()`: one command without a shell, its output collected, as pi 1.6 runs it: a combined
 * stdout+stderr cap (`maxBuffer`, default 256 MiB) that stops the command and marks the result
 * `truncated`; a timeout and an abort signal that send SIGTERM, then SIGKILL 5 s later; a child a
 * signal ended reports 128 + the signal's number (143 for SIGTERM), never a success.
 */
import { constants as bufferConstants } from "node:buffer";
import type { ChildProcess } from "node:child_process";
import { constants as osConstants } from "node:os";
import { StringDecoder } from "node:string_decoder";
import { trackChild } from "../child-processes.js";
import { guardedEnv } from "../child-watchdog.js";
import { nodeChildProcess } from "../lazy-node.js";
import type { ExecOptions, ExecResult } from "./types.js";

const DEFAULT_MAX_BUFFER = Math.min(256 * 1024 * 1024, bufferConstants.MAX_STRING_LENGTH);
/** How long a command asked to stop (SIGTERM) has before it is killed. */
const FORCE_KILL_AFTER_MS = 5000;
/** After the child exits, how long its pipes may stay quiet (held open by a descendant) before they are let go. */
const EXIT_STDIO_GRACE_MS = 100;

export async function exec(command: string, args: string[], options: ExecOptions, cwd: string): Promise<ExecResult> {
  const maxBuffer = options.maxBuffer ?? DEFAULT_MAX_BUFFER;
  if (!Number.isInteger(maxBuffer) || maxBuffer < 0 || maxBuffer > bufferConstants.MAX_STRING_LENGTH) {
    throw new RangeError(`maxBuffer must be an integer between 0 and ${bufferConstants.MAX_STRING_LENGTH} bytes`);
  }
  const child = nodeChildProcess().spawn(command, args, {
    cwd: options.cwd ?? cwd,
    env: guardedEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  // pi.exec() children end with parley too.
  const tracked = trackChild(child.pid, { group: false });
  let stdout = "";
  let stderr = "";
  const decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };
  let bytes = 0;
  let truncated = false;
  let killed = false;
  let forceKill: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (killed) return;
    killed = true;
    child.kill("SIGTERM");
    forceKill = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }, FORCE_KILL_AFTER_MS);
  };
  const signal = options.signal;
  if (signal?.aborted) stop();
  else signal?.addEventListener("abort", stop, { once: true });
  const timeout = options.timeout !== undefined && options.timeout > 0 ? setTimeout(stop, options.timeout) : undefined;

  // Only the bytes within the cap are kept; past it both pipes close (a descendant still writing
  // must not keep the wait going) and the command is stopped.
  const withinCap = (data: Buffer): Buffer | undefined => {
    if (truncated) return undefined;
    const room = maxBuffer - bytes;
    if (data.length <= room) {
      bytes += data.length;
      return data;
    }
    truncated = true;
    child.stdout?.destroy();
    child.stderr?.destroy();
    stop();
    return room > 0 ? data.subarray(0, room) : undefined;
  };
  child.stdout?.on("data", (data: Buffer) => {
    const kept = withinCap(data);
    if (kept) stdout += decoders.stdout.write(kept);
  });
  child.stderr?.on("data", (data: Buffer) => {
    const kept = withinCap(data);
    if (kept) stderr += decoders.stderr.write(kept);
  });

  let code: number | null;
  try {
    code = await childEnded(child);
  } catch (error) {
    // A command that cannot start (ENOENT, …) is a failed run, not an extension error.
    code = 1;
    if (!stderr) stderr = error instanceof Error ? error.message : String(error);
  } finally {
    tracked.dispose();
    clearTimeout(timeout);
    clearTimeout(forceKill);
    signal?.removeEventListener("abort", stop);
  }
  // A cut output keeps no half character at its end.
  if (!truncated) {
    stdout += decoders.stdout.end();
    stderr += decoders.stderr.end();
  }
  const exitCode = code ?? (child.signalCode ? 128 + (osConstants.signals[child.signalCode] ?? 0) : 1);
  // A truncated result never reads as a success.
  return { stdout, stderr, code: truncated && exitCode === 0 ? 1 : exitCode, killed, truncated };
}

/**
 * The child's exit code (null when a signal ended it), once its pipes are done: at their end, or
 * once they have been quiet for a moment after the exit (a detached descendant may hold them open).
 */
function childEnded(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    let exited = false;
    let exitCode: number | null = null;
    let settled = false;
    let idle: NodeJS.Timeout | undefined;
    let open = (child.stdout ? 1 : 0) + (child.stderr ? 1 : 0);
    const finish = (code: number | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(code);
    };
    const armIdle = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => finish(exitCode), EXIT_STDIO_GRACE_MS);
    };
    const ended = (): void => {
      open--;
      if (exited && open <= 0) finish(exitCode);
    };
    child.stdout?.once("end", ended);
    child.stderr?.once("end", ended);
    // Output still arriving after the exit keeps the wait going, so none of it is lost.
    const onData = (): void => {
      if (exited && !settled) armIdle();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("error", (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      reject(error);
    });
    child.once("exit", (code) => {
      exited = true;
      exitCode = code;
      if (open <= 0) finish(code);
      else armIdle();
    });
    child.once("close", (code) => finish(code));
  });
}
