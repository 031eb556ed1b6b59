/**
 * Strict JSONL framing, as pi's RPC protocol defines it.
 *
 * - LF (0x0A) is the only record separator; one trailing CR before it is stripped.
 * - U+2028 / U+2029 and lone CRs are ordinary characters. That is why this never uses
 *   node:readline, which also splits on them.
 * - Splitting is done on bytes: 0x0A never occurs inside a UTF-8 multi-byte sequence, so
 *   each complete line can be decoded once, and characters split across chunks survive.
 */

const LF = 0x0a;
const CR = 0x0d;

/** 128 MiB: generous for big tool results, small enough to never threaten the heap. */
export const DEFAULT_MAX_LINE_BYTES = 128 * 1024 * 1024;

export interface JsonlOverflowInfo {
  /** Size in bytes of the discarded line, without its LF (and without a CR before it). */
  bytes: number;
  maxLineBytes: number;
}

export interface JsonlReaderOptions {
  /** Lines longer than this (in bytes, LF and a CR before it excluded) are discarded. */
  maxLineBytes?: number;
  /** Called once per discarded line, when that line ends. */
  onOverflow?: (info: { bytes: number; maxLineBytes: number }) => void;
  /**
   * The chunks pushed are never modified afterwards (true for a stream's chunks), so the
   * splitter may keep them without copying. Default false: a caller may reuse its buffer.
   */
  chunksAreImmutable?: boolean;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Push bytes (or strings), receive complete lines. No streams, no I/O.
 *
 * Linear time: only the newly arrived chunk is searched for LF, pending pieces of an
 * incomplete line are kept in a list and concatenated once when the line completes.
 */
export class JsonlLineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: ((info: JsonlOverflowInfo) => void) | undefined;
  readonly #maxLineBytes: number;
  readonly #immutable: boolean;

  /** Buffered pieces of the current incomplete line (empty while discarding). */
  #pending: Buffer[] = [];
  /** Bytes seen so far of the current incomplete line, buffered or discarded. */
  #lineBytes = 0;
  /** Last byte of the current incomplete line: needed to spot a CR before an LF that
   * arrives in the next chunk while discarding (nothing buffered to look at). */
  #lastByte = -1;
  #discarding = false;
  /** A string chunk ending in a high surrogate: held back so the pair is encoded whole. */
  #heldSurrogate = "";

  constructor(onLine: (line: string) => void, options: JsonlReaderOptions = {}) {
    const max = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    if (typeof max !== "number" || Number.isNaN(max) || max < 0) {
      throw new RangeError(`maxLineBytes must be a non-negative number, got ${String(max)}`);
    }
    this.#onLine = onLine;
    this.#onOverflow = options.onOverflow;
    this.#maxLineBytes = max;
    this.#immutable = options.chunksAreImmutable === true;
  }

  push(chunk: Uint8Array | string): void {
    if (typeof chunk === "string") {
      let text = this.#heldSurrogate + chunk;
      this.#heldSurrogate = "";
      if (text.length > 0 && isHighSurrogate(text.charCodeAt(text.length - 1))) {
        this.#heldSurrogate = text.slice(-1);
        text = text.slice(0, -1);
      }
      if (text.length > 0) this.#pushBytes(Buffer.from(text, "utf8"));
      return;
    }
    this.#flushHeldSurrogate();
    // A Buffer view over the same memory: no copy, and gives us fast indexOf/toString.
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.#pushBytes(buf);
  }

  /** Flush the final unterminated line (if non-empty after CR strip). Resets the splitter. */
  end(): void {
    this.#flushHeldSurrogate();
    if (this.#lineBytes > 0) this.#finishLine(Buffer.alloc(0), 0, 0, true);
  }

  #flushHeldSurrogate(): void {
    if (this.#heldSurrogate === "") return;
    // A lone high surrogate: encoding it alone yields U+FFFD, as the string would anyway.
    const held = this.#heldSurrogate;
    this.#heldSurrogate = "";
    this.#pushBytes(Buffer.from(held, "utf8"));
  }

  #pushBytes(buf: Buffer): void {
    let start = 0;
    while (start < buf.length) {
      const lf = buf.indexOf(LF, start);
      if (lf === -1) {
        this.#appendPartial(buf, start);
        return;
      }
      this.#finishLine(buf, start, lf, false);
      start = lf + 1;
    }
  }

  /** Keep the tail of a chunk that has no LF yet, or just count it if the line is too long. */
  #appendPartial(buf: Buffer, start: number): void {
    this.#lineBytes += buf.length - start;
    this.#lastByte = buf[buf.length - 1]!;
    if (this.#discarding) return;
    // +1: the line may still end in CR LF, and that CR does not count toward the limit.
    if (this.#lineBytes > this.#maxLineBytes + 1) {
      this.#discarding = true;
      this.#pending = []; // free what was buffered: the line is lost anyway
      return;
    }
    // Copy when the caller may reuse its buffer, or when a short tail would pin a large chunk;
    // a long line arriving in whole chunks is then held once, not twice.
    const keep = this.#immutable && (buf.length - start) * 2 >= buf.length;
    this.#pending.push(keep ? buf.subarray(start) : Buffer.from(buf.subarray(start)));
  }

  /** The current line ends with buf[start, end) (end = LF position, or end of input). */
  #finishLine(buf: Buffer, start: number, end: number, final: boolean): void {
    const total = this.#lineBytes + (end - start);
    const last = end > start ? buf[end - 1]! : this.#lastByte;
    const contentBytes = total > 0 && last === CR ? total - 1 : total;
    const discarding = this.#discarding;
    const pending = this.#pending;
    // Reset before calling out, so a callback that pushes again sees a clean state.
    this.#pending = [];
    this.#lineBytes = 0;
    this.#lastByte = -1;
    this.#discarding = false;

    if (discarding || contentBytes > this.#maxLineBytes) {
      this.#onOverflow?.({ bytes: contentBytes, maxLineBytes: this.#maxLineBytes });
      return;
    }
    if (final && contentBytes === 0) return;
    let line: string;
    if (pending.length === 0) {
      line = buf.toString("utf8", start, start + contentBytes);
    } else {
      pending.push(buf.subarray(start, end));
      line = Buffer.concat(pending, total).toString("utf8", 0, contentBytes);
    }
    this.#onLine(line);
  }
}

/**
 * Attach to a Readable; returns a detach function. Calls onEnd after the final line when the
 * stream ends. Accepts Buffer chunks and string chunks (setEncoding) alike.
 */
export function attachJsonlReader(
  stream: NodeJS.ReadableStream,
  onLine: (line: string) => void,
  options: JsonlReaderOptions & { onEnd?: () => void } = {},
): () => void {
  // A stream never reuses the chunks it emits.
  const splitter = new JsonlLineSplitter(onLine, { chunksAreImmutable: true, ...options });
  const onData = (chunk: Uint8Array | string): void => splitter.push(chunk);
  const onEnd = (): void => {
    detach();
    splitter.end();
    options.onEnd?.();
  };
  function detach(): void {
    stream.off("data", onData);
    stream.off("end", onEnd);
  }
  stream.on("data", onData);
  stream.on("end", onEnd);
  return detach;
}

function describeUnserializable(value: unknown): string {
  switch (typeof value) {
    case "undefined":
      return "undefined";
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
    default:
      return `a value whose toJSON() returned undefined`;
  }
}

/**
 * Serialize one record: JSON.stringify(value) + "\n". JSON.stringify escapes every control
 * character, so the result is always exactly one line; U+2028/U+2029 stay raw, which is fine
 * for LF-only framing. Throws a TypeError naming the problem if the value cannot be serialized.
 */
export function serializeJsonLine(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    // BigInt and circular structures land here; the engine's message names which one.
    const reason = err instanceof Error ? err.message : String(err);
    throw new TypeError(`serializeJsonLine: value cannot be serialized to JSON: ${reason}`, { cause: err });
  }
  if (json === undefined) {
    throw new TypeError(`serializeJsonLine: ${describeUnserializable(value)} cannot be serialized to JSON`);
  }
  return `${json}\n`;
}

/**
 * Async iterator of lines over any AsyncIterable<Uint8Array|string> (e.g. a Readable).
 * onOverflow is called in input order relative to the yielded lines.
 */
export async function* readJsonlLines(
  source: AsyncIterable<Uint8Array | string>,
  options: JsonlReaderOptions = {},
): AsyncGenerator<string> {
  // Overflow reports are queued with the lines, so they interleave in input order
  // (the splitter reports synchronously, before earlier lines of a chunk are yielded).
  let queue: Array<string | JsonlOverflowInfo> = [];
  const splitter = new JsonlLineSplitter((line) => queue.push(line), {
    chunksAreImmutable: true,
    maxLineBytes: options.maxLineBytes,
    onOverflow: (info) => queue.push(info),
  });
  function* drain(): Generator<string> {
    const items = queue;
    queue = [];
    for (const item of items) {
      if (typeof item === "string") yield item;
      else options.onOverflow?.(item);
    }
  }
  for await (const chunk of source) {
    splitter.push(chunk);
    yield* drain();
  }
  splitter.end();
  yield* drain();
}
