/**
 * Writing one record as one JSON line. Apart from the reader in jsonl.ts because it needs no
 * Node API: the browser entry of @parley/client writes records with it.
 */

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
