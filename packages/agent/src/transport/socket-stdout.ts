/**
 * A descriptor of its own for the protocol when stdout is a socket (what Node's `spawn` gives a
 * child for "pipe"). Linux will not reopen a socket through /proc, and Node has no dup(); but a
 * descriptor passed over a Unix socket (SCM_RIGHTS, as Node passes handles to a child) arrives as
 * a new descriptor for the same socket. parley passes fd 1 to itself, keeps the copy for the
 * protocol, closes fd 1, then passes stderr, whose copy lands on fd 1, the lowest free descriptor.
 *
 * It runs once, early, before anything else of parley's is under way, so nothing can take fd 1
 * while it is free; the copies' handles are never closed (closing one closes its descriptor).
 */
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { writeStderr } from "./stderr.js";

/** Where the copying stops waiting: it takes a few loop turns; past this, something is wrong. */
const GIVE_UP_MS = 2000;

let protocolCopy: number | undefined;

/** The protocol's copy of a socket stdout, once separateSocketStdout() has made it. */
export function socketProtocolFd(): number | undefined {
  return protocolCopy;
}

/** True where the descriptor is a socket. */
export function isSocket(fd: number): boolean {
  try {
    return fstatSync(fd).isSocket();
  } catch {
    return false;
  }
}

/**
 * Where fd 1 is a socket: gives the protocol a copy and points fd 1 at stderr (or /dev/null). Call
 * once, before anything else starts; a failure leaves fd 1 as it was (the JavaScript-only
 * rerouting then applies, see protocol-stdout.ts).
 */
export async function separateSocketStdout(): Promise<void> {
  if (protocolCopy !== undefined || !isSocket(1)) return;
  try {
    fstatSync(0); // fd 0 is open, so the lowest free descriptor after closing 1 is 1
  } catch {
    return;
  }
  const pipes = pipeBinding();
  if (!pipes) return;
  let fd1Closed = false;
  try {
    const channel = await openChannel(pipes);
    try {
      const copy = await channel.pass(1);
      closeSync(1);
      fd1Closed = true;
      if (isSocket(2)) {
        const landed = await channel.pass(2);
        if (landed !== 1) throw new Error(`stderr's copy landed on ${landed}`);
      } else {
        reopenStderrOnFd1();
      }
      protocolCopy = copy;
    } finally {
      channel.close();
    }
  } catch (error) {
    if (fd1Closed) {
      // fd 1 must not stay free (the next file parley opened would get it); the protocol keeps
      // nothing: it cannot go back to fd 1, so this is said.
      fillFd1();
      writeStderr(`parley: could not give the protocol its own descriptor (${error instanceof Error ? error.message : String(error)})\n`);
    }
  }
}

/** With fd 1 free: stderr opened again onto it (the lowest free descriptor), else /dev/null. */
export function reopenStderrOnFd1(): void {
  for (const target of ["/proc/self/fd/2", "/dev/null"]) {
    try {
      const at = openSync(target, constants.O_WRONLY | constants.O_APPEND);
      if (at === 1) return;
      closeSync(at);
    } catch {
      // the next target
    }
  }
}

function fillFd1(): void {
  try {
    fstatSync(1);
  } catch {
    reopenStderrOnFd1();
  }
}

/** What parley uses of Node's pipe binding (libuv pipes, with handle passing). */
interface PipeHandle {
  readonly fd: number;
  pendingHandle?: PipeHandle | null;
  onread?: () => void;
  onconnection?: (status: number, accepted: PipeHandle | undefined) => void;
  open(fd: number): number;
  bind(name: string): number;
  listen(backlog: number): number;
  connect(request: object, name: string): number;
  readStart(): number;
  readStop(): number;
  close(callback?: () => void): void;
  writeUtf8String(request: object, text: string, handle: PipeHandle): number;
}
interface PipeBinding {
  Pipe: new (kind: number) => PipeHandle;
  PipeConnectWrap: new () => { oncomplete?: (status: number) => void };
  WriteWrap: new () => { handle?: PipeHandle; oncomplete?: () => void; async?: boolean };
  kinds: { SOCKET: number; SERVER: number; IPC: number };
}

/** Node's pipe binding (process.binding keeps it for compatibility), or undefined where it is gone. */
function pipeBinding(): PipeBinding | undefined {
  try {
    const binding: unknown = Reflect.get(process, "binding");
    if (typeof binding !== "function") return undefined;
    const { Pipe, PipeConnectWrap, constants: kinds } = binding("pipe_wrap");
    const { WriteWrap } = binding("stream_wrap");
    if (typeof Pipe !== "function" || typeof PipeConnectWrap !== "function" || typeof WriteWrap !== "function") return undefined;
    if (typeof kinds?.IPC !== "number") return undefined;
    return { Pipe, PipeConnectWrap, WriteWrap, kinds };
  } catch {
    return undefined;
  }
}

interface Channel {
  /** Passes `fd` through the channel; resolves with the new descriptor it arrived as. */
  pass(fd: number): Promise<number>;
  close(): void;
}

/** A connected pair of IPC pipes on an abstract socket (no file in the filesystem). */
function openChannel(pipes: PipeBinding): Promise<Channel> {
  const { Pipe, PipeConnectWrap, WriteWrap, kinds } = pipes;
  const name = `\0parley-stdout-${process.pid}-${Math.random().toString(36).slice(2)}`;
  return withDeadline(
    new Promise<Channel>((resolve, reject) => {
      const server = new Pipe(kinds.SERVER);
      const sender = new Pipe(kinds.IPC);
      if (server.bind(name) !== 0 || server.listen(1) !== 0) return reject(new Error("no local socket"));
      let arrived: ((fd: number) => void) | undefined;
      server.onconnection = (status, accepted) => {
        // The accepted end is a plain socket; an IPC pipe over its descriptor receives handles.
        // (That descriptor is closed once, through the receiver; the accepted wrapper is left be.)
        const receiver = new Pipe(kinds.IPC);
        if (status !== 0 || !accepted || receiver.open(accepted.fd) !== 0) return reject(new Error("no connection"));
        receiver.onread = () => {
          const copy = receiver.pendingHandle;
          receiver.pendingHandle = null;
          if (copy) arrived?.(copy.fd);
        };
        if (receiver.readStart() !== 0) return reject(new Error("cannot read"));
        resolve({
          pass: (fd) =>
            withDeadline(
              new Promise<number>((resolvePass, rejectPass) => {
                const handle = new Pipe(kinds.SOCKET);
                // libuv never closes descriptors 0-2, so closing this wrapper later is harmless.
                if (handle.open(fd) !== 0) return rejectPass(new Error(`cannot wrap fd ${fd}`));
                arrived = (copy) => {
                  handle.close();
                  resolvePass(copy);
                };
                const request = new WriteWrap();
                request.handle = sender;
                request.oncomplete = () => {};
                request.async = false;
                if (sender.writeUtf8String(request, "{}\n", handle) !== 0) rejectPass(new Error(`cannot pass fd ${fd}`));
              }),
            ),
          close: () => {
            receiver.readStop();
            receiver.close();
            sender.close();
            server.close();
          },
        });
      };
      const connecting = new PipeConnectWrap();
      connecting.oncomplete = (status) => {
        if (status !== 0) reject(new Error("cannot connect"));
      };
      if (sender.connect(connecting, name) !== 0) reject(new Error("cannot connect"));
    }),
  );
}

function withDeadline<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), GIVE_UP_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
