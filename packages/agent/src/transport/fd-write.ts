/**
 * One synchronous write to a descriptor that never waits: what the descriptor takes now goes,
 * the rest comes back for the caller to queue behind it. Used where going through a Writable
 * costs more than the write itself (stdout's records, stderr's notices).
 */
import { writeSync } from "node:fs";

/**
 * Writes as much of `text` to `fd` as it takes without blocking. `fd` must be non-blocking (a
 * pipe or socket that Node opened as a stream) or a file. Returns undefined when everything was
 * written, otherwise the bytes still to write. Throws the descriptor's error if it failed (EPIPE:
 * the reader went away); "full for now" (EAGAIN) is not an error.
 */
export function writeWithoutWaiting(fd: number, text: string): Uint8Array | undefined {
  let written = 0;
  try {
    written = writeSync(fd, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EAGAIN" && code !== "EINTR") throw error;
  }
  // writeSync and Buffer encode UTF-8 alike (a lone surrogate becomes U+FFFD in both), so the
  // byte count says exactly where the rest begins.
  if (written === Buffer.byteLength(text, "utf8")) return undefined;
  return Buffer.from(text, "utf8").subarray(written);
}
