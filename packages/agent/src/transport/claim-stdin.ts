/**
 * fd 0 belongs to the protocol. claimStdin() takes it before any extension code runs, and from
 * then on `process.stdin` is a stand-in that reads nothing: an extension (or a library it uses)
 * can neither take the protocol's input, nor pause it, nor close it. Like stdout, which
 * takeOverStdout() reroutes.
 *
 * A pipe or a socket is read without Node's Readable machinery: a socket that reads into one
 * reused buffer (net.Socket's `onread`) and hands each chunk to one function. A fresh process runs
 * every function on the input path a few thousand times before V8's optimising compiler takes it
 * up, and on a 2-CPU machine each of those compile jobs holds up the record in flight by
 * milliseconds; Readable's read path alone is about ten such functions (the bench README has the
 * numbers). A file or a terminal is read through the stream Node makes for it, as before.
 */
import { fstatSync } from "node:fs";
import { Socket, type ConnectOpts, type SocketConstructorOpts } from "node:net";
import { Readable } from "node:stream";

/** Bytes per read: what a Linux pipe holds, so one read takes all a writer could put in. */
const READ_BUFFER_BYTES = 64 * 1024;

/** fd 0, once claimed. Either way `stream` pauses and resumes input and emits "end" and "error". */
export type ClaimedStdin =
  /** A pipe or socket: `stream` emits no "data"; each chunk read goes to `onChunk`, in a buffer
   * that is reused for the next read (copy what you keep). Reading starts with `stream.resume()`. */
  | { readonly kind: "socket"; readonly stream: Socket; onChunk: (chunk: Uint8Array) => void }
  /** A file or terminal: the stream Node made for it, with "data" events as usual. */
  | { readonly kind: "stream"; readonly stream: NodeJS.ReadableStream };

/** True if fd is a pipe or a socket (not a file, a terminal, or closed). */
export function isPipeOrSocket(fd: number): boolean {
  if (process.platform === "win32") return false;
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

let claimed: ClaimedStdin | undefined;

/**
 * Takes fd 0 for the protocol (see the top of this file); call it before extensions load. A
 * second call returns the first claim: after it, process.stdin is only the stand-in.
 */
export function claimStdin(): ClaimedStdin {
  if (claimed !== undefined) return claimed;
  claimed = (isPipeOrSocket(0) && socketOnStdin()) || { kind: "stream", stream: process.stdin };
  let standIn: Readable | undefined;
  Object.defineProperty(process, "stdin", {
    configurable: true,
    enumerable: true,
    get: () => (standIn ??= inertStdin()),
  });
  return claimed;
}

/** fd 0 as a paused socket with `onread`; undefined if Node cannot open it as one. */
function socketOnStdin(): ClaimedStdin | undefined {
  // Set once the socket exists; the transport replaces its onChunk before it resumes reading.
  let claim: Extract<ClaimedStdin, { kind: "socket" }> | undefined;
  // Node's constructor takes `onread` (it is how a socket made from an fd gets one); the type
  // declarations list it for connect() only.
  const options: SocketConstructorOpts & ConnectOpts = {
    fd: 0,
    readable: true,
    writable: false,
    // The other end may be this process's stdout too (one socket on fds 0 and 1): the end of
    // input must not shut down the socket's sending side.
    allowHalfOpen: true,
    onread: {
      buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
      callback: (bytes, buffer) => {
        claim?.onChunk(buffer.subarray(0, bytes));
        return true;
      },
    },
  };
  let socket: Socket;
  try {
    socket = new Socket(options);
  } catch {
    // A kind of socket Node cannot open as a stream (a datagram socket): process.stdin decides.
    return undefined;
  }
  // The constructor starts reading; nothing is read before the event loop turns, so pausing here
  // leaves every byte in the kernel until the transport is ready for it.
  socket.pause();
  claim = { kind: "socket", stream: socket, onChunk: () => {} };
  return claim;
}

/** What process.stdin is once the protocol owns fd 0: a stream that never delivers anything. */
function inertStdin(): Readable {
  const stream = new Readable({ read() {} });
  return Object.assign(stream, { fd: 0, isTTY: false });
}
