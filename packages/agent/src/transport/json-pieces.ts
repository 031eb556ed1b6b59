/**
 * A record's JSON line as a list of pieces instead of one string, for records that carry a long
 * array (get_messages or get_entries on a resumed session of 100 MB). One string of that size
 * costs its own copy, then another as bytes for the write; pieces are written one by one.
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
 * The JSON line of `record` in pieces (the last ends with LF), or undefined when it holds no long
 * array near its top (then serializeJsonLine is the way). Throws as serializeJsonLine does, before
 * anything is returned, so a value that cannot be serialised never leaves half a line.
 */
export function jsonLinePieces(record: object): string[] | undefined {
  if (!hasLongArray(record, 0)) return undefined;
  const pieces: string[] = [];
  let current = "";
  const add = (text: string): void => {
    current += text;
    if (current.length >= PIECE_CHARS) {
      pieces.push(current);
      current = "";
    }
  };
  try {
    write(record, 0, add);
  } catch (error) {
    // The same message serializeJsonLine gives for the same value.
    serializeJsonLine(record);
    throw error;
  }
  pieces.push(`${current}\n`);
  return pieces;
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

/** Writes `value` as JSON.stringify would; returns false when it has no JSON (undefined, a function). */
function write(value: unknown, depth: number, add: (text: string) => void): boolean {
  if (!isPlainContainer(value) || !hasLongArray(value, depth)) {
    const json = JSON.stringify(value);
    if (json === undefined) return false;
    add(json);
    return true;
  }
  if (Array.isArray(value)) {
    add("[");
    value.forEach((element: unknown, i) => {
      if (i > 0) add(",");
      // JSON.stringify writes null for an element that has no JSON.
      if (!write(element, depth + 1, add)) add("null");
    });
    add("]");
    return true;
  }
  add("{");
  let first = true;
  for (const key of Object.keys(value)) {
    const prefix = `${first ? "" : ","}${JSON.stringify(key)}:`;
    const field = (value as Record<string, unknown>)[key];
    // A field without JSON is left out, comma and all.
    const json = isPlainContainer(field) && hasLongArray(field, depth + 1) ? undefined : JSON.stringify(field);
    if (json !== undefined) {
      add(prefix + json);
      first = false;
    } else if (isPlainContainer(field)) {
      add(prefix);
      write(field, depth + 1, add);
      first = false;
    }
  }
  add("}");
  return true;
}
