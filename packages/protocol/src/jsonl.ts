/**
 * Strict JSONL framing, as pi's RPC protocol defines it.
 *
 * - LF (0x0A) is the only record separator; one trailing CR before it is stripped.
 * - U+2028 / U+2029 and lone CRs are ordinary characters. That is why this never uses
 *   node:readline, which also splits on them.
 * - Splitting is done on bytes: 0x0A never occurs inside a UTF-8 multi-byte sequence, so
 *   a line can be cut out of the bytes before it is decoded, and characters split across
 *   chunks survive.
 */
import { StringDecoder } from "node:string_decoder";

export { serializeJsonLine } from "./json-line.js";

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
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Push bytes (or strings), receive complete lines. No streams, no I/O.
 *
 * Linear time: only the newly arrived chunk is searched for LF. A line that spans chunks is
 * decoded piece by piece as it arrives (a streaming UTF-8 decoder keeps characters split across
 * chunks whole) and joined without copying, so a long line is held once, as text.
 * The splitter keeps no reference to a chunk after push() returns: callers may reuse buffers.
 */
export class JsonlLineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #onOverflow: ((info: JsonlOverflowInfo) => void) | undefined;
  readonly #maxLineBytes: number;

  /**
   * Decoded text of the current incomplete line (empty while discarding). Appending builds a
   * rope: the pieces are not copied into one flat string here; a consumer that needs one (e.g.
   * JSON.parse) flattens it once, so a long line is never held as bytes and a copy of the text.
   */
  #text = "";
  /** Decodes the pieces of the current line; created by the first line that spans chunks. */
  #decoder: StringDecoder | undefined;
  /** The decoder holds state for the current line (bytes were written to it). */
  #decoding = false;
  /** The current line's last byte so far is a CR that was not decoded yet: it is dropped if an LF follows. */
  #heldCR = false;
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
    if (this.#lineBytes > 0) this.#finishLine(EMPTY, 0, 0, true);
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
      if (this.#lineBytes === 0) {
        // A whole line within this chunk (the common case): cut out and decoded here at once.
        const end = lf > start && buf[lf - 1] === CR ? lf - 1 : lf;
        if (end - start <= this.#maxLineBytes) this.#onLine(buf.toString("utf8", start, end));
        else this.#onOverflow?.({ bytes: end - start, maxLineBytes: this.#maxLineBytes });
      } else {
        this.#finishLine(buf, start, lf, false);
      }
      start = lf + 1;
    }
  }

  /** Decode the tail of a chunk that has no LF yet, or just count it if the line is too long. */
  #appendPartial(buf: Buffer, start: number): void {
    this.#lineBytes += buf.length - start;
    this.#lastByte = buf[buf.length - 1]!;
    if (this.#discarding) return;
    // +1: the line may still end in CR LF, and that CR does not count toward the limit.
    if (this.#lineBytes > this.#maxLineBytes + 1) {
      this.#discarding = true;
      this.#resetText(); // free what was decoded: the line is lost anyway
      return;
    }
    // A trailing CR stays undecoded until we know whether an LF follows it.
    const end = this.#lastByte === CR ? buf.length - 1 : buf.length;
    this.#decodeHeldCR();
    if (end > start) this.#write(buf.subarray(start, end));
    this.#heldCR = end < buf.length;
  }

  /**
   * A line that began in an earlier chunk ends with buf[start, end) (end = LF position, or end of
   * input). Lines that start and end within one chunk never get here (see #pushBytes).
   */
  #finishLine(buf: Buffer, start: number, end: number, final: boolean): void {
    const total = this.#lineBytes + (end - start);
    const last = end > start ? buf[end - 1]! : this.#lastByte;
    const contentBytes = total > 0 && last === CR ? total - 1 : total;
    const discarding = this.#discarding;
    this.#lineBytes = 0;
    this.#lastByte = -1;
    this.#discarding = false;

    if (discarding || contentBytes > this.#maxLineBytes) {
      this.#resetText();
      this.#onOverflow?.({ bytes: contentBytes, maxLineBytes: this.#maxLineBytes });
      return;
    }
    // The rest of the line; a CR right before the LF is dropped,
    // whether it is in this piece or was held back at the end of the previous one.
    const pieceEnd = end > start && last === CR ? end - 1 : end;
    if (end > start) this.#decodeHeldCR();
    if (pieceEnd > start) this.#write(buf.subarray(start, pieceEnd));
    const decoder = this.#decoder;
    if (decoder && this.#decoding) this.#text += decoder.end();
    const line = this.#text;
    // Reset before calling out, so a callback that pushes again sees a clean state.
    this.#text = "";
    this.#decoding = false;
    this.#heldCR = false;
    if (final && contentBytes === 0) return;
    this.#onLine(line);
  }

  #write(bytes: Buffer): void {
    this.#decoder ??= new StringDecoder("utf8");
    this.#decoding = true;
    this.#text += this.#decoder.write(bytes);
  }

  /** A CR held back at the end of the last piece turned out to be part of the line. */
  #decodeHeldCR(): void {
    if (!this.#heldCR) return;
    this.#heldCR = false;
    this.#write(CR_BYTE);
  }

  #resetText(): void {
    if (this.#decoding) this.#decoder?.end();
    this.#decoding = false;
    this.#heldCR = false;
    this.#text = "";
  }
}

const EMPTY = Buffer.alloc(0);
const CR_BYTE = Buffer.from([CR]);

/**
 * Attach to a Readable; returns a detach function. Calls onEnd after the final line when the
 * stream ends. Accepts Buffer chunks and string chunks (setEncoding) alike.
 */
export function attachJsonlReader(
  stream: NodeJS.ReadableStream,
  onLine: (line: string) => void,
  options: JsonlReaderOptions & { onEnd?: () => void } = {},
): () => void {
  const splitter = new JsonlLineSplitter(onLine, options);
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

/**
 * Async iterator of lines over any AsyncIterable<Uint8Array|string> (e.g. a Readable).
 * onOverflow is called in input order relative to the yielded lines.
 */
export async function* readJsonlLines(source: AsyncIterable<Uint8Array | string>, options: JsonlReaderOptions = {}): AsyncGenerator<string> {
  // Overflow reports are queued with the lines, so they interleave in input order
  // (the splitter reports synchronously, before earlier lines of a chunk are yielded).
  let queue: Array<string | JsonlOverflowInfo> = [];
  const splitter = new JsonlLineSplitter((line) => queue.push(line), {
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
