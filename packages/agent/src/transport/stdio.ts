/**
 * stdin/stdout as a transport: strict JSONL in, one record per line out. The first record of a
 * burst is written at once and the rest of the burst in one batch after it; a reader that went
 * away (EPIPE) ends output quietly. While the client does not read, input is paused and what is
 * sent waits in a bounded queue (back-pressure, see OutboundQueue).
 */
import { attachJsonlReader, serializeJsonLine } from "@parley/protocol/jsonl";
import type { Transport, TransportSink } from "../core/transport.js";
import { jsonLinePieces, recyclePiece } from "./json-pieces.js";
import { writeStderr } from "./stderr.js";
import { OutboundQueue, type OutboundQueueOptions } from "./outbound-queue.js";
import type { ClaimedStdin } from "./claim-stdin.js";
import { FdOutput } from "./fd-output.js";
import { takeOverStdout } from "./protocol-stdout.js";

/** Characters of output gathered before they are handed to the stream without waiting for the tick to end. */
const BATCH_FLUSH_CHARS = 64 * 1024;
/** Bytes of a long record (see #pump) made ahead of what the pipe has taken. */
const PUMP_AHEAD_BYTES = 4 * 1024 * 1024;

export interface StdioTransportOptions {
  /** Default: the claimed fd 0 if `stdin` is given, else process.stdin. */
  input?: NodeJS.ReadableStream;
  /** fd 0 taken with claimStdin(). */
  stdin?: ClaimedStdin;
  /** Default: the protocol's stdout (protocol-stdout.ts), which this takes over. */
  output?: OutputStream;
  maxLineBytes?: number;
  /** Called once if the output stream fails (e.g. the client closed its end of the pipe). */
  onOutputClosed?: (error: Error) => void;
  /** Where to say (once) that notifications are being dropped while the client is not reading. Default: stderr. */
  log?: (message: string) => void;
  /** Limits of what waits while the client is not reading (outbound-queue.ts); the defaults suit the CLI. */
  waiting?: Omit<OutboundQueueOptions, "onNotificationDropped">;
}

/** What the transport needs of its output: a Node writable stream, or the protocol's FdOutput. */
export interface OutputStream {
  write(chunk: string | Uint8Array, callback?: (error?: Error | null) => void): boolean;
  readonly writableLength?: number;
  on(event: "error", listener: (error: Error) => void): unknown;
  once(event: "drain", listener: () => void): unknown;
}

/** How long an exiting process keeps writing what a slow reader has not taken yet. */
const EXIT_GRACE_MS = 5000;

export class StdioTransport implements Transport {
  readonly #input: NodeJS.ReadableStream;
  readonly #output: OutputStream;
  readonly #options: StdioTransportOptions;
  #batch: string[] = [];
  /** A long record whose pieces are still being made and written (see #pump). */
  #producer: { pieces: Iterator<Buffer>; record: object } | undefined;
  #batchLength = 0;
  #inBurst = false;
  #outputClosed = false;
  /**
   * Output is backed up (the stream holds more than it wants): input is paused, records sent
   * meanwhile wait in #waiting, and producers that can wait do (see backedUp, whenWritable()).
   */
  #paused = false;
  readonly #waiting: OutboundQueue;
  /** whenWritable() callers; released at the drain, or if the output fails. */
  #writableWaiters: (() => void)[] = [];
  /** start() has run: input has a reader, so it may flow. */
  #started = false;
  readonly #rawWrite: RawWrite;
  /** flush() callers still waiting; released early if the output fails. */
  #flushWaiters: (() => void)[] = [];
  readonly #endBurst = (): void => {
    this.#inBurst = false;
    this.#write();
  };

  constructor(options: StdioTransportOptions = {}) {
    this.#options = options;
    this.#input = options.input ?? options.stdin?.stream ?? process.stdin;
    const output = options.output ?? takeOverStdout().output;
    this.#output = output;
    this.#rawWrite = output.write.bind(output);
    output.on("error", (error: Error) => this.#outputFailed(error));
    // An extension may end the process at any moment (process.exit, a fatal signal's default):
    // what waits is then written synchronously, so the client never gets a torn last line.
    if (output instanceof FdOutput) process.on("exit", () => this.#finishOnExit(output));
    const log = options.log ?? writeStderr;
    this.#waiting = new OutboundQueue({
      ...options.waiting,
      onNotificationDropped: (dropped) => {
        if (dropped === 1)
          log(
            "parley: the client is not reading its output; the oldest waiting notifications are dropped from now on (statuses, widgets and titles keep their latest value)\n",
          );
      },
    });
  }

  get backedUp(): boolean {
    return this.#paused && !this.#outputClosed;
  }

  whenWritable(): Promise<void> {
    if (!this.backedUp) return RESOLVED;
    return new Promise((resolve) => this.#writableWaiters.push(resolve));
  }

  start(sink: TransportSink): void {
    const options = {
      ...(this.#options.maxLineBytes !== undefined ? { maxLineBytes: this.#options.maxLineBytes } : {}),
      onOverflow: (info: { bytes: number; maxLineBytes: number }) => sink.overflow(info),
    };
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      sink.end();
    };
    // A read error (the client's socket was reset) ends the input like EOF: the agent finishes
    // what it has and shuts down, instead of waiting for input that cannot come.
    this.#input.on("error", (error: Error) => {
      writeStderr(`parley: reading stdin failed (${error.message}); treating it as the end of input\n`);
      end();
    });
    attachJsonlReader(this.#input, sink.line.bind(sink), { ...options, onEnd: end });
    this.#started = true;
    // Output sent before start (an extension's, while it loaded) may have backed up already:
    // then the input waits for the drain like any other.
    if (!this.#paused) this.#input.resume();
  }

  send(record: object): void {
    if (this.#outputClosed) return;
    // A record with a long array (a big session's messages) goes out in pieces, never as one string.
    const pieces = jsonLinePieces(record, reportCut);
    if (pieces === undefined) this.#queue(serializeJsonLine(record), record);
    else if (!this.#paused) {
      // Made one piece at a time, each when the pipe has taken the last (see #pump).
      this.#producer = { pieces, record };
      this.#pump();
      return;
    } else {
      // Behind records that already wait: made now, and waiting with them (each piece is whole UTF-8).
      for (let next = pieces.next(); !next.done && !this.#outputClosed; next = pieces.next()) this.#queue(next.value.toString("utf8"), record);
    }
    if (this.#paused) return;
    // The first record of a burst leaves at once (a dialog request should not wait a hop);
    // the rest of the burst is gathered until the microtask queue drains and written in one go.
    // A synchronous flood (an extension calling setStatus in a loop) must not pile up as JS
    // strings meanwhile: full batches are handed to the stream right away.
    if (!this.#inBurst) {
      this.#inBurst = true;
      queueMicrotask(this.#endBurst);
      this.#write();
    } else if (this.#batchLength >= BATCH_FLUSH_CHARS) this.#write();
  }

  /** Text of `record` (all of it or one piece) for the next write, or to wait while output is backed up. */
  #queue(text: string, record: object): void {
    if (this.#paused) {
      this.#waiting.push(text, record);
      return;
    }
    this.#batch.push(text);
    this.#batchLength += text.length;
  }

  async flush(): Promise<void> {
    // What waits for the drain goes out first (or never, if the client is gone).
    if (this.#paused) await this.whenWritable();
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
    // Output the stream already holds (the client reads slowly) is kept as bytes, which sit
    // outside the JS heap and never take two bytes per character.
    const chunk = (this.#output.writableLength ?? 0) > 0 ? Buffer.from(text, "utf8") : text;
    this.#toStream(chunk);
  }

  #toStream(chunk: string | Uint8Array, written?: () => void): void {
    if (this.#outputClosed) return;
    const ok = written === undefined ? this.#rawWrite(chunk) : this.#rawWrite(chunk, written);
    // The client is not reading: stop taking new commands until it catches up, so output that
    // commands cause cannot pile up without bound. Nothing is dropped; the pipe holds the rest.
    if (!ok && !this.#paused) {
      this.#paused = true;
      this.#input.pause();
      this.#output.once("drain", this.#drained);
    }
  }

  /**
   * Writes the long record's pieces while the pipe takes them, and makes more while the stream
   * holds less than PUMP_AHEAD_BYTES: the pipe always has the next bytes ready, and a slow
   * reader never makes the agent hold more than that. Output counts as backed up meanwhile, so
   * later records wait behind the record. Returns false while output is backed up. The first
   * piece may throw (a value JSON cannot hold), before anything of the record is written.
   */
  #pump(): boolean {
    const producer = this.#producer;
    if (producer === undefined) return !this.#paused;
    let done = false;
    try {
      for (;;) {
        const next = producer.pieces.next();
        if (next.done === true || this.#outputClosed) {
          done = true;
          break;
        }
        // Records gathered before it go first; the piece is bytes already, written as it is.
        this.#write();
        const piece = next.value;
        // The protocol's FdOutput calls back once the OS has the bytes and keeps no reference
        // then: the piece's buffer serves a later piece. (Another stream may keep the chunk.)
        this.#toStream(piece, this.#output instanceof FdOutput ? () => recyclePiece(piece) : undefined);
        if (this.#paused && (this.#output.writableLength ?? 0) >= PUMP_AHEAD_BYTES) return false;
      }
    } catch (error) {
      done = true;
      throw error;
    } finally {
      if (done && this.#producer === producer) this.#producer = undefined;
    }
    return !this.#paused;
  }

  /** The stream wants more: hand it what waited, until it is full again or nothing is left. */
  readonly #drained = (): void => {
    if (this.#outputClosed) return;
    if (this.#producer !== undefined) {
      // The long record's next pieces go first: records sent meanwhile wait behind it.
      this.#paused = false;
      if (!this.#pump()) return;
      this.#paused = true;
    }
    for (let text = this.#waiting.take(BATCH_FLUSH_CHARS); text !== undefined; text = this.#waiting.take(BATCH_FLUSH_CHARS)) {
      if (!this.#rawWrite(text)) {
        this.#output.once("drain", this.#drained);
        return;
      }
    }
    this.#paused = false;
    // Before start() nobody reads the input: a flowing stream would drop what arrives.
    if (this.#started) this.#input.resume();
    for (const resolve of this.#writableWaiters.splice(0)) resolve();
  };

  /** At exit: everything that waits, in order (gathered, a long record's rest, what waited for the drain), written out. */
  #finishOnExit(output: FdOutput): void {
    if (this.#outputClosed) return;
    this.#write();
    const producer = this.#producer;
    this.#producer = undefined;
    try {
      for (let next = producer?.pieces.next(); next !== undefined && next.done !== true; next = producer?.pieces.next()) this.#rawWrite(next.value);
    } catch {
      // A value that cannot be written ends the record here, as it would have without the exit.
    }
    for (let text = this.#waiting.take(BATCH_FLUSH_CHARS); text !== undefined; text = this.#waiting.take(BATCH_FLUSH_CHARS)) this.#rawWrite(text);
    output.finishSync(EXIT_GRACE_MS);
  }

  /** The output failed (EPIPE: the client closed its end): stop writing, once. */
  #outputFailed(error: Error): void {
    if (this.#outputClosed) return;
    this.#outputClosed = true;
    this.#batch = [];
    this.#producer = undefined;
    this.#waiting.clear();
    // Nobody will read what is still queued: flush() and whenWritable() callers stop waiting for it.
    for (const resolve of this.#flushWaiters.splice(0)) resolve();
    for (const resolve of this.#writableWaiters.splice(0)) resolve();
    this.#options.onOutputClosed?.(error);
  }
}

const RESOLVED = Promise.resolve();
type RawWrite = OutputStream["write"];

/** A long record that had to be cut short (see json-pieces.ts), said on stderr. */
function reportCut(error: unknown, record: object): void {
  const r = record as Record<string, unknown>;
  const what = [r["type"], r["command"]].filter((part) => typeof part === "string").join(" ") || "record";
  writeStderr(`parley: a ${what} was cut short: ${String(error)}\n`);
}
