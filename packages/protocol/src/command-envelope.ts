/**
 * The checks every command line gets before its own schema: is it an object, does it name a
 * command, which id to echo. Light on purpose (no TypeBox): the agent runs it at start-up.
 */

export type EnvelopeCheck = { ok: true; type: string; withId: { id?: string | number } } | { ok: false; id?: string | number; command: string; error: string };

export function inspectEnvelope(value: unknown): EnvelopeCheck {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      command: "parse",
      error: `Expected a JSON object with a "type" field, got ${jsonTypeName(value)}`,
    };
  }
  const record = value as Record<string, unknown>;
  const id = echoableId(record);
  const withId = id === undefined ? {} : { id };

  if (!Object.hasOwn(record, "type")) {
    return {
      ok: false,
      ...withId,
      command: "parse",
      error: 'Invalid command: "type" is required (a string naming the command, e.g. "get_state")',
    };
  }
  const type = record["type"];
  if (typeof type !== "string") {
    return {
      ok: false,
      ...withId,
      command: "parse",
      error: `Invalid command: "type" must be a string naming the command (got ${describeValue(type)})`,
    };
  }
  return { ok: true, type, withId };
}

function echoableId(record: Record<string, unknown>): string | number | undefined {
  if (!Object.hasOwn(record, "id")) return undefined;
  const id = record["id"];
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : undefined;
}

function jsonTypeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "number":
      return "a number";
    case "string":
      return "a string";
    case "boolean":
      return "a boolean";
    case "undefined":
      return "nothing";
    default:
      return `a ${typeof value}`;
  }
}

/** A short description of a JSON value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
    case "number":
    case "boolean":
      return String(value);
    case "object":
      return "an object";
    default:
      return `a ${typeof value}`;
  }
}
