/**
 * Spawns parley with real pipes (FIFOs) as stdout and stderr, as a shell pipeline or Python's
 * subprocess gives them, where Node's spawn gives socket pairs. stdin is Node's usual one.
 */
import { spawn, spawnSync, type ChildProcessByStdio } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync } from "node:fs";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { PARLEY_BIN } from "./spawn.js";

export interface PipedParley {
  child: ChildProcessByStdio<Writable, null, null>;
  /** parley's stdout and stderr, the read ends of the FIFOs. */
  stdout: Socket;
  stderr: Socket;
  home: string;
}

/** A FIFO in `dir`: its read end here, its write end for the child (closed here once spawned). */
function fifo(dir: string, name: string): { readFd: number; writeFd: number } {
  const path = join(dir, name);
  const made = spawnSync("mkfifo", [path]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
  // The read end first (non-blocking: there is no writer yet), then the write end.
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  return { readFd, writeFd: openSync(path, constants.O_WRONLY) };
}

export function spawnParleyOnPipe(args: string[], env: NodeJS.ProcessEnv = {}): PipedParley {
  const home = mkdtempSync(join(tmpdir(), "parley-pipe-"));
  const out = fifo(home, "stdout.fifo");
  const err = fifo(home, "stderr.fifo");
  const child = spawn(process.execPath, [PARLEY_BIN, ...args], {
    cwd: home,
    env: { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent"), ...env },
    stdio: ["pipe", out.writeFd, err.writeFd] as ["pipe", number, number],
  }) as ChildProcessByStdio<Writable, null, null>;
  closeSync(out.writeFd);
  closeSync(err.writeFd);
  const stdout = new Socket({ fd: out.readFd, readable: true, writable: false });
  const stderr = new Socket({ fd: err.readFd, readable: true, writable: false });
  return { child, stdout, stderr, home };
}
