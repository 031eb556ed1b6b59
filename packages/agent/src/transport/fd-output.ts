/**
 * The protocol's output descriptor as a stream that can still finish its work when the process
 * exits. Node's own streams lose what a pipe has not taken yet when an extension calls
 * `process.exit()` (a torn last line); this one hands the underlying stream one chunk at a time,
 * so it always knows which bytes the OS has not taken (the chunk in flight, less what the
 * handle's queue says was written, then everything queued behind it), and `finishSync()` writes
 * exactly those with blocking-style writes, from the 'exit' handler.
 */
import { EventEmitter } from "node:events";
import { writeSync } from "node:fs";

/** What FdOutput needs of the stream Node made for the descriptor (net.Socket, tty.WriteStream, …). */
export interface InnerStream {
  on(event: "error", listener: (error: Error) => void): unknown;
  /** libuv's bytes not yet taken by the OS, for pipes and sockets. */
  readonly _handle?: { readonly writeQueueSize?: number } | null;
}
export type InnerWrite = (chunk: Uint8Array, callback: (error?: Error | null) => void) => unknown;

interface Pending {
  readonly bytes: Buffer;
  readonly callbacks: ((error?: Error | null) => void)[];
}

/** Bytes queued beyond which write() asks the writer to wait for 'drain' (Node's default for streams). */
const HIGH_WATER_BYTES = 64 * 1024;

export class FdOutput extends EventEmitter {
  readonly fd: number;
  readonly #write: InnerWrite | undefined;
  readonly #inner: InnerStream | undefined;
  #queue: Pending[] = [];
  #queuedBytes = 0;
  #inFlight: Pending | undefined;
  #needDrain = false;
  #failed = false;

  /**
   * `inner` and `write`: the stream for the descriptor and its raw write; without them every
   * write is synchronous (a regular file, where a write never waits for a reader).
   */
  constructor(fd: number, inner?: { stream: InnerStream; write: InnerWrite }) {
    super();
    this.fd = fd;
    this.#inner = inner?.stream;
    this.#write = inner?.write;
    this.#inner?.on("error", (error) => this.#fail(error));
  }

  /** Bytes handed to this stream that the OS has not confirmed yet. */
  get writableLength(): number {
    return this.#queuedBytes + (this.#inFlight?.bytes.length ?? 0);
  }

  write(chunk: string | Uint8Array, callback?: (error?: Error | null) => void): boolean {
    if (this.#failed) {
      if (callback) queueMicrotask(() => callback(new Error("the output is closed")));
      return false;
    }
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.#write === undefined) {
      try {
        writeFully(this.fd, bytes, Number.POSITIVE_INFINITY);
      } catch (error) {
        this.#fail(error as Error);
        if (callback) queueMicrotask(() => callback(error as Error));
        return false;
      }
      if (callback) queueMicrotask(() => callback());
      return true;
    }
    this.#queue.push({ bytes, callbacks: callback ? [callback] : [] });
    this.#queuedBytes += bytes.length;
    this.#pump();
    const ok = this.writableLength < HIGH_WATER_BYTES;
    if (!ok) this.#needDrain = true;
    return ok;
  }

  #pump(): void {
    if (this.#inFlight !== undefined || this.#failed) return;
    const next = this.#queue.shift();
    if (next === undefined) {
      if (this.#needDrain) {
        this.#needDrain = false;
        this.emit("drain");
      }
      return;
    }
    this.#queuedBytes -= next.bytes.length;
    this.#inFlight = next;
    (this.#write as InnerWrite)(next.bytes, (error) => {
      if (this.#inFlight === next) this.#inFlight = undefined;
      for (const callback of next.callbacks) callback(error);
      if (error) this.#fail(error);
      else this.#pump();
    });
  }

  #fail(error: Error): void {
    if (this.#failed) return;
    this.#failed = true;
    const pending = [...(this.#inFlight ? [this.#inFlight] : []), ...this.#queue];
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#inFlight = undefined;
    for (const item of pending) for (const callback of item.callbacks) callback(error);
    this.emit("error", error);
  }

  /**
   * Writes what the OS has not taken, synchronously (the process is exiting: no event loop will
   * run the inner stream again). Gives up after `graceMs` of a reader that takes nothing, or when
   * the reader is gone.
   */
  finishSync(graceMs: number): void {
    if (this.#failed || this.#write === undefined) return;
    const parts: Buffer[] = [];
    const inFlight = this.#inFlight;
    if (inFlight) {
      const unwritten = this.#inner?._handle?.writeQueueSize;
      // Without the handle's count the in-flight chunk's progress is unknown: writing it again
      // could repeat bytes, so only what is queued behind it is written (it may stay torn).
      if (typeof unwritten === "number" && unwritten > 0)
        parts.push(inFlight.bytes.subarray(inFlight.bytes.length - Math.min(unwritten, inFlight.bytes.length)));
    }
    for (const item of this.#queue) parts.push(item.bytes);
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#inFlight = undefined;
    const deadline = Date.now() + graceMs;
    try {
      for (const part of parts) writeFully(this.fd, part, deadline);
    } catch {
      // The reader is gone or never read: nothing more can be done at exit.
    }
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `bytes` to `fd`; a non-blocking descriptor that is full (EAGAIN) is retried until `deadline`. */
function writeFully(fd: number, bytes: Uint8Array, deadline: number): void {
  let at = 0;
  let pauseMs = 1;
  while (at < bytes.length) {
    try {
      at += writeSync(fd, bytes, at, bytes.length - at);
      pauseMs = 1;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN" || Date.now() >= deadline) throw error;
      Atomics.wait(sleeper, 0, 0, pauseMs);
      pauseMs = Math.min(pauseMs * 2, 20);
    }
  }
}
