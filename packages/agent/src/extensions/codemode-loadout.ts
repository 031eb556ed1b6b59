/**
 * What the model is told about the `codemode` tool (pi 1.6's `builtin:codemode`): its description,
 * which lists the tools a script may call with their TypeScript declarations (pi-codemode's
 * renderer), and, in mode `on`, a note on each declared tool saying what a script's call of it
 * resolves to. Run through the tool's `prepareLoadout` hook each time the active tools change
 * (tool-registry.ts).
 */
import { renderToolOutputType, renderToolSample, resolveSchemaRef, toCodemodeIdentifier } from "@earendil-works/pi-codemode/declarations";
import type { ToolLoadout, ToolLoadoutChanges, ToolNamespace } from "../tools/types.js";

export const CODEMODE_TOOL_NAME = "codemode";
export type CodemodeMode = "on" | "only";
export const DEFAULT_INLINE_BUDGET = 3000;
const CHARS_PER_TOKEN = 4;
const TEXT_OUTPUT: Record<string, unknown> = { type: "string" };

// The model-facing prose is parley's own wording of what pi 1.6 tells the model (the same facts);
// the tool sections are pi-codemode's declarations, as in pi.
export const CODEMODE_SNIPPET = "Run a JavaScript script that calls the other tools";
export const CODEMODE_GUIDELINE =
  "Prefer one codemode script over many separate calls when calls are independent (run them together with Promise.allSettled), depend on each other, or return more output than you need.";

const INTRO = [
  "Run a JavaScript script that calls other tools. Send the raw source (not JSON, not inside a code fence); it runs as the body of an async function in a QuickJS sandbox, so top-level `await` and `return` work. There is no Node, file system, network or timers.",
  "- `await tools.<name>({ ...args })` gives a string, or an object where the tool's declaration returns one, and rejects with an Error when the call fails. A tool declared to return an object also resolves on failure when it returned that object, so check its fields. Calls still pending when the script ends are cancelled.",
  '- The first line may set options: `// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}`',
].join("\n");

const GLOBALS = [
  "Globals:",
  "- Output comes from `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` and a top-level `return`; `exit()` stops the script. Several text items each start with a `==> text N/M <==` line; `console` lines come after the rest, in one `<console_output>` block. `image()` saves the image to a temp file too and the result names the file.",
  "- `store(key, value)` and `load(key)` keep JSON values from one codemode call to the next.",
  "- To find tools not listed here, such as MCP tools: `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`.",
].join("\n");

/** The line on the `models` global (pi points at its docs; parley's line carries the API itself). */
const MODELS_GLOBAL =
  '- `models`: classifiers and image generation with the session\'s credentials. `await models.getAvailableOfType(type, provider?)`, `await models.getModelsOfType(type, provider?)` and `await models.getModelOfType(type, provider, id)` list the catalogue (type "chat", "image" or "classifier"); `await models.classify(model, { state, questions, images? })` (each question `{ type: "choice" | "bool" | "score", instructions, criteria }`) and `await models.generateImages(model, { input: [{ type: "text", text }] })` do not throw on a provider error: check `stopReason` and `errorMessage`; show a generated image block with `image(block)`.';

/** The tool as a script sees it (pi-codemode's declaration shape). */
export interface ScriptDeclaration {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
}

interface DeclarableTool {
  name: string;
  description: string;
  parameters: unknown;
  outputSchema?: object | undefined;
}

const asSchema = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {});

/** A tool's declaration for scripts: its description with its prompt guidelines, which only declared tools have in the system prompt. */
export function scriptDeclaration(tool: DeclarableTool, guidelines: readonly string[] = []): ScriptDeclaration {
  const bullets = guidelines.map((g) => g.trim()).filter((g) => g.length > 0);
  return {
    name: tool.name,
    description: bullets.length > 0 ? `${tool.description.trim()}\n\n${bullets.map((b) => `- ${b}`).join("\n")}` : tool.description,
    inputSchema: asSchema(tool.parameters),
    outputSchema: tool.outputSchema ? asSchema(tool.outputSchema) : TEXT_OUTPUT,
  };
}

/** What a script renders for a tool (ALL_TOOLS, describeTool, the description's sections). */
export const toolSample = (declaration: ScriptDeclaration): string => renderToolSample(declaration);

interface Section {
  name: string;
  text: string;
  cost: number;
}
interface Group {
  namespace: ToolNamespace | undefined;
  sections: Section[];
}

/**
 * The sections shown within the budget: round by round, each group (tools without a namespace,
 * then namespaces by name) shows its cheapest remaining tool while it fits; a group whose next
 * tool does not fit stops. So every namespace shows something before any shows everything.
 */
function fitBudget(groups: readonly Group[], budget: number): Set<string> {
  const queues = groups.map((g) => [...g.sections].sort((a, b) => a.cost - b.cost)).filter((q) => q.length > 0);
  const shown = new Set<string>();
  let left = budget;
  let open = queues;
  while (open.length > 0) {
    const next: Section[][] = [];
    for (const queue of open) {
      const head = queue[0] as Section;
      if (head.cost > left) continue;
      left -= head.cost;
      shown.add(head.name);
      queue.shift();
      if (queue.length > 0) next.push(queue);
    }
    open = next;
  }
  return shown;
}

function section(declaration: ScriptDeclaration): string {
  const id = toCodemodeIdentifier(declaration.name);
  const heading = id === declaration.name ? `### \`${id}\`` : `### \`${id}\` (\`${declaration.name}\`)`;
  return `${heading}\n${toolSample(declaration).trim()}`;
}

export interface DescriptionInput {
  namespaces: ReadonlyMap<string, ToolNamespace>;
  guidelines: ReadonlyMap<string, readonly string[]>;
  /** Deferred tools are never listed, so the description does not change as MCP servers connect. */
  deferred: ReadonlySet<string>;
  inlineBudget: number;
}

/** The codemode tool's description listing `tools` (the codemode tool itself left out); `models`: scripts have the `models` global. */
export function codemodeDescription(tools: readonly DeclarableTool[], input?: DescriptionInput, models = false): string {
  const head = [INTRO, models ? `${GLOBALS}\n${MODELS_GLOBAL}` : GLOBALS];
  const declarations = tools
    .filter((t) => t.name !== CODEMODE_TOOL_NAME && !input?.deferred.has(t.name))
    .map((t) => scriptDeclaration(t, input?.guidelines.get(t.name)));
  if (declarations.length === 0 || input === undefined) return head.join("\n\n");
  const groups = new Map<string, Group>([["", { namespace: undefined, sections: [] }]]);
  for (const declaration of declarations) {
    const namespace = input.namespaces.get(declaration.name);
    const key = namespace ? `ns:${namespace.name}` : "";
    let group = groups.get(key);
    if (!group) {
      group = { namespace, sections: [] };
      groups.set(key, group);
    }
    const text = section(declaration);
    group.sections.push({ name: declaration.name, text, cost: Math.ceil(text.length / CHARS_PER_TOKEN) });
  }
  const ordered = [...groups.values()].sort((a, b) => {
    if (a.namespace === undefined) return -1;
    if (b.namespace === undefined) return 1;
    return a.namespace.name.localeCompare(b.namespace.name);
  });
  const shown = fitBudget(ordered, input.inlineBudget);
  const parts = ["Nested tools:"];
  for (const { namespace, sections } of ordered) {
    const visible = sections.filter((s) => shown.has(s.name));
    if (namespace) {
      const note = visible.length === sections.length ? "" : visible.length === 0 ? " (tools not listed)" : " (some tools not listed)";
      const about = namespace.description?.trim();
      parts.push(`## ${namespace.name}${note}${about ? `\n${about}` : ""}`);
    }
    for (const s of visible) parts.push(s.text);
  }
  return [...head, parts.join("\n\n")].join("\n\n");
}

/** Follows local `$ref`s (MCP output schemas keep their models in `$defs`); stops at remote, missing or cyclic ones. */
function dereference(schema: unknown, root: unknown): unknown {
  const seen = new Set<unknown>();
  let current = schema;
  while (typeof current === "object" && current !== null && !seen.has(current)) {
    const ref = (current as Record<string, unknown>)["$ref"];
    if (typeof ref !== "string") break;
    const target = resolveSchemaRef(ref, root);
    if (target === undefined) break;
    seen.add(current);
    current = target;
  }
  return current;
}

/** `{ a, b?, c: { d } }`: an object schema's fields (with `const` values, and nested objects `depth` deep). */
function fieldList(schema: unknown, root: unknown, depth: number): string | undefined {
  const resolved = dereference(schema, root);
  if (typeof resolved !== "object" || resolved === null) return undefined;
  const { type, properties, required } = resolved as Record<string, unknown>;
  if (type !== "object" || typeof properties !== "object" || properties === null) return undefined;
  const needed = new Set(Array.isArray(required) ? required : []);
  const fields = Object.entries(properties).map(([name, field]) => {
    const target = dereference(field, root);
    const constant = typeof target === "object" && target !== null ? (target as Record<string, unknown>)["const"] : undefined;
    const inner = constant !== undefined ? JSON.stringify(constant) : depth > 0 ? fieldList(field, root, depth - 1) : undefined;
    return `${name}${needed.has(name) ? "" : "?"}${inner ? `: ${inner}` : ""}`;
  });
  return `{ ${fields.join(", ")} }`;
}

/** The fields of each object of an `anyOf`/`oneOf` made only of objects, joined by `|`. */
function unionFields(schema: unknown, root: unknown): string | undefined {
  const resolved = dereference(schema, root);
  if (typeof resolved !== "object" || resolved === null) return undefined;
  const record = resolved as Record<string, unknown>;
  const variants = record["anyOf"] ?? record["oneOf"];
  if (!Array.isArray(variants) || variants.length === 0) return undefined;
  const listed = variants.map((v) => fieldList(v, root, 0));
  return listed.every((f) => f !== undefined) ? listed.join(" | ") : undefined;
}

/** What a script's call resolves to, in one line (a long type points to describeTool instead). */
function resolvesTo(name: string, schema: Record<string, unknown>): string {
  const type = renderToolOutputType(schema);
  if (type === "string") return "a string";
  const fields = fieldList(schema, schema, 1) ?? unionFields(schema, schema);
  if (fields) return `\`${fields}\``;
  if (!type.includes("\n")) return `\`${type}\``;
  return `a value; \`await describeTool(${JSON.stringify(name)})\` shows its type`;
}

function withScriptNote(tool: DeclarableTool): string {
  const { outputSchema } = scriptDeclaration(tool);
  return `${tool.description.trim()}\n\nFrom codemode: \`tools.${toCodemodeIdentifier(tool.name)}(args)\` resolves to ${resolvesTo(tool.name, outputSchema)}.`;
}

export interface LoadoutSettings {
  mode: () => CodemodeMode;
  inlineBudget: () => number;
  /** Scripts have the `models` global. */
  models: boolean;
}

/**
 * The codemode tool's `prepareLoadout`: in mode `on`, declared tools scripts can call get the note,
 * and the description lists the callable tools that are not `direct`; in mode `only`, it lists
 * every callable tool and the active `direct` ones are left out of the requests.
 */
export function prepareCodemodeLoadout(loadout: ToolLoadout, settings: LoadoutSettings): ToolLoadoutChanges {
  const mode = settings.mode();
  const callable = loadout.callable.filter((t) => t.name !== CODEMODE_TOOL_NAME);
  const callableNames = new Set(callable.map((t) => t.name));
  const isDirect = (name: string) => loadout.getExposure(name) === "direct";
  const descriptions: Record<string, string> = {};
  if (mode === "on") for (const tool of loadout.declared) if (callableNames.has(tool.name)) descriptions[tool.name] = withScriptNote(tool);
  const listed = mode === "only" ? callable : callable.filter((t) => !isDirect(t.name));
  const namespaces = new Map<string, ToolNamespace>();
  for (const tool of listed) {
    const namespace = loadout.getNamespace(tool.name);
    if (namespace) namespaces.set(tool.name, namespace);
  }
  descriptions[CODEMODE_TOOL_NAME] = codemodeDescription(
    listed,
    {
      namespaces,
      guidelines: new Map(listed.map((t) => [t.name, loadout.getPromptGuidelines(t.name)])),
      deferred: new Set(listed.filter((t) => loadout.getExposure(t.name) === "deferred").map((t) => t.name)),
      inlineBudget: settings.inlineBudget(),
    },
    settings.models,
  );
  const declared = new Set(loadout.declared.map((t) => t.name));
  return {
    descriptions,
    hiddenDeclarations: mode === "only" ? callable.filter((t) => isDirect(t.name) && declared.has(t.name)).map((t) => t.name) : [],
  };
}
