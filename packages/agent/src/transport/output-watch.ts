/**
 * Notices at once when the reader of our stdout goes away, even while parley has nothing to
 * write (a silent shell command runs): otherwise the closed pipe would only show at the next
 * write (EPIPE), and whatever runs meanwhile would keep running for nobody.
 *
 * - A socket (what Node's `spawn` gives a child for "pipe"): a zero-length write fails with
 *   EPIPE once the peer has closed, so it is tried on a timer.
 * - A pipe: a zero-length write to a pipe always succeeds, and Node exposes no poll(2); a GNU
 *   `tail -f /dev/null` sharing the descriptor polls it for us (it exits on SIGPIPE as soon as
 *   the pipe has no reader; `-s 0.1`: within a tenth of a second). Without such a tail, nothing is
 *   noticed early.
 * - A file or terminal has no reader to lose.
 */
import { closeSync, constants, fstatSync, openSync, writeSync } from "node:fs";
import { toDisposable, type Disposable } from "@parley/protocol/disposable";
import { nodeChildProcess } from "../lazy-node.js";
import { trackChild } from "../child-processes.js";

const SOCKET_PROBE_MS = 200;

/** Calls `onClosed` once when nobody reads `fd` any more; disposing the result stops watching. */
export function watchOutputClosed(fd: number, onClosed: () => void): Disposable {
  let kind: "socket" | "pipe" | undefined;
  try {
    const stat = fstatSync(fd);
    kind = stat.isSocket() ? "socket" : stat.isFIFO() ? "pipe" : undefined;
  } catch {
    return toDisposable(() => {});
  }
  let done = false;
  const closed = (): void => {
    if (done) return;
    done = true;
    stop();
    onClosed();
  };
  let stop: () => void = () => {};
  if (kind === "socket") {
    const timer = setInterval(() => {
      try {
        writeSync(fd, "");
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EPIPE" || code === "ECONNRESET" || code === "ENOTCONN") closed();
      }
    }, SOCKET_PROBE_MS);
    // Watching must never be what keeps parley alive.
    timer.unref();
    stop = () => clearInterval(timer);
  } else if (kind === "pipe") {
    let child: ReturnType<ReturnType<typeof nodeChildProcess>["spawn"]>;
    // The child gets an opening of the pipe of its own: libuv makes a child's stdio blocking,
    // and on a shared opening that would make parley's writes block too.
    let own: number | undefined;
    try {
      own = openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch {
      own = undefined;
    }
    try {
      // --pid: it also ends within 0.1 s of parley however parley ends (even SIGKILL), so it never
      // holds the pipe open after us (the reader would wait for an EOF that does not come).
      child = nodeChildProcess().spawn("tail", ["-f", "-s", "0.1", `--pid=${process.pid}`, "/dev/null"], { stdio: ["ignore", own ?? fd, "ignore"] });
    } catch {
      return toDisposable(() => {});
    } finally {
      if (own !== undefined) closeSync(own);
    }
    const tracked = trackChild(child.pid, { group: false });
    child.on("error", () => tracked.dispose()); // no tail here: nothing to watch with
    child.on("exit", (_code, signal) => {
      tracked.dispose();
      if (signal === "SIGPIPE") closed();
    });
    child.unref();
    stop = () => {
      tracked.dispose();
      child.kill("SIGKILL");
    };
  }
  return toDisposable(() => {
    done = true;
    stop();
  });
}
