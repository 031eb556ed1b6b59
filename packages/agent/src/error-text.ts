/**
 * Text for something that was thrown. Anything can be thrown (null, a string, an object whose
 * toString throws, a Proxy), and describing it must never throw: this runs in catch blocks and in
 * the process's uncaughtException handler, where a second exception ends the process.
 */
export function errorMessage(thrown: unknown): string {
  try {
    return thrown instanceof Error ? String(thrown.message) : String(thrown);
  } catch {
    return `a thrown ${thrown === null ? "null" : typeof thrown} that cannot be turned into text`;
  }
}

/** The message and, for an Error, its stack: the fields of an extension_error report. */
export function errorText(thrown: unknown): { error: string; stack?: string } {
  const error = errorMessage(thrown);
  let stack: unknown;
  try {
    stack = thrown instanceof Error ? thrown.stack : undefined;
  } catch {
    stack = undefined;
  }
  return typeof stack === "string" ? { error, stack } : { error };
}
