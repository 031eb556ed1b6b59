/**
 * fd 0 belongs to the protocol. claimStdin() takes it before any extension code runs, and from
 * then on `process.stdin` is a stand-in that reads nothing: an extension (or a library it uses)
 * can neither take the protocol's input, nor pause it, nor close it. Like stdout, which
 * takeOverStdout() reroutes.
 */
import { Readable } from "node:stream";

/** fd 0, once claimed: the stream Node made for it (pipe, socket, file or terminal), read by the transport alone. */
export interface ClaimedStdin {
  readonly stream: NodeJS.ReadableStream;
}

let claimed: ClaimedStdin | undefined;

/**
 * Takes fd 0 for the protocol (see the top of this file); call it before extensions load. A
 * second call returns the first claim: after it, process.stdin is only the stand-in. `source` is
 * fd 0 as read by another thread (stuck-watchdog.ts); process.stdin, the real one, by default.
 */
export function claimStdin(source?: NodeJS.ReadableStream): ClaimedStdin {
  if (claimed !== undefined) return claimed;
  claimed = { stream: source ?? process.stdin };
  let standIn: Readable | undefined;
  Object.defineProperty(process, "stdin", {
    configurable: true,
    enumerable: true,
    get: () => (standIn ??= inertStdin()),
  });
  return claimed;
}

/** What process.stdin is once the protocol owns fd 0: a stream that never delivers anything. */
function inertStdin(): Readable {
  const stream = new Readable({ read() {} });
  return Object.assign(stream, { fd: 0, isTTY: false });
}
