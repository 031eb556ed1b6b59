/**
 * Values the newest pi-ai exports that parley's pi-ai (0.73) lacks and that parley implements
 * for real: what an extension gets for them (see newest-modules.ts). `ai` is parley's own pi-ai
 * instance, read only when one of these needs it.
 */
import * as transcript from "./pi-ai-transcript.js";

type Library = Readonly<Record<string, unknown>>;
type Fn = (...args: unknown[]) => unknown;

const fn = (library: Library, name: string): Fn => {
  const value = library[name];
  if (typeof value !== "function") throw new Error(`parley: pi-ai has no function ${name}`);
  return (...args) => Reflect.apply(value, undefined, args);
};

// ---------------------------------------------------------------------------
// UUIDv7 (RFC 9562): 48 bits of milliseconds, then a 74-bit counter seeded at random, so ids made
// in the same millisecond (or after the clock went back) still sort in creation order.

const MAX_MS = 2 ** 48 - 1;
let lastMs = -1;
let counter: bigint | undefined;

export function uuidv7(timestampMs?: number): string {
  const ms = timestampMs ?? Math.max(Date.now(), lastMs);
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_MS) throw new RangeError(`UUIDv7 timestamp must be an integer between 0 and ${MAX_MS}`);
  if (timestampMs === undefined) lastMs = ms;
  const random = globalThis.crypto.getRandomValues(new Uint8Array(16));
  // A fresh counter starts in the lower half of its range, so that increments never run out.
  counter = counter === undefined ? BigInt(`0x${Buffer.from(random.subarray(0, 5)).toString("hex")}`) : counter + 1n;
  if (counter >= 1n << 41n) throw new RangeError("UUIDv7 generator sequence exhausted");
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 6; i++) bytes[i] = Math.floor(ms / 2 ** (8 * (5 - i))) % 256;
  // Version 7 and the RFC variant around the counter's 12 + 6 + 24 high bits; random low bits.
  const c = counter;
  bytes[6] = 0x70 | Number((c >> 37n) & 0x0fn);
  bytes[7] = Number((c >> 29n) & 0xffn);
  bytes[8] = 0x80 | Number((c >> 23n) & 0x3fn);
  bytes[9] = Number((c >> 15n) & 0xffn);
  bytes[10] = Number((c >> 7n) & 0xffn);
  bytes[11] = (Number(c & 0x7fn) << 1) | ((random[11] ?? 0) & 1);
  for (let i = 12; i < 16; i++) bytes[i] = random[i] ?? 0;
  const hex = Buffer.from(bytes).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error("Aborted"));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error("Aborted"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

// ---------------------------------------------------------------------------
// Streaming tool-call arguments, on pi-ai 0.73's tolerant parser (parseStreamingJson).

/** A finished call's arguments: `{}` and an error naming the text when it is not a JSON object. */
export function parseToolCallArguments(json: string | undefined): { arguments: Record<string, unknown>; argumentsError?: string } {
  if (json === undefined || json.trim() === "") return { arguments: {} };
  try {
    const value: unknown = JSON.parse(json);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return { arguments: { ...value } };
    return { arguments: {}, argumentsError: `Tool call arguments are not a JSON object: ${json}` };
  } catch (error) {
    return { arguments: {}, argumentsError: `Tool call arguments are not valid JSON (${error instanceof Error ? error.message : String(error)}): ${json}` };
  }
}

/**
 * Text read in pieces, parsed with pi-ai 0.73's tolerant parser. Reparsing all of it at each piece
 * would cost the square of its length, so once it is long a piece is parsed only when the text has
 * grown by half since the last parse (linear in all): meanwhile the value read so far lags behind
 * the text, as pi-ai 1.6.0's own preview does for large values. `current()` parses what lags.
 */
class PieceParser {
  #text = "";
  #parsedLength = -1;
  #value: unknown;
  constructor(private readonly parse: (text: string) => unknown) {}
  get text(): string {
    return this.#text;
  }
  /** Adds a piece (or, with `restart`, starts over from it); true when the value was parsed again. */
  append(piece: string, restart = false): boolean {
    this.#text = restart ? piece : this.#text + piece;
    if (restart) this.#parsedLength = -1;
    if (this.#text.length > 4096 && this.#text.length < this.#parsedLength * 1.5) return false;
    this.#parseNow();
    return true;
  }
  /** The value of all the text read, parsed now if it lags. */
  current(): unknown {
    if (this.#parsedLength !== this.#text.length) this.#parseNow();
    return this.#value;
  }
  #parseNow(): void {
    this.#parsedLength = this.#text.length;
    this.#value = this.#text.trim() === "" ? undefined : this.parse(this.#text);
  }
  get value(): unknown {
    return this.#value;
  }
}

export function makeStreamingClasses(ai: () => Library) {
  const parse = (text: string): unknown => fn(ai(), "parseStreamingJson")(text);

  /** The value of JSON text read so far; each piece's change is reported as one `set` of the root. */
  class StreamingJsonParser {
    #pieces = new PieceParser(parse);
    #reported = JSON.stringify(undefined);
    append(text: string): readonly { kind: "set"; path: readonly (string | number)[]; value: unknown }[] {
      if (!this.#pieces.append(text) || this.#pieces.value === undefined) return [];
      const now = JSON.stringify(this.#pieces.value);
      if (now === this.#reported) return [];
      this.#reported = now;
      return [{ kind: "set", path: [], value: this.#pieces.value }];
    }
    /** The value of the text read so far (parsing it now if the last pieces were not). */
    snapshot(): unknown {
      return this.#pieces.current();
    }
  }

  /** One streaming tool call's argument text, its partial arguments, and the final parse. */
  class ToolCallArgumentsStream {
    #pieces = new PieceParser(parse);
    #arguments: Record<string, unknown> = {};
    get text(): string {
      return this.#pieces.text;
    }
    append(delta: string): Record<string, unknown> {
      return this.#read(this.#pieces.append(delta));
    }
    replace(text: string): { readonly delta: string | undefined; readonly arguments: Record<string, unknown> } {
      const delta = text.startsWith(this.#pieces.text) ? text.slice(this.#pieces.text.length) : undefined;
      return { delta, arguments: this.#read(this.#pieces.append(delta ?? text, delta === undefined)) };
    }
    finish(): { arguments: Record<string, unknown>; argumentsError?: string } {
      return parseToolCallArguments(this.#pieces.text);
    }
    /** The partial arguments: a new object only when they changed. */
    #read(parsed: boolean): Record<string, unknown> {
      const value = this.#pieces.value;
      const next = value !== null && typeof value === "object" && !Array.isArray(value) ? { ...value } : {};
      if (parsed && JSON.stringify(next) !== JSON.stringify(this.#arguments)) this.#arguments = next;
      return this.#arguments;
    }
  }
  return { StreamingJsonParser, ToolCallArgumentsStream };
}

// ---------------------------------------------------------------------------
// createProvider and the built-in API implementations, mapped onto parley's provider registration
// (pi.registerProvider with a config: name, baseUrl, api, streamSimple, models).

const BUILTIN_API = Symbol.for("parley.builtinApi");

type Context = { systemPrompt?: string; tools?: transcript.ToolLike[]; messages: { role: string }[] };
type StreamFn = (model: unknown, context: Context, options?: unknown) => unknown;

/** A newest-pi transcript (system messages inside) as the context pi-ai 0.73's providers take. */
function asLegacyContext(context: Context): Context {
  if (!context.messages.some((m) => m.role === "system")) return context;
  const tools = transcript.getCurrentTools(context.messages);
  return {
    systemPrompt: transcript.getCurrentSystemPrompt(context.messages) || context.systemPrompt,
    messages: context.messages.filter((m) => m.role !== "system"),
    ...(tools.length > 0 ? { tools } : context.tools ? { tools: context.tools } : {}),
  };
}

/** `openAICompletionsApi()` and its siblings: pi-ai 0.73's implementation of that API. */
export function builtinApi(ai: () => Library, api: string): () => Record<string | symbol, unknown> {
  return () => {
    const provider = (): Record<string, unknown> => {
      const found = fn(ai(), "getApiProvider")(api);
      if (found === null || typeof found !== "object") throw new Error(`pi-ai has no "${api}" API in parley`);
      return { ...found };
    };
    const call =
      (name: "stream" | "streamSimple"): StreamFn =>
      (model, context, options) => {
        const method = provider()[name];
        if (typeof method !== "function") throw new Error(`pi-ai's "${api}" API has no ${name}`);
        return Reflect.apply(method, undefined, [model, asLegacyContext(context), options]);
      };
    return { [BUILTIN_API]: api, stream: call("stream"), streamSimple: call("streamSimple") };
  };
}

interface ProviderInput {
  id: string;
  name?: string;
  baseUrl?: string;
  headers?: Record<string, string>;
  models?: Record<string, unknown>[];
  api?: unknown;
  [key: string]: unknown;
}

/** What an API implementation is: a built-in one (by its api name), the extension's own, or neither. */
function implementation(value: unknown): { builtin: string } | { streamSimple: (...args: unknown[]) => unknown } | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const builtin = Reflect.get(value, BUILTIN_API);
  if (typeof builtin === "string") return { builtin };
  const streamSimple = Reflect.get(value, "streamSimple");
  return typeof streamSimple === "function" ? { streamSimple: (...args) => Reflect.apply(streamSimple, value, args) } : undefined;
}

/**
 * A provider for `pi.registerProvider(provider)`: its models, and the API they use: a built-in
 * one by name (`openAICompletionsApi()`), or the streams the extension wrote, called with the
 * newest pi's transcript context. `api` may be one implementation or a map by `model.api`, of
 * built-in ones and at most one of the extension's own (parley registers one stream per provider).
 * Auth flows (`auth`) need pi's login UI, which RPC mode lacks: give the key as `apiKey` (a key or
 * an environment variable's name), as pi's config form takes.
 */
export function createProvider(input: ProviderInput): Record<string, unknown> {
  if (typeof input?.id !== "string" || input.id === "") throw new TypeError("createProvider: the provider needs an id");
  const id = input.id;
  const models = input.models ?? [];
  const single = implementation(input.api);
  const entries: [string, unknown][] = single !== undefined ? [] : input.api !== null && typeof input.api === "object" ? Object.entries(input.api) : [];
  if (single === undefined && entries.length === 0) {
    throw new TypeError(`createProvider("${id}"): api must be an API implementation such as openAICompletionsApi(), or a map of them by model.api`);
  }
  const byApi = new Map(entries.map(([api, value]) => [api, implementation(value)]));
  for (const [api, found] of byApi) if (found === undefined) throw new TypeError(`createProvider("${id}"): api["${api}"] is not an API implementation`);
  const own = [...(single ? [["", single] as const] : []), ...byApi].filter(([, found]) => found !== undefined && !("builtin" in found));
  if (own.length > 1) throw new TypeError(`createProvider("${id}"): parley takes one stream implementation of the extension's own per provider`);
  const ownName = single !== undefined ? (typeof models[0]?.api === "string" ? models[0].api : `${id}-api`) : (own[0]?.[0] ?? `${id}-api`);
  // The api name each model goes by: the built-in one its implementation stands for, or the one
  // under which the extension's stream is registered.
  const apiOf = (model: Record<string, unknown>): string => {
    const found = single ?? byApi.get(typeof model.api === "string" ? model.api : (entries[0]?.[0] ?? ""));
    if (found === undefined) throw new TypeError(`createProvider("${id}"): no api implementation for model ${String(model.id)} (api ${String(model.api)})`);
    return "builtin" in found ? found.builtin : ownName;
  };
  const stream = own[0]?.[1];
  const streamSimple: StreamFn | undefined =
    stream && "streamSimple" in stream
      ? // parley hands providers pi-ai 0.73's context; the extension's streams expect the newest transcript.
        (model, context, options) => stream.streamSimple(model, transcript.normalizeContext(context), options)
      : undefined;
  const mapped = models.map((model) => ({ ...model, api: apiOf(model) }));
  return {
    ...input,
    name: input.name ?? id,
    api: streamSimple ? ownName : (mapped[0]?.api ?? ownName),
    ...(streamSimple ? { streamSimple } : {}),
    models: mapped,
  };
}

/** Model catalogues of the newest pi's `providers/<id>.models` modules, from parley's pi-ai. */
export function modelCatalog(ai: () => Library, provider: string): () => Record<string, unknown> {
  return () => {
    const known = fn(ai(), "getProviders")();
    if (!Array.isArray(known) || !known.includes(provider)) return {};
    const models = fn(ai(), "getModels")(provider);
    return Array.isArray(models) ? Object.fromEntries(models.map((m: { id: string }) => [m.id, m])) : {};
  };
}
