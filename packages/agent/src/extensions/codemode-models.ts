/**
 * A codemode script's `models` global, as pi 1.6's sandbox offers it: the catalogue through
 * `ctx.modelRegistry` (`getModelsOfType`, `getAvailableOfType`, `getModelOfType`) and the non-chat
 * models run with the session's credentials (`classify`, `generateImages`). A call names its model
 * by provider and id only: the registry's own entry is what is called, so a script cannot point
 * the credentials at a base URL or headers of its own. Each call is a row of the tool's
 * `details.calls` (the model, never the prompt), at most four run at once per script, and their
 * usage is the codemode result's. The context is checked first, so a malformed one fails with the
 * expected shape rather than a provider's error.
 */
import type { CodemodeTool } from "@earendil-works/pi-codemode";
import type { ClassifierContext, ImagesContext, ModelType, ModelTypeMap, Usage } from "@earendil-works/pi-ai";
import type { ExtensionModelRegistry } from "./types.js";

const MODEL_TYPES: readonly ModelType[] = ["chat", "image", "classifier"];
/** Classify and image calls one script may have running; more wait their turn. */
const MAX_CONCURRENT = 4;
const ERROR_PREVIEW = 500;

/** The part of a script's call row these globals fill in. */
export interface ModelCallRow {
  id: string;
  name: string;
  args: string;
  status: "running" | "ok" | "error" | "cancelled";
  durationMs?: number;
  error?: string;
  cost?: number;
}

export interface ModelGlobalsHost {
  registry: ExtensionModelRegistry;
  toolCallId: string;
  /** Adds a row to the script's calls and returns it (changed in place as the call goes). */
  addRow(row: ModelCallRow): ModelCallRow;
  /** The rows changed: tell the client. */
  publish(): void;
  addUsage(usage: Usage): void;
  addGeneratedImages(count: number): void;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function modelType(value: unknown): ModelType {
  const found = MODEL_TYPES.find((type) => type === value);
  if (found) return found;
  throw new Error(`Unknown model type ${JSON.stringify(value)}. Use "chat", "image", or "classifier".`);
}

function providerArg(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new Error("provider must be a string");
  return value;
}

/** A catalogue entry as a script sees it: without `headers`, which models.json may fill with secrets. */
function info(model: object): Record<string, unknown> {
  const { headers: _headers, ...rest } = model as Record<string, unknown>;
  return rest;
}

const article = (word: string) => `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;

/** A script's value in an error message: its kind, or its first keys. */
function describe(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : "an array";
  if (isRecord(value)) {
    const keys = Object.keys(value);
    return keys.length === 0 ? "{}" : `{ ${keys.slice(0, 6).join(", ")}${keys.length > 6 ? ", ..." : ""} }`;
  }
  return typeof value === "string" ? "a string" : `a ${typeof value}`;
}

/** A spread global's arguments (an array from the sandbox). */
const spreadArgs = (args: unknown): unknown[] => (Array.isArray(args) ? args : [args]);

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 3)}...` : text);

const CLASSIFY_SHAPE =
  '{ state: { ... }, images?: [{ type: "image", data: <base64>, mimeType }], questions: { <id>: { type: "choice", instructions, criteria: { <label>: <meaning> } } | { type: "score", instructions, criteria: [<lowest level>, ..., <highest level>] } | { type: "bool", instructions, criteria: { true: <meaning>, false: <meaning> } } } }';
const IMAGES_SHAPE = '{ input: [{ type: "text", text: <prompt> }, ...optional { type: "image", data: <base64>, mimeType } references] }';

const isImageBlock = (value: unknown): boolean =>
  isRecord(value) && value["type"] === "image" && typeof value["data"] === "string" && typeof value["mimeType"] === "string";
const allStrings = (values: unknown[]): boolean => values.length > 0 && values.every((v) => typeof v === "string");

function checkClassifyContext(context: unknown): asserts context is ClassifierContext {
  const fail = (problem: string) => new Error(`models.classify() ${problem}. Expected context: ${CLASSIFY_SHAPE}.`);
  if (!isRecord(context)) throw fail(`expects a context object as its second argument, got ${describe(context)}`);
  const { state, images, questions } = context;
  if (!isRecord(state)) throw fail(`context.state must be an object, got ${describe(state)}`);
  if (images !== undefined) {
    if (!Array.isArray(images)) throw fail(`context.images must be an array, got ${describe(images)}`);
    images.forEach((image: unknown, index) => {
      if (!isImageBlock(image)) throw fail(`context.images[${index}] must be an image block, got ${describe(image)}`);
    });
  }
  if (!isRecord(questions) || Object.keys(questions).length === 0)
    throw fail(`context.questions must map question IDs to questions, got ${describe(questions)}`);
  for (const [id, question] of Object.entries(questions)) {
    const at = `context.questions.${id}`;
    if (!isRecord(question)) throw fail(`${at} must be a question object, got ${describe(question)}`);
    const { type, instructions, criteria } = question;
    if (typeof instructions !== "string") throw fail(`${at}.instructions must be a string`);
    if (type === "choice") {
      if (!isRecord(criteria) || !allStrings(Object.values(criteria)))
        throw fail(`${at} is a "choice" question, so criteria must map each label to its meaning`);
    } else if (type === "score") {
      if (!Array.isArray(criteria) || !allStrings(criteria))
        throw fail(`${at} is a "score" question, so criteria must list the levels as strings, lowest first`);
    } else if (type === "bool") {
      if (!isRecord(criteria) || typeof criteria["true"] !== "string" || typeof criteria["false"] !== "string")
        throw fail(`${at} is a "bool" question, so criteria must be { true: string, false: string }`);
    } else throw fail(`${at}.type must be "choice", "score", or "bool", got ${JSON.stringify(type)}`);
  }
}

function checkImagesContext(context: unknown): asserts context is ImagesContext {
  const fail = (problem: string) => new Error(`models.generateImages() ${problem}. Expected context: ${IMAGES_SHAPE}.`);
  if (!isRecord(context)) throw fail(`expects a context object as its second argument, got ${describe(context)}`);
  const { input } = context;
  if (!Array.isArray(input) || input.length === 0) throw fail(`context.input must be a non-empty array of blocks, got ${describe(input)}`);
  input.forEach((block: unknown, index) => {
    if (isRecord(block) && block["type"] === "text" && typeof block["text"] === "string") return;
    if (isImageBlock(block)) return;
    throw fail(`context.input[${index}] must be a text or image block, got ${describe(block)}`);
  });
}

/** At most `limit` runs at once, started in call order. */
function limiter(limit: number): <T>(run: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (run) => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await run();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

interface CallResult {
  stopReason: string;
  errorMessage?: string;
  usage?: Usage;
}

/** The `models.*` globals of one script. */
export function modelGlobals(host: ModelGlobalsHost): CodemodeTool[] {
  const { registry } = host;
  const limit = limiter(MAX_CONCURRENT);
  let count = 0;

  /** The registry's own entry for the script's `{ provider, id }` (never the script's object, so its baseUrl or headers cannot receive the credentials). */
  const resolve = <T extends "classifier" | "image">(name: string, type: T, given: unknown): ModelTypeMap[T] => {
    const listHint = `List the ${type} models you can use with models.getAvailableOfType("${type}").`;
    if (!isRecord(given) || typeof given["provider"] !== "string" || typeof given["id"] !== "string") {
      // An undefined argument crosses the sandbox as null.
      const hint = given === undefined || given === null ? " models.getModelOfType() returns undefined for an unknown provider or id." : "";
      throw new Error(`${name}() expects ${article(type)} model as its first argument, got ${describe(given)}.${hint} ${listHint}`);
    }
    const provider = given["provider"];
    const id = given["id"];
    const model = registry.getModelOfType(type, provider, id);
    if (model) return model;
    const other = MODEL_TYPES.find((t) => t !== type && registry.getModelOfType(t, provider, id) !== undefined);
    throw new Error(
      other
        ? `"${provider}/${id}" is ${article(other)} model, not ${article(type)} model. ${listHint}`
        : `Unknown ${type} model "${provider}/${id}". ${listHint}`,
    );
  };

  /** One call as a row of the script's calls, with its outcome, error and cost. */
  const tracked = async <R extends CallResult>(name: string, model: { provider: string; id: string }, call: () => Promise<R>): Promise<R> => {
    const row = host.addRow({ id: `${host.toolCallId}/${name}/${++count}`, name, args: `${model.provider}/${model.id}`, status: "running" });
    host.publish();
    const began = performance.now();
    const result = await limit(call);
    row.durationMs = performance.now() - began;
    row.status = result.stopReason === "stop" ? "ok" : result.stopReason === "aborted" ? "cancelled" : "error";
    if (result.errorMessage) row.error = cut(result.errorMessage, ERROR_PREVIEW);
    if (result.usage) {
      row.cost = result.usage.cost.total;
      host.addUsage(result.usage);
    }
    host.publish();
    return result;
  };

  const globals: Record<string, CodemodeTool["execute"]> = {
    "models.getModelsOfType": (args) => {
      const [type, provider] = spreadArgs(args);
      return registry.getModelsOfType(modelType(type), providerArg(provider)).map(info);
    },
    "models.getAvailableOfType": async (args) => {
      const [type, provider] = spreadArgs(args);
      return (await registry.getAvailableOfType(modelType(type), providerArg(provider))).map(info);
    },
    "models.getModelOfType": (args) => {
      const list = spreadArgs(args);
      const [type, provider, id] = list;
      if (typeof provider !== "string" || typeof id !== "string") {
        throw new Error(
          `models.getModelOfType(type, provider, id) expects three strings, got (${list.map(describe).join(", ")}). The provider and the id are separate arguments, for example models.getModelOfType("classifier", "typesafe", "jev-latest").`,
        );
      }
      const model = registry.getModelOfType(modelType(type), provider, id);
      return model === undefined ? undefined : info(model);
    },
    "models.classify": (args, { signal }) => {
      const [given, context] = spreadArgs(args);
      const model = resolve("models.classify", "classifier", given);
      checkClassifyContext(context);
      return tracked("models.classify", model, () => registry.classify(model, context, { signal }));
    },
    "models.generateImages": (args, { signal }) => {
      const [given, context] = spreadArgs(args);
      const model = resolve("models.generateImages", "image", given);
      checkImagesContext(context);
      return tracked("models.generateImages", model, async () => {
        const result = await registry.generateImages(model, context, { signal });
        host.addGeneratedImages(result.output.filter((block) => block.type === "image").length);
        return result;
      });
    },
  };
  return Object.entries(globals).map(([name, execute]) => ({ name, spread: true, execute }));
}

/** Two usages summed (the script's model calls), the optional figures kept where either has them, as pi sums them. */
export function sumUsage(a: Usage, b: Usage): Usage {
  const optional = (key: "cacheWrite1h" | "reasoning") => (a[key] !== undefined || b[key] !== undefined ? { [key]: (a[key] ?? 0) + (b[key] ?? 0) } : {});
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    ...optional("cacheWrite1h"),
    ...optional("reasoning"),
    totalTokens: a.totalTokens + b.totalTokens,
    cost: {
      input: a.cost.input + b.cost.input,
      output: a.cost.output + b.cost.output,
      cacheRead: a.cost.cacheRead + b.cost.cacheRead,
      cacheWrite: a.cost.cacheWrite + b.cost.cacheWrite,
      total: a.cost.total + b.cost.total,
      // A sum is the provider's own figure only when every part is.
      totalFromProvider: a.cost.totalFromProvider === true && b.cost.totalFromProvider === true,
    },
  };
}
