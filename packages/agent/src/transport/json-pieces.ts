/**
 * A record's JSON line as pieces produced one at a time, for records that carry a long array
 * (get_messages or get_entries on a resumed session of 100 MB). The transport takes the next
 * piece only when the pipe has taken the last one, so the whole text never exists at once: not
 * as one string, not as a list of pieces, not as bytes waiting in the stream (holding ~100 MB
 * of it made V8 collect the session's whole heap again and again).
 *
 * The text is exactly serializeJsonLine's: long arrays and the plain objects around them are
 * assembled here the way JSON.stringify would, everything else is JSON.stringify's own output.
 */
import { serializeJsonLine } from "@parley/protocol/jsonl";

/** An array this long is serialised element by element. */
const LONG_ARRAY = 1024;
/** Elements are gathered into pieces of about this many characters. */
const PIECE_CHARS = 1 << 20;
/** How deep into nested objects a long array is looked for (a response's data.messages is at 2). */
const MAX_DEPTH = 3;

/**
 * The JSON line of `record` as an iterator of pieces (the last ends with LF), or undefined when
 * it holds no long array near its top (then serializeJsonLine is the way).
 *
 * A value JSON cannot hold (a BigInt, a cycle) throws from the first `next()` when no piece has
 * been produced yet, with serializeJsonLine's message. Found later, half the line is gone
 * already: the line is then closed as valid JSON with that array cut short there, and
 * `onCut` hears why.
 */
export function jsonLinePieces(record: object, onCut?: (error: unknown, record: object) => void): Iterator<string> | undefined {
  if (!hasLongArray(record, 0)) return undefined;
  return pieces(record, onCut);
}

/** Text gathered for the next piece, and the brackets still open (to close a cut line). */
interface Out {
  parts: string[];
  chars: number;
  closers: string[];
}

function* pieces(record: object, onCut: ((error: unknown, record: object) => void) | undefined): Generator<string, void, undefined> {
  const out: Out = { parts: [], chars: 0, closers: [] };
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
    yield `${out.parts.join("")}${out.closers.reverse().join("")}\n`;
    return;
  }
  yield `${out.parts.join("")}\n`;
}

function add(out: Out, text: string): void {
  out.parts.push(text);
  out.chars += text.length;
}

/** The gathered text as one piece, when there is enough of it. */
function take(out: Out): string | undefined {
  if (out.chars < PIECE_CHARS) return undefined;
  const piece = out.parts.join("");
  out.parts = [];
  out.chars = 0;
  return piece;
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
 * whenever enough text is gathered.
 */
function* write(value: object, depth: number, out: Out): Generator<string, void, undefined> {
  if (Array.isArray(value)) {
    add(out, "[");
    out.closers.push("]");
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i];
      if (isPlainContainer(element) && hasLongArray(element, depth + 1)) {
        if (i > 0) add(out, ",");
        yield* write(element, depth + 1, out);
      } else {
        // JSON.stringify writes null for an element that has no JSON. The comma goes with the
        // element, so a line cut at an element that cannot be serialised stays valid JSON.
        const json = JSON.stringify(element) ?? "null";
        add(out, i > 0 ? `,${json}` : json);
      }
      const piece = take(out);
      if (piece !== undefined) yield piece;
    }
    out.closers.pop();
    add(out, "]");
    return;
  }
  add(out, "{");
  out.closers.push("}");
  let first = true;
  for (const key of Object.keys(value)) {
    const prefix = `${first ? "" : ","}${JSON.stringify(key)}:`;
    const field = (value as Record<string, unknown>)[key];
    if (isPlainContainer(field) && hasLongArray(field, depth + 1)) {
      add(out, prefix);
      first = false;
      yield* write(field, depth + 1, out);
      continue;
    }
    // A field without JSON is left out, comma and all.
    const json = JSON.stringify(field);
    if (json !== undefined) {
      add(out, prefix + json);
      first = false;
    }
  }
  out.closers.pop();
  add(out, "}");
}
