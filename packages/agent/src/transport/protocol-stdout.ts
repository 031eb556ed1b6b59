/**
 * stdout belongs to the protocol. takeOverStdout() gives the protocol a descriptor of its own, a
 * second opening of what fd 1 is (through /proc/self/fd/1), then points fd 1 at stderr: whatever
 * else writes to fd 1 (`fs.writeSync(1, …)`, `process.stdout` and its handle, console.log, a child
 * spawned with `stdio: "inherit"`, native code) lands on stderr, where it cannot corrupt the
 * JSONL stream.
 *
 * Linux only reopens pipes, files and terminals that way. A socket (what Node's `spawn` gives a
 * child for "pipe") cannot be reopened (ENXIO): socket-stdout.ts passes it to parley itself
 * instead, at start-up. Where even that fails, the protocol stays on fd 1 and only JavaScript's
 * paths are rerouted (process.stdout and its write, so console.log too).
 */
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { isatty } from "node:tty";
import { nodeNet } from "../lazy-node.js";
import { FdOutput } from "./fd-output.js";
import { reopenStderrOnFd1, socketProtocolFd } from "./socket-stdout.js";
import { writeToStderr } from "./stderr.js";

export interface ProtocolStdout {
  /** Where protocol records go. */
  readonly output: FdOutput;
  /** True if fd 1 now points at stderr (the protocol has a descriptor of its own). */
  readonly separated: boolean;
}

let taken: ProtocolStdout | undefined;

/** Moves the protocol off fd 1 (see the top of this file). Idempotent; call before extensions load. */
export function takeOverStdout(): ProtocolStdout {
  if (taken) return taken;
  const fd = separateProtocolDescriptor();
  let output: FdOutput;
  if (fd === undefined) {
    // fd 1 stays the protocol's: its stream (made now, if nobody has yet) is kept for the
    // protocol, and everyone else's process.stdout writes to stderr.
    const stdout = process.stdout;
    const write = stdout.write.bind(stdout);
    output = asyncKind(1) ? new FdOutput(1, { stream: stdout, write: (chunk, callback) => write(chunk, callback) }) : new FdOutput(1);
    stdout.write = writeToStderr;
    Object.defineProperty(process, "stdout", { configurable: true, enumerable: true, get: () => process.stderr });
  } else {
    output = new FdOutput(fd, asyncKind(fd) ? streamFor(fd) : undefined);
    // A process.stdout made earlier is on fd 1, which is stderr now; its write goes there too
    // (it may have been replaced by a library: say it plainly).
    if (process.stdout.fd === 1) process.stdout.write = writeToStderr;
  }
  taken = { output, separated: fd !== undefined };
  return taken;
}

/** The protocol's own descriptor with fd 1 pointed at stderr, or undefined where that cannot be done. */
function separateProtocolDescriptor(): number | undefined {
  const copied = socketProtocolFd();
  if (copied !== undefined) return copied; // fd 1 already points at stderr
  let fd: number;
  try {
    fstatSync(0); // fd 0 is open, so the lowest free descriptor after closing 1 is 1
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(1);
    // A file is appended to, never truncated. A pipe is written without blocking (libuv leaves a
    // descriptor as it finds it, and a blocking write would stall everything while the client
    // does not read); the new opening's flags are its own, not the client's.
    const flags = stat.isFile() ? constants.O_APPEND : stat.isFIFO() ? constants.O_NONBLOCK : 0;
    fd = openSync("/proc/self/fd/1", constants.O_WRONLY | flags);
  } catch {
    return undefined; // a socket (ENXIO) socket-stdout.ts could not copy, no /proc
  }
  closeSync(1);
  // fd 1 must not stay free: the next file parley opens (a session) would get it. Where stderr
  // cannot be reopened (a socket too), stray writes go nowhere.
  reopenStderrOnFd1();
  appendStderrFile();
  return fd;
}

/**
 * A regular file as stderr: fd 1 writes at its end, and so must fd 2, or each would write over
 * the other from its own offset. fd 2 is reopened for appending (it lands on 2, the lowest free).
 */
function appendStderrFile(): void {
  try {
    if (!fstatSync(2).isFile() || !fstatSync(1).isFile()) return;
    closeSync(2);
  } catch {
    return; // stderr stays as it was
  }
  for (const target of ["/proc/self/fd/1", "/dev/null"]) {
    try {
      const at = openSync(target, constants.O_WRONLY | constants.O_APPEND);
      if (at === 2) return;
      closeSync(at);
    } catch {
      // the next target
    }
  }
}

/** Pipes and sockets are written asynchronously (a reader may be slow); files and terminals at once. */
function asyncKind(fd: number): boolean {
  if (isatty(fd)) return false;
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

function streamFor(fd: number): { stream: import("node:net").Socket; write: (chunk: Uint8Array, callback: (error?: Error | null) => void) => boolean } {
  const stream = new (nodeNet().Socket)({ fd, readable: false, writable: true });
  return { stream, write: (chunk, callback) => stream.write(chunk, callback) };
}
