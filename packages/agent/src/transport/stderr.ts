/**
 * Diagnostics to stderr, best effort. Once its reader has gone away (EPIPE) or the descriptor is
 * unusable, diagnostics are dropped: an error on process.stderr with no listener is an uncaught
 * exception, and parley reports those on stderr, which would fail again, forever.
 */

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
  if (!closed) stream().write(text);
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
