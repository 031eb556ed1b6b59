/**
 * A record's JSON line as pieces of bytes produced one at a time, for records that carry a long
 * array (get_messages or get_entries on a resumed session of 100 MB). The transport takes the
 * next piece only when the pipe has taken the last one, so the whole text never exists at once:
 * not as one string, not as a list of pieces, not as bytes waiting in the stream (holding ~100 MB
 * of it made V8 collect the session's whole heap again and again).
 *
 * Each element's JSON is written straight into the piece's buffer (outside the JS heap): joining
 * a piece's ~1,000 strings into one string and encoding that again took longer than
 * JSON.stringify itself. A piece ends between elements, so each is whole UTF-8 on its own.
 *
 * The bytes are exactly serializeJsonLine's text in UTF-8: long arrays and the plain objects
 * around them are assembled here the way JSON.stringify would, everything else is
 * JSON.stringify's own output.
 */
import { serializeJsonLine } from "@parley/protocol/jsonl";

/** An array this long is serialised element by element. */
const LONG_ARRAY = 1024;
/** Pieces are at most this many bytes, unless one element is longer. */
const PIECE_BYTES = 1 << 20;
/** How deep into nested objects a long array is looked for (a response's data.messages is at 2). */
const MAX_DEPTH = 3;

/** Where the JSON of some objects is known already, as bytes: a JSON text of the object. */
export interface KnownJson {
  get(value: object): Uint8Array | undefined;
}

/**
 * Piece buffers given back once their bytes were written (recyclePiece), for the next pieces: a
 * 100 MB answer then lives in a few buffers instead of ~100 that wait for the collector (they are
 * outside the JS heap, so V8 reclaims them late: ~70 MB of peak RSS when a big session was resumed).
 */
const spare: Buffer[] = [];
const MAX_SPARE = 8;
/** Buffers this module made for pieces and has handed out (so only those, and each once, come back). */
const handedOut = new WeakSet<ArrayBufferLike>();

function pieceBuffer(): Buffer {
  const buffer = spare.pop() ?? Buffer.allocUnsafeSlow(PIECE_BYTES);
  handedOut.add(buffer.buffer);
  return buffer;
}

/**
 * A piece jsonLinePieces made is no longer needed: the OS has its bytes (its write completed) and
 * nothing else refers to it. Its buffer serves a later piece. Anything else is ignored.
 */
export function recyclePiece(piece: Uint8Array): void {
  const buffer = piece.buffer;
  if (!handedOut.has(buffer) || buffer.byteLength !== PIECE_BYTES) return;
  handedOut.delete(buffer);
  if (spare.length < MAX_SPARE) spare.push(Buffer.from(buffer, 0, PIECE_BYTES));
}

/** Arrays whose elements' JSON may be known already (see withKnownJson). */
const knownJson = new WeakMap<readonly unknown[], KnownJson>();

/**
 * A copy of `array` whose elements `json` knows are written as those bytes (a loaded session's
 * messages as the file holds them: the same value, in the file's own spelling). Serialisers
 * other than jsonLinePieces see a plain array.
 */
export function withKnownJson<T>(array: readonly T[], json: KnownJson): T[] {
  const copy = array.slice();
  knownJson.set(copy, json);
  return copy;
}

/**
 * The JSON line of `record` as an iterator of pieces (the last ends with LF), or undefined when
 * it holds no long array near its top (then serializeJsonLine is the way).
 *
 * A value JSON cannot hold (a BigInt, a cycle) throws from the first `next()` when no piece has
 * been produced yet, with serializeJsonLine's message. Found later, half the line is gone
 * already: the line is then closed as valid JSON with that array cut short there, and
 * `onCut` hears why.
 */
export function jsonLinePieces(record: object, onCut?: (error: unknown, record: object) => void): Iterator<Buffer> | undefined {
  if (!hasLongArray(record, 0)) return undefined;
  return pieces(record, onCut);
}

/** The piece being filled, and the brackets still open (to close a cut line). */
class Out {
  #buffer = pieceBuffer();
  #used = 0;
  readonly closers: string[] = [];

  /** Bytes gathered so far in this piece. */
  get used(): number {
    return this.#used;
  }

  /** Bytes left in this piece's buffer. */
  get room(): number {
    return this.#buffer.length - this.#used;
  }

  /** Bytes that are JSON text already. */
  addBytes(bytes: Uint8Array): void {
    if (bytes.length > this.#buffer.length - this.#used) this.#grow(bytes.length);
    this.#buffer.set(bytes, this.#used);
    this.#used += bytes.length;
  }

  add(text: string): void {
    if (!this.fits(text)) this.#grow(Buffer.byteLength(text));
    this.#used += this.#buffer.write(text, this.#used);
  }

  /** Whether `text` and `extra` bytes more fit in this piece's buffer as it is. */
  fits(text: string, extra = 0): boolean {
    const room = this.#buffer.length - this.#used - extra;
    // UTF-8 takes at most 3 bytes per UTF-16 unit (a surrogate pair: 4 for 2); only a text near
    // the limit is measured exactly.
    return text.length * 3 <= room || Buffer.byteLength(text) <= room;
  }

  /** Whatever is gathered, as a piece; the next one starts empty. */
  rest(): Buffer {
    const piece = this.#buffer.subarray(0, this.#used);
    this.#buffer = pieceBuffer();
    this.#used = 0;
    return piece;
  }

  /** Room for `bytes` more: the gathered bytes move to a buffer large enough. */
  #grow(bytes: number): void {
    const bigger = Buffer.allocUnsafeSlow(Math.max(PIECE_BYTES, this.#used + bytes));
    this.#buffer.copy(bigger, 0, 0, this.#used);
    this.#buffer = bigger;
  }
}

function* pieces(record: object, onCut: ((error: unknown, record: object) => void) | undefined): Generator<Buffer, void, undefined> {
  const out = new Out();
  let produced = false;
  try {
    for (const piece of write(record, 0, out)) {
      produced = true;
      yield piece;
    }
  } catch (error) {
    if (!produced) {
      // The same message serializeJsonLine gives for the same value.
      serializeJsonLine(record);
      throw error;
    }
    onCut?.(error, record);
    out.add(`${out.closers.reverse().join("")}\n`);
    yield out.rest();
    return;
  }
  out.add("\n");
  yield out.rest();
}

function isPlainContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

function hasLongArray(value: unknown, depth: number): boolean {
  if (!isPlainContainer(value) || depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.length >= LONG_ARRAY;
  for (const key of Object.keys(value)) {
    if (hasLongArray((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/**
 * Writes `value` (a container holding a long array) as JSON.stringify would, yielding a piece
 * whenever enough bytes are gathered.
 */
function* write(value: object, depth: number, out: Out): Generator<Buffer, void, undefined> {
  if (Array.isArray(value)) {
    out.add("[");
    out.closers.push("]");
    const known = knownJson.get(value);
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i];
      const bytes = known !== undefined && typeof element === "object" && element !== null ? known.get(element) : undefined;
      if (bytes !== undefined) {
        if (out.used > 0 && out.room < bytes.length + 1) yield out.rest();
        if (i > 0) out.add(",");
        out.addBytes(bytes);
      } else if (isPlainContainer(element) && hasLongArray(element, depth + 1)) {
        if (i > 0) out.add(",");
        yield* write(element, depth + 1, out);
      } else {
        // JSON.stringify writes null for an element that has no JSON. The comma is written only
        // once the element's JSON exists, so a line cut at an element that cannot be
        // serialised stays valid JSON.
        const json = JSON.stringify(element) ?? "null";
        // A piece ends when the next element does not fit (an element longer than a piece gets
        // a piece of its own size).
        if (out.used > 0 && !out.fits(json, 1)) yield out.rest();
        if (i > 0) out.add(",");
        out.add(json);
      }
    }
    out.closers.pop();
    out.add("]");
    return;
  }
  out.add("{");
  out.closers.push("}");
  let first = true;
  for (const key of Object.keys(value)) {
    const prefix = `${first ? "" : ","}${JSON.stringify(key)}:`;
    const field = (value as Record<string, unknown>)[key];
    if (isPlainContainer(field) && hasLongArray(field, depth + 1)) {
      out.add(prefix);
      first = false;
      yield* write(field, depth + 1, out);
      continue;
    }
    // A field without JSON is left out, comma and all.
    const json = JSON.stringify(field);
    if (json !== undefined) {
      out.add(prefix + json);
      first = false;
    }
  }
  out.closers.pop();
  out.add("}");
}
