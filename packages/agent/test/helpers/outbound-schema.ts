/**
 * Every record parley writes must fit the published JSON Schema for its output
 * (packages/protocol/json-schema/outbound.json, draft 2020-12). The test helpers that read a
 * spawned parley's stdout check each record here, so a record that breaks the schemas fails the
 * test that produced it, named, whatever that test asserts.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Compile, type Validator } from "typebox/schema";

const OUTBOUND_FILE = join(resolve(import.meta.dirname, "../../../.."), "packages/protocol/json-schema/outbound.json");

interface Outbound {
  whole: Validator;
  /** Compiles `{$ref: #/$defs/name}` over the document's $defs (one record kind). */
  member(name: string): Validator;
  /** $defs that describe one record kind: their const fields (type, method, command, success). */
  kinds: { name: string; consts: [string, unknown][] }[];
}

let outbound: Outbound | undefined;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Compiled on first use (~50 ms): the published file itself, not the TypeBox source. */
function load(): Outbound {
  if (outbound !== undefined) return outbound;
  const document: unknown = JSON.parse(readFileSync(OUTBOUND_FILE, "utf8"));
  if (!isRecord(document) || !isRecord(document["$defs"])) throw new Error(`${OUTBOUND_FILE} is not a JSON Schema document with $defs`);
  const defs = document["$defs"];
  const kinds: Outbound["kinds"] = [];
  for (const [name, schema] of Object.entries(defs)) {
    const properties = isRecord(schema) ? schema["properties"] : undefined;
    if (!isRecord(properties)) continue;
    const consts = ["type", "method", "command", "success"].flatMap((key): [string, unknown][] => {
      const property = properties[key];
      return isRecord(property) && "const" in property ? [[key, property["const"]]] : [];
    });
    if (consts.some(([key]) => key === "type")) kinds.push({ name, consts });
  }
  const members = new Map<string, Validator>();
  outbound = {
    whole: Compile(document),
    member: (name) => {
      let member = members.get(name);
      if (member === undefined) {
        member = Compile({ $schema: document["$schema"], $defs: defs, $ref: `#/$defs/${name}` });
        members.set(name, member);
      }
      return member;
    },
    kinds,
  };
  return outbound;
}

/** undefined when `record` fits outbound.json; otherwise a message naming the record and why. */
export function outboundViolation(record: unknown): string | undefined {
  const schemas = load();
  if (schemas.whole.Check(record)) return undefined;
  const text = JSON.stringify(record);
  const shown = text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
  // The record's own kind (its type, method, command, success all match) says best what is wrong.
  const kind = isRecord(record)
    ? schemas.kinds.filter((k) => k.consts.every(([key, value]) => record[key] === value)).sort((a, b) => b.consts.length - a.consts.length)[0]
    : undefined;
  let reasons = "it is not one of the record kinds outbound.json describes";
  if (kind !== undefined) {
    const [, errors] = schemas.member(kind.name).Errors(record);
    reasons = `as a ${kind.name}: ${[...new Set(errors.map((e) => `${e.instancePath || "/"} ${e.message}`))].slice(0, 4).join("; ")}`;
  }
  return `record does not fit packages/protocol/json-schema/outbound.json (${reasons})\n  record: ${shown}`;
}

/** Throws on the first record of `records` that does not fit, naming it and its position. */
export function expectOutbound(records: readonly unknown[], source = "parley"): void {
  records.forEach((record, index) => {
    const violation = outboundViolation(record);
    if (violation !== undefined) throw new Error(`${source}, stdout record #${index + 1}: ${violation}`);
  });
}
