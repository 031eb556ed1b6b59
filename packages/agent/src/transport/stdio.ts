/**
 * stdin/stdout as a transport: strict JSONL in, one record per line out. The first record of a
 * burst is written at once and the rest of the burst in one batch after it; a reader that went
 * away (EPIPE) ends output quietly.
 */
import { attachJsonlReader, serializeJsonLine } from "@parley/protocol/jsonl";
import type { Transport, TransportSink } from "../rpc/transport.js";
import { writeToStderr } from "./stderr.js";

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
  readonly #output: NodeJS.WritableStream & { writableLength?: number };
  readonly #options: StdioTransportOptions;
  #batch: string[] = [];
  #batchLength = 0;
  #inBurst = false;
  #outputClosed = false;
  #paused = false;
  readonly #rawWrite: RawWrite;
  /** flush() callers still waiting; released early if the output fails. */
  #flushWaiters: (() => void)[] = [];
  // Bound once: the hot path allocates no closure per record. The end of a burst is scheduled
  // with a plain promise job rather than queueMicrotask, which wraps every call in an async resource.
  readonly #endBurst = (): void => {
    this.#inBurst = false;
    this.#write();
  };

  constructor(options: StdioTransportOptions = {}) {
    this.#options = options;
    this.#input = options.input ?? process.stdin;
    this.#output = options.output ?? process.stdout;
    // Captured before takeOverStdout() reroutes everyone else's writes.
    this.#rawWrite = this.#output.write.bind(this.#output) as RawWrite;
    this.#output.on("error", (error: Error) => {
      if (this.#outputClosed) return;
      this.#outputClosed = true;
      this.#batch = [];
      // Nobody will read what is still queued: flush() callers stop waiting for it.
      for (const resolve of this.#flushWaiters.splice(0)) resolve();
      this.#options.onOutputClosed?.(error);
    });
  }

  start(sink: TransportSink): void {
    attachJsonlReader(this.#input, sink.line.bind(sink), {
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
    // The first record of a burst leaves at once (a dialog request should not wait a hop);
    // the rest of the burst is gathered until the microtask queue drains and written in one go.
    // A synchronous flood (an extension calling setStatus in a loop) must not pile up as JS
    // strings meanwhile: full batches are handed to the stream right away.
    if (!this.#inBurst) {
      this.#inBurst = true;
      void RESOLVED.then(this.#endBurst);
      this.#write();
    } else if (this.#batchLength >= BATCH_FLUSH_CHARS) this.#write();
  }

  flush(): Promise<void> {
    this.#write();
    if (this.#outputClosed || (this.#output.writableLength ?? 0) === 0) return Promise.resolve();
    // Writes complete in order: an empty write's callback runs once everything before it has
    // been handed to the OS, or failed (the reader went away), so this always settles.
    return new Promise((resolve) => {
      this.#flushWaiters.push(resolve);
      this.#rawWrite("", () => {
        const at = this.#flushWaiters.indexOf(resolve);
        if (at !== -1) this.#flushWaiters.splice(at, 1);
        resolve();
      });
    });
  }

  #write(): void {
    if (this.#batch.length === 0 || this.#outputClosed) return;
    const text = this.#batch.length === 1 ? (this.#batch[0] as string) : this.#batch.join("");
    this.#batch = [];
    this.#batchLength = 0;
    // A string goes straight to the pipe. Only when the stream is already holding output (the
    // client reads slowly) is it turned into bytes, which sit outside the JS heap and never take
    // two bytes per character.
    const ok = this.#rawWrite((this.#output.writableLength ?? 0) > 0 ? Buffer.from(text, "utf8") : text);
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

const RESOLVED = Promise.resolve();
type RawWrite = (chunk: string | Uint8Array, callback?: (error?: Error | null) => void) => boolean;

/**
 * stdout belongs to the protocol: anything else that writes there (an extension's console.log, a
 * library's progress output) goes to stderr instead, where it cannot corrupt the JSONL stream.
 * Call after creating the transport, which keeps the real write for itself.
 */
export function takeOverStdout(): void {
  // process.stderr is created on the first such write: at start-up it would cost ~1.5 ms for nothing.
  process.stdout.write = writeToStderr;
}
