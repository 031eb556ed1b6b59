/**
 * stdin/stdout as a transport: strict JSONL in, one record per line out. Output produced in
 * the same tick is written in one batch; a reader that went away (EPIPE) ends output quietly.
 */
import { attachJsonlReader, serializeJsonLine } from "@parley/protocol/jsonl";
import type { Transport, TransportSink } from "../rpc/transport.js";

/** Characters of output gathered before they are handed to the stream without waiting for the tick to end. */
const BATCH_FLUSH_CHARS = 64 * 1024;

export interface StdioTransportOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  maxLineBytes?: number;
  /** Called once if the output stream fails (e.g. the client closed its end of the pipe). */
  onOutputClosed?: (error: Error) => void;
}

export class StdioTransport implements Transport {
  readonly #input: NodeJS.ReadableStream;
  readonly #output: NodeJS.WritableStream;
  readonly #options: StdioTransportOptions;
  #batch: string[] = [];
  #batchLength = 0;
  #scheduled = false;
  #outputClosed = false;
  #paused = false;
  readonly #rawWrite: (chunk: string | Uint8Array, callback: () => void) => boolean;
  /** Writes handed to the stream, and those it has finished with (written or failed). */
  #issued = 0;
  #completed = 0;
  /** flush() callers, each waiting for the writes issued before it. */
  #flushWaiters: { upTo: number; resolve: () => void }[] = [];
  // One callback for every write: no closure or promise per record on the hot path.
  readonly #writeLater = (): void => this.#write();
  readonly #onWritten = (): void => {
    this.#completed++;
    if (this.#flushWaiters.length > 0) this.#releaseFlushWaiters();
  };

  constructor(options: StdioTransportOptions = {}) {
    this.#options = options;
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    // Captured before takeOverStdout() reroutes everyone else's writes.
    this.#rawWrite = this.#output.write.bind(this.#output) as (chunk: string | Uint8Array, callback: () => void) => boolean;
    this.#output.on("error", (error: Error) => {
      if (this.#outputClosed) return;
      this.#outputClosed = true;
      this.#batch = [];
      this.#completed = this.#issued;
      this.#releaseFlushWaiters();
      this.#options.onOutputClosed?.(error);
    });
  }

  start(sink: TransportSink): void {
    attachJsonlReader(this.#input, (line) => sink.line(line), {
      ...(this.#options.maxLineBytes !== undefined ? { maxLineBytes: this.#options.maxLineBytes } : {}),
      onOverflow: (info) => sink.overflow(info),
      onEnd: () => sink.end(),
    });
  }

  send(record: object): void {
    if (this.#outputClosed) return;
    const line = serializeJsonLine(record);
    this.#batch.push(line);
    this.#batchLength += line.length;
    // A synchronous flood (an extension calling setStatus in a loop) must not pile up as JS
    // strings until the next tick: hand full batches to the stream as bytes right away.
    if (this.#batchLength >= BATCH_FLUSH_CHARS) this.#write();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#writeLater);
    }
  }

  flush(): Promise<void> {
    this.#write();
    if (this.#completed >= this.#issued || this.#outputClosed) return Promise.resolve();
    return new Promise((resolve) => this.#flushWaiters.push({ upTo: this.#issued, resolve }));
  }

  #releaseFlushWaiters(): void {
    const waiting = this.#flushWaiters;
    this.#flushWaiters = [];
    for (const waiter of waiting) {
      if (this.#completed >= waiter.upTo) waiter.resolve();
      else this.#flushWaiters.push(waiter);
    }
  }

  #write(): void {
    this.#scheduled = false;
    if (this.#batch.length === 0 || this.#outputClosed) return;
    const text = this.#batch.length === 1 ? (this.#batch[0] as string) : this.#batch.join("");
    this.#batch = [];
    this.#batchLength = 0;
    this.#issued++;
    // A string goes straight to the pipe. Only when the stream is already holding output (the
    // client reads slowly) is it turned into bytes, which sit outside the JS heap and never take
    // two bytes per character. The callback runs once the chunk is handed to the OS, or failed.
    const ok = this.#rawWrite(((this.#output as { writableLength?: number }).writableLength ?? 0) > 0 ? Buffer.from(text, "utf8") : text, this.#onWritten);
    // The client is not reading: stop taking new commands until it catches up, so output that
    // commands cause cannot pile up without bound. Nothing is dropped; the pipe holds the rest.
    if (!ok && !this.#paused) {
      this.#paused = true;
      this.#input.pause();
      this.#output.once("drain", () => {
        this.#paused = false;
        this.#input.resume();
      });
    }
  }
}

/**
 * stdout belongs to the protocol: anything else that writes there (an extension's console.log, a
 * library's progress output) goes to stderr instead, where it cannot corrupt the JSONL stream.
 * Call after creating the transport, which keeps the real write for itself.
 */
export function takeOverStdout(): void {
  // process.stderr is looked up per call: creating it at start-up would cost ~1.5 ms for nothing.
  const toStderr = ((...args: Parameters<typeof process.stdout.write>) => process.stderr.write(...(args as [string]))) as typeof process.stdout.write;
  process.stdout.write = toStderr;
}
