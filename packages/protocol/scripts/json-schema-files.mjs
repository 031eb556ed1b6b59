// Builds the JSON Schema files in packages/protocol/json-schema/ from the TypeBox schemas.
//
// TypeBox schemas are JSON Schema already; this module only
//  - picks one schema per record family and gives it `$schema`, `title` and `description`,
//  - moves every named schema the family uses (any exported schema met again inside it)
//    into `$defs` and refers to it with `$ref`, so shared shapes appear once,
//  - turns TypeBox's cyclic schemas (their own `$defs` plus `$id`) into plain `$defs` entries.
//
// Pure and deterministic: the same schemas always give byte-identical files.

import { pascalName } from "./alias-code.mjs";

const DRAFT = "https://json-schema.org/draft/2020-12/schema";

/** One file per record family. `schema` names an export of src/schema/index.ts. */
export const FAMILIES = [
  {
    file: "command.json",
    schema: "RpcCommand",
    title: "Command",
    description: "A command a client writes to the agent's stdin (one JSON object per line). Every command gets exactly one response echoing its optional id.",
  },
  {
    file: "response.json",
    schema: "RpcResponse",
    title: "Response",
    description:
      'The single response to a command: {type: "response", command, success: true, data?} or {..., success: false, error}. `data` depends on `command`.',
  },
  {
    file: "event.json",
    schema: "RpcEvent",
    title: "Event",
    description:
      "An event the agent writes to stdout on its own: agent, turn and message lifecycle, delta-only streaming, tool execution, queues, compaction, retries, extension errors.",
  },
  {
    file: "extension-ui-request.json",
    schema: "ExtensionUiRequest",
    title: "Extension UI request",
    description:
      "An extension asks the client for input (select, confirm, input, editor: answer with an extension_ui_response) or updates the UI (notify, setStatus, setWidget, setTitle, set_editor_text: no answer).",
  },
  {
    file: "extension-ui-response.json",
    schema: "ExtensionUiResponse",
    title: "Extension UI response",
    description: "The client's answer to a dialog request, matched by id: a value, a confirmation, or a cancellation.",
  },
  {
    file: "parley-additions.json",
    schema: "ParleyAdditionRecord",
    title: "parley additions",
    // The union's own description, which lists the commands parley adds (from the command table).
    description: undefined,
  },
  {
    file: "inbound.json",
    schema: "InboundRecord",
    title: "Inbound record",
    description: "Anything a client may write to the agent's stdin: a command or an extension_ui_response.",
  },
  {
    file: "outbound.json",
    schema: "OutboundRecord",
    title: "Outbound record",
    description: "Anything the agent may write to stdout: a response, an event, an extension_ui_request, or a parley addition record.",
  },
];

/** Keywords whose value is one subschema, an array of them, or a map of them. */
const SINGLE = new Set(["additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames"]);
const ARRAY = new Set(["anyOf", "allOf", "oneOf", "prefixItems"]);
const MAP = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
const isCyclic = (s) => isObject(s) && isObject(s.$defs) && typeof s.$ref === "string" && !s.$ref.startsWith("#");
const isNameWorthy = (s) => isObject(s) && !isCyclic(s) && (s.type === "object" || Array.isArray(s.anyOf) || Array.isArray(s.allOf));

/**
 * Maps the JSON text of every exported, name-worthy schema to its export name. Each declared
 * command's schema and successful response are named from the command table first
 * (`PromptCommand`, `PromptResponse`: the names the generated aliases export), so the files
 * do not depend on the aliases being generated yet.
 */
function nameRegistry(schemas) {
  const names = new Map();
  for (const type of Object.keys(schemas.COMMAND_SCHEMAS ?? {})) {
    names.set(JSON.stringify(schemas.COMMAND_SCHEMAS[type]), `${pascalName(type)}Command`);
    names.set(JSON.stringify(schemas.SUCCESS_RESPONSE_SCHEMAS[type]), `${pascalName(type)}Response`);
  }
  for (const name of Object.keys(schemas).sort()) {
    const schema = schemas[name];
    if (!isNameWorthy(schema)) continue;
    const key = JSON.stringify(schema);
    if (!names.has(key)) names.set(key, name);
  }
  return names;
}

function convert(root, names) {
  const defs = new Map();
  const cyclicNames = new Set();

  function defineNamed(name, schema) {
    if (defs.has(name)) return;
    defs.set(name, null); // reserve first: breaks cycles through named schemas
    defs.set(name, walk(schema, false));
  }

  function walk(schema, mayReference = true) {
    if (!isObject(schema)) return schema;
    if (mayReference) {
      const name = names.get(JSON.stringify(schema));
      if (name !== undefined) {
        defineNamed(name, schema);
        return { $ref: `#/$defs/${name}` };
      }
    }
    if (isCyclic(schema)) {
      for (const defName of Object.keys(schema.$defs)) cyclicNames.add(defName);
      for (const [defName, def] of Object.entries(schema.$defs)) {
        if (defs.has(defName)) continue;
        defs.set(defName, null);
        const { $id: _ignored, ...body } = def;
        defs.set(defName, walk(body, false));
      }
      const { $defs: _defs, $ref, ...rest } = schema;
      return { $ref: `#/$defs/${$ref}`, ...walkKeywords(rest) };
    }
    if (typeof schema.$ref === "string" && cyclicNames.has(schema.$ref)) {
      return { ...walkKeywords(schema), $ref: `#/$defs/${schema.$ref}` };
    }
    return walkKeywords(schema);
  }

  function walkKeywords(schema) {
    const out = {};
    for (const [key, value] of Object.entries(schema)) {
      if (key === "$id") continue;
      if (SINGLE.has(key) && isObject(value)) out[key] = walk(value);
      else if (ARRAY.has(key) && Array.isArray(value)) out[key] = value.map((v) => walk(v));
      else if (MAP.has(key) && isObject(value)) {
        out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
      } else out[key] = value;
    }
    return out;
  }

  const body = walk(root, false);
  const sortedDefs = Object.fromEntries([...defs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { body, defs: sortedDefs };
}

/**
 * @param {Record<string, unknown>} schemas the exports of src/schema/index.ts (or its build)
 * @returns {Record<string, string>} file name → file text
 */
export function buildJsonSchemaFiles(schemas) {
  if (schemas === undefined) {
    throw new Error("buildJsonSchemaFiles needs the schema module (e.g. dist/schema/index.js)");
  }
  const names = nameRegistry(schemas);
  const files = {};
  for (const family of FAMILIES) {
    const root = schemas[family.schema];
    if (!isObject(root)) throw new Error(`No schema named ${family.schema}`);
    const { body, defs } = convert(root, names);
    const { description, ...rest } = body;
    const document = {
      $schema: DRAFT,
      title: family.title,
      description: family.description ?? `${description} A client that ignores them still works.`,
      ...rest,
      ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}),
    };
    files[family.file] = `${JSON.stringify(document, null, 2)}\n`;
  }
  return files;
}
