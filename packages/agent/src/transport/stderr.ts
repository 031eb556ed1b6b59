/**
 * Diagnostics to stderr without creating `process.stderr`: Node builds that stream (and its pipe
 * or TTY handle) on first access, ~1.5 ms that every start-up would pay for its one notice line.
 * A synchronous write to fd 2 says the same thing in order; if the descriptor cannot take it now
 * (EAGAIN on a non-blocking pipe), the stream takes over and queues it.
 */
import { writeSync } from "node:fs";

let useStream = false;

export function writeStderr(text: string): void {
  if (useStream) {
    process.stderr.write(text);
    return;
  }
  const bytes = Buffer.from(text, "utf8");
  let offset = 0;
  try {
    while (offset < bytes.length) offset += writeSync(2, bytes, offset);
  } catch {
    // What was not written goes through the stream, and so does everything after it.
    useStream = true;
    process.stderr.write(bytes.subarray(offset));
  }
}
