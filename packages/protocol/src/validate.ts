/**
 * Command validation for the agent's dispatcher: one call per input line that parsed as
 * JSON and is not an `extension_ui_response`.
 *
 * Validators are compiled on first use of each command type and cached, so start-up pays
 * for nothing and a session pays only for the commands it uses.
 */
import { Compile } from "typebox/compile";
import { describeValue, inspectEnvelope } from "./command-envelope.js";
import { COMMAND_SCHEMAS, type CommandType, type RpcCommand } from "./schema/command-records.js";

export type CommandCheck = { ok: true; command: RpcCommand } | { ok: false; id?: string | number; command: string; error: string };

/** The part of TypeBox's error records we use. */
interface SchemaError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

interface CommandValidator {
  Check(value: unknown): boolean;
  Errors(value: unknown): readonly SchemaError[];
}

const validators = new Map<CommandType, CommandValidator>();

function validatorFor(type: CommandType): CommandValidator {
  let validator = validators.get(type);
  if (validator === undefined) {
    validator = Compile(COMMAND_SCHEMAS[type]) as unknown as CommandValidator;
    validators.set(type, validator);
  }
  return validator;
}

function isCommandType(type: string): type is CommandType {
  return Object.hasOwn(COMMAND_SCHEMAS, type);
}

/** `value` is the result of JSON.parse of one line that is not an extension_ui_response. */
export function checkCommand(value: unknown): CommandCheck {
  const envelope = inspectEnvelope(value);
  if (!envelope.ok) return envelope;
  const { type, withId } = envelope;
  if (!isCommandType(type)) return { ok: false, ...withId, command: type, error: `Unknown command: ${type}` };

  let detail: string;
  try {
    const validator = validatorFor(type);
    if (validator.Check(value)) return { ok: true, command: value as RpcCommand };
    detail = explain(COMMAND_SCHEMAS[type], value, validator.Errors(value));
  } catch (err) {
    detail = `could not be checked (${err instanceof Error ? err.message : String(err)})`;
  }
  return { ok: false, ...withId, command: type, error: `Invalid ${type} command: ${detail}` };
}

// ---- turning TypeBox's error list into one sentence ------------------------------------

function explain(root: unknown, value: unknown, errors: readonly SchemaError[]): string {
  const error = pickError(errors);
  if (error === undefined) return "does not match the command's schema";

  const segments = pointerSegments(error.instancePath);
  if (error.keyword === "required") {
    const missing = firstMissing(error, valueAt(value, segments));
    const parent = resolveSchema(root, error.schemaPath);
    const propertySchema = missing === undefined ? undefined : propertyOf(parent, missing);
    const path = formatPath(missing === undefined ? segments : [...segments, missing]);
    const expected = propertySchema === undefined ? "" : ` (${describeSchema(propertySchema)})`;
    return `${path} is required${expected}`;
  }

  const path = formatPath(segments);
  const got = describeValue(valueAt(value, segments));
  if (error.keyword === "anyOf" || error.keyword === "const" || error.keyword === "enum" || error.keyword === "type") {
    const schema = resolveSchema(root, error.schemaPath);
    const expected = schema === undefined ? fallbackExpectation(error) : describeSchema(schema);
    return `${path} must be ${expected} (got ${got})`;
  }
  return `${path} ${error.message} (got ${got})`;
}

function rank(error: SchemaError): number {
  switch (error.keyword) {
    case "required":
      return 0;
    case "anyOf":
    case "const":
    case "enum":
      return 1;
    case "type":
      return 2;
    default:
      return 3;
  }
}

/**
 * The most useful error: required-missing, then a const/union mismatch, then a type mismatch.
 * TypeBox buffers only a few errors, so the error for a failed union itself may be missing;
 * an error inside a union's branch stands for the whole (outermost) union instead.
 */
function pickError(errors: readonly SchemaError[]): SchemaError | undefined {
  let best: SchemaError | undefined;
  for (const raw of errors) {
    const error = liftToUnion(raw);
    if (best === undefined || rank(error) < rank(best)) best = error;
  }
  return best;
}

function liftToUnion(error: SchemaError): SchemaError {
  const schemaSegments = pointerSegments(error.schemaPath);
  const at = schemaSegments.indexOf("anyOf");
  if (at === -1 || at === schemaSegments.length - 1) return error;
  const unionSegments = schemaSegments.slice(0, at);
  const depth = instanceDepth(unionSegments);
  const instanceSegments = pointerSegments(error.instancePath).slice(0, depth);
  return {
    keyword: "anyOf",
    schemaPath: toPointer(unionSegments, "#"),
    instancePath: toPointer(instanceSegments, ""),
    params: {},
    message: "must match a schema in anyOf",
  };
}

/** How many instance-path steps a schema path takes (the keywords TypeBox emits). */
function instanceDepth(schemaSegments: readonly string[]): number {
  let depth = 0;
  for (let i = 0; i < schemaSegments.length; i++) {
    switch (schemaSegments[i]) {
      case "properties":
      case "patternProperties":
      case "prefixItems":
        depth++;
        i++;
        break;
      case "items":
      case "additionalProperties":
        depth++;
        break;
      case "anyOf":
      case "allOf":
      case "oneOf":
      case "$defs":
        i++;
        break;
      default:
        break;
    }
  }
  return depth;
}

function toPointer(segments: readonly string[], prefix: string): string {
  return prefix + segments.map((s) => `/${s.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

function firstMissing(error: SchemaError, container: unknown): string | undefined {
  const listed = error.params["requiredProperties"];
  const names = Array.isArray(listed) ? listed.filter((n): n is string => typeof n === "string") : [];
  const isObject = typeof container === "object" && container !== null;
  return names.find((name) => !isObject || !Object.hasOwn(container, name)) ?? names[0];
}

function fallbackExpectation(error: SchemaError): string {
  const allowed = error.params["allowedValue"];
  if (error.keyword === "const" && allowed !== undefined) return JSON.stringify(allowed);
  const type = error.params["type"];
  if (error.keyword === "type" && typeof type === "string") return article(type);
  return "a different value";
}

// ---- JSON pointers -------------------------------------------------------------------

function pointerSegments(pointer: string): string[] {
  const body = pointer.startsWith("#") ? pointer.slice(1) : pointer;
  if (body === "" || body === "/") return [];
  return body
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** Follows own properties only, so `__proto__` and `constructor` keys are plain data. */
function step(node: unknown, segment: string): unknown {
  if (typeof node !== "object" || node === null) return undefined;
  return Object.hasOwn(node, segment) ? (node as Record<string, unknown>)[segment] : undefined;
}

function valueAt(value: unknown, segments: readonly string[]): unknown {
  let node = value;
  for (const segment of segments) node = step(node, segment);
  return node;
}

function resolveSchema(root: unknown, schemaPath: string): Record<string, unknown> | undefined {
  const node = valueAt(root, pointerSegments(schemaPath));
  return typeof node === "object" && node !== null ? (node as Record<string, unknown>) : undefined;
}

function propertyOf(schema: Record<string, unknown> | undefined, name: string): Record<string, unknown> | undefined {
  const property = step(step(schema, "properties"), name);
  return typeof property === "object" && property !== null ? (property as Record<string, unknown>) : undefined;
}

function formatPath(segments: readonly string[]): string {
  if (segments.length === 0) return "the command";
  let text = "";
  for (const segment of segments) {
    if (/^(0|[1-9]\d*)$/.test(segment)) text += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return `"${text}"`;
}

// ---- describing schemas and values -------------------------------------------------------

function article(type: string): string {
  switch (type) {
    case "array":
    case "object":
    case "integer":
      return `an ${type}`;
    case "null":
      return "null";
    default:
      return `a ${type}`;
  }
}

function isConst(schema: unknown): schema is { const: unknown } {
  return typeof schema === "object" && schema !== null && Object.hasOwn(schema, "const");
}

function describeSchema(schema: Record<string, unknown>, depth = 0): string {
  if (isConst(schema)) return JSON.stringify(schema.const);
  const members = schema["anyOf"];
  if (Array.isArray(members) && depth < 3) {
    if (members.length > 0 && members.every(isConst)) {
      return `one of ${members.map((m) => JSON.stringify(m.const)).join(", ")}`;
    }
    const parts = [
      ...new Set(members.filter((m): m is Record<string, unknown> => typeof m === "object" && m !== null).map((m) => describeSchema(m, depth + 1))),
    ];
    return parts.join(" or ");
  }
  const enumeration = schema["enum"];
  if (Array.isArray(enumeration)) return `one of ${enumeration.map((v) => JSON.stringify(v)).join(", ")}`;
  const type = schema["type"];
  if (typeof type === "string") return article(type);
  return "a valid value";
}
