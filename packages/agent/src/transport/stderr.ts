/**
 * Diagnostics to stderr without creating `process.stderr`: Node builds that stream (and its pipe
 * or TTY handle) on first access, ~1.5 ms that every start-up would pay for its one notice line.
 * A synchronous write to fd 2 says the same thing in order; if the descriptor cannot take it now
 * (EAGAIN on a non-blocking pipe), the stream takes over and queues it.
 *
 * stderr is best effort. Once its reader has gone away (EPIPE) or the descriptor is unusable,
 * diagnostics are dropped: an error on process.stderr with no listener is an uncaught exception,
 * and parley reports those on stderr, which would fail again, forever.
 */
import { writeWithoutWaiting } from "./fd-write.js";

let useStream = false;
let closed = false;
let listening = false;

/** process.stderr, with the listener that turns its failure into "stop writing diagnostics". */
function stream(): NodeJS.WriteStream {
  const stderr = process.stderr;
  if (!listening) {
    listening = true;
    stderr.on("error", () => {
      closed = true;
    });
  }
  return stderr;
}

export function writeStderr(text: string): void {
  if (closed) return;
  if (useStream) {
    stream().write(text);
    return;
  }
  let rest: Uint8Array | undefined;
  try {
    rest = writeWithoutWaiting(2, text);
  } catch {
    closed = true;
    return;
  }
  if (rest === undefined) return;
  // What was not written goes through the stream, and so does everything after it.
  useStream = true;
  stream().write(rest);
}

/**
 * A `write` with process.stdout's signature that goes to stderr (for takeOverStdout). Once stderr
 * has failed, writes are dropped; a callback still runs, so a caller waiting on it is not stuck.
 */
export const writeToStderr = ((
  chunk: string | Uint8Array,
  encodingOrCallback?: BufferEncoding | ((error?: Error | null) => void),
  callback?: (error?: Error | null) => void,
): boolean => {
  if (!closed) return stream().write(chunk, encodingOrCallback as BufferEncoding, callback);
  const done = typeof encodingOrCallback === "function" ? encodingOrCallback : callback;
  if (done) process.nextTick(done, null);
  return true;
}) as typeof process.stdout.write;
