/**
 * What an extension gets for a module of the newest pi's libraries (`@earendil-works/pi-ai` and
 * its subpaths, pi-tui, pi-agent-core; `@mariozechner/*` alike): parley's own 0.73 instance of
 * every name 0.73 has (the same values parley runs with: a schema, a registered API provider),
 * plus each name only the newest has (newest-surface.generated.ts): implemented for real where
 * parley can (pi-ai-additions.ts, pi-ai-transcript.ts, pi-ai-utils.ts), else a stand-in of the same kind that
 * loads and fails with a clear message when used. Each value is made when first read.
 */
import { builtinApi, createProvider, makeStreamingClasses, modelCatalog, parseToolCallArguments, sleep, uuidv7 } from "./pi-ai-additions.js";
import * as transcript from "./pi-ai-transcript.js";
import * as utils from "./pi-ai-utils.js";
import { NEWEST_MODULES, type NewestExport } from "./newest-surface.generated.js";
import { unavailableClass, unavailableError, unavailableFunction } from "./unavailable.js";

/** A library module by package-relative 0.73 specifier ("pi-ai", "pi-ai/oauth"). */
export type LibraryLoader = (base: string) => Readonly<Record<string, unknown>>;

const REASON = "the newest pi's libraries have it, parley's 0.73 copies do not";
const INTROSPECTION = new Set(["then", "toJSON", "constructor", "asymmetricMatch", "nodeType", "tagName", "$$typeof"]);

/** An object whose members fail with a clear message (symbols and probes pass). */
function unavailableObject(name: string): object {
  return new Proxy(Object.create(null) as object, {
    get(target, prop) {
      if (typeof prop === "symbol" || INTROSPECTION.has(prop)) return Reflect.get(target, prop);
      throw unavailableError(`${name}.${prop}`, REASON);
    },
  });
}

const reals = new Map<string, Record<string, () => unknown>>();

/** Real implementations, by package and name: each a maker run at first read. */
function realValues(pkg: string, load: LibraryLoader): Record<string, () => unknown> {
  let table = reals.get(pkg);
  if (table === undefined) reals.set(pkg, (table = makeRealValues(pkg, load)));
  return table;
}

function makeRealValues(pkg: string, load: LibraryLoader): Record<string, () => unknown> {
  if (pkg === "pi-tui") {
    // pi-tui's fake-cursor markers: zero-width APC sequences around the cursor's text.
    return { renderFakeCursor: () => (text: string) => `\x1b_pi:fc\x07${text}\x1b_pi:/fc\x07` };
  }
  if (pkg !== "pi-ai") return {};
  let library: Readonly<Record<string, unknown>> | undefined;
  const ai = () => (library ??= load("pi-ai"));
  let streaming: ReturnType<typeof makeStreamingClasses> | undefined;
  const classes = () => (streaming ??= makeStreamingClasses(ai));
  const apis: Record<string, string> = {
    anthropicMessagesApi: "anthropic-messages",
    azureOpenAIResponsesApi: "azure-openai-responses",
    bedrockConverseStreamApi: "bedrock-converse-stream",
    googleGenerativeAIApi: "google-generative-ai",
    googleVertexApi: "google-vertex",
    mistralConversationsApi: "mistral-conversations",
    openAICodexResponsesApi: "openai-codex-responses",
    openAICompletionsApi: "openai-completions",
    openAIResponsesApi: "openai-responses",
  };
  return {
    uuidv7: () => uuidv7,
    sleep: () => sleep,
    parseToolCallArguments: () => parseToolCallArguments,
    createProvider: () => createProvider,
    StreamingJsonParser: () => classes().StreamingJsonParser,
    ToolCallArgumentsStream: () => classes().ToolCallArgumentsStream,
    ...Object.fromEntries(Object.entries(apis).map(([name, api]) => [name, () => builtinApi(ai, api)])),
    ...Object.fromEntries([...Object.entries(transcript), ...Object.entries(utils)].map(([name, value]) => [name, () => value])),
  };
}

// One value per package and name, whichever module it is read from (1.6.0's root re-exports its
// subpaths' names: `ModelsError` from pi-ai and from pi-ai/utils/models-error must be one class).
const values = new Map<string, unknown>();

/** The value parley gives for a name 0.73 lacks. */
function addedValue(specifier: string, name: string, kind: Exclude<NewestExport, "base">, load: LibraryLoader): unknown {
  if (typeof kind === "object") return kind.value;
  const pkg = specifier.split("/")[0] ?? specifier;
  const key = `${pkg}:${name}:${kind}`;
  if (!values.has(key)) values.set(key, makeValue(specifier, pkg, name, kind, load));
  return values.get(key);
}

function makeValue(specifier: string, pkg: string, name: string, kind: "function" | "class" | "object", load: LibraryLoader): unknown {
  const real = realValues(pkg, load)[name];
  if (real) return real();
  // providers/<id>.models: the chat models are parley's catalogue of that provider; image and
  // classifier models do not exist in 0.73.
  const catalog = /^pi-ai\/providers\/(.+)\.models$/.exec(specifier);
  if (catalog?.[1] && kind === "object") {
    return /_(IMAGE|CLASSIFIER)_MODELS$/.test(name) ? {} : modelCatalog(() => load("pi-ai"), catalog[1])();
  }
  if (kind === "class") return unavailableClass(name, REASON);
  if (kind === "function") return unavailableFunction(name, REASON);
  return unavailableObject(name);
}

const made = new Map<string, object>();

/** The module for a newest-pi specifier ("pi-ai/utils/uuid"); undefined for one it does not have. */
export function newestModule(specifier: string, load: LibraryLoader): object | undefined {
  const known = made.get(specifier);
  if (known) return known;
  const module = NEWEST_MODULES[specifier];
  if (!module) return undefined;
  const out: Record<string, unknown> = {};
  Object.defineProperty(out, "__esModule", { value: true });
  const reads = (name: string, get: () => unknown) => Object.defineProperty(out, name, { enumerable: true, get });
  // The base's own names stay getters of it: reading one loads what the base would load, no more.
  let baseModule: Readonly<Record<string, unknown>> | undefined;
  const base = () => (baseModule ??= load(module.base));
  if (module.extend) for (const name of Object.keys(base())) reads(name, () => base()[name]);
  for (const [name, kind] of Object.entries(module.exports)) {
    reads(name, kind === "base" ? () => base()[name] : () => addedValue(specifier, name, kind, load));
  }
  made.set(specifier, out);
  return out;
}
