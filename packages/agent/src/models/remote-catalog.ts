/**
 * The live model catalogue, as pi 1.6 overlays it on the built-in one: each built-in provider's
 * newer models from pi.dev (`GET <base>/api/models/providers/<id>?types=chat,image,classifier`),
 * saved in `<agent dir>/models-store.json` (pi's file: `{ "<provider>": { models, checkedAt,
 * lastModified, etag } }`) and read back at every start, offline included.
 *
 * pi's rules, read from pi 1.6's `remote-catalog-provider.js` and `model-runtime.js`:
 * - a saved catalogue counts only when its `Last-Modified` is newer than pi-ai's built-in model
 *   data; its chat models then replace built-in ones of the same id and add the new ones;
 * - the network is asked only for providers with credentials, at most every 4 hours per provider
 *   (sooner when the saved entry has no `lastModified`), with the saved `etag` as `If-None-Match`
 *   when a saved body backs it; each attempt has 4 s, a 408/425/429/5xx or a network error is
 *   tried twice more;
 * - 304 moves `checkedAt` only; 404/501 saves `lastModified: 0` (nothing newer); another failure
 *   saves `checkedAt` (the saved body and etag stay) and is an error of that provider's refresh.
 * OpenRouter's catalogue is personalised as pi 1.6's `withPersonalizedCatalog` does it: on every
 * network refresh (no 4-hour window, no etag) pi.dev's catalogue, when newer, is merged over the
 * built-in models, pi-ai's `personalizeOpenRouterCatalog` keeps the chat models the key may use
 * (`GET <base URL>/models/user`, with their limits and prices), and the result is saved as
 * `{ models, checkedAt }`; a saved non-empty list is the provider's whole catalogue from then on,
 * offline included. A failed pi.dev request saves nothing. Radius (its own gateway catalogue) is
 * not refreshed here: see NOTES-h-catalog3.md.
 *
 * The file is written as pi writes it: under auth.json's lock scheme (pi stores it through its
 * auth-file backend), created as `{}` with mode 0600, replaced whole (pi-file-lock.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import type { AnyModel, Api, Model } from "@earendil-works/pi-ai";
import { type PiJsonChange, withPiJsonFile } from "../config/pi-file-lock.js";
import { importModule } from "../startup/module-loader.js";
import { piAiFile } from "./pi-ai-files.js";

/** pi's catalogue server; pi 1.6's CLI has no setting for another (an HTTPS proxy reaches it as any request does). */
export const CATALOG_BASE_URL = "https://pi.dev";
/** How long a provider's saved catalogue is fresh (pi's `REMOTE_CATALOG_REFRESH_INTERVAL_MS`). */
export const CATALOG_REFRESH_INTERVAL_MS = 4 * 60 * 60 * 1000;
/** One attempt's time limit, and the statuses retried (pi's `fetchWithRetry`, two retries). */
const ATTEMPT_TIMEOUT_MS = 4_000;
const MAX_RETRIES = 2;
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);
/** The model types pi 1.6 asks for (`?types=`); entries of other types are dropped. */
const MODEL_TYPES = ["chat", "image", "classifier"];
/** Providers whose catalogue pi refreshes some other way. */
const NOT_OVERLAID = new Set(["radius"]);
/** Providers whose saved catalogue is personalised and replaces the built-in one. */
const PERSONALISED = new Set(["openrouter"]);

/** One provider's saved catalogue, as pi saves it. */
/** A model as the catalogue server sent it: saved as it came, read as a model where it is one. */
type CatalogEntry = Record<string, unknown>;

export interface StoreEntry {
  models: CatalogEntry[];
  checkedAt?: number;
  lastModified?: number;
  etag?: string | undefined;
}
type StoreData = Record<string, StoreEntry>;

export interface CatalogRequest {
  /** The server (default pi.dev). */
  baseUrl?: string;
  /** pi's User-Agent (pi-ai's `formatUserAgent`, detailed, with pi's version). */
  userAgent: string;
  signal?: AbortSignal;
  /** false: only read the saved catalogues (offline). Default true. */
  allowNetwork?: boolean;
  /** Ask the server even when the saved catalogue is fresh (pi's `force`). */
  force?: boolean;
  now?: () => number;
  /** What a personalised catalogue (OpenRouter's) is made from. */
  personal?: PersonalSource;
}

/** What OpenRouter's personalisation needs of parley's models. */
export interface PersonalSource {
  /** Every built-in model of the provider (chat, image, classifier). */
  builtIn(provider: string): readonly AnyModel[];
  /** The provider's key (an OAuth login's token), as a request would send it. */
  key(provider: string): string | undefined;
  /** The provider's base URL (models.json's, else the built-in one). */
  baseUrl(provider: string): string | undefined;
}

type OpenRouterModule = typeof import("@earendil-works/pi-ai/providers/openrouter");

/** The User-Agent pi sends to its own servers: pi-ai's detailed form with pi's version. */
export function catalogUserAgent(piVersion: string): string {
  return `pi/${piVersion} (${process.platform}; node/${process.version}; ${process.arch})`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseStore(text: string): StoreData {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === "") return {};
  const data: unknown = JSON.parse(body);
  if (!isObject(data)) throw new Error("Invalid models-store.json: expected an object");
  return data as StoreData;
}

/** The models of a catalogue response: an array, `{ models: [...] }`, or an object of models. */
function parseCatalog(providerId: string, value: unknown): CatalogEntry[] {
  const entries = Array.isArray(value) ? value : isObject(value) ? (Array.isArray(value["models"]) ? value["models"] : Object.values(value)) : undefined;
  if (!entries) throw new Error(`Invalid model catalog for provider "${providerId}"`);
  return entries
    .filter((entry): entry is CatalogEntry => isObject(entry) && "id" in entry)
    .filter((entry) => entry["type"] === undefined || (typeof entry["type"] === "string" && MODEL_TYPES.includes(entry["type"])))
    .map((entry) => ({ ...entry, provider: providerId }));
}

/** A chat model of `provider` with what parley reads of a model (the rest passes through as the server sent it). */
function isChatModel(entry: CatalogEntry, provider: string): entry is CatalogEntry & Model<Api> {
  return (
    entry["provider"] === provider &&
    (entry["type"] ?? "chat") === "chat" &&
    typeof entry["id"] === "string" &&
    typeof entry["api"] === "string" &&
    typeof entry["baseUrl"] === "string" &&
    typeof entry["contextWindow"] === "number" &&
    typeof entry["maxTokens"] === "number"
  );
}

/** A catalogue entry with what every model has (the rest passes through as the server sent it). */
function isAnyModel(entry: CatalogEntry): entry is CatalogEntry & AnyModel {
  return typeof entry["id"] === "string" && typeof entry["api"] === "string" && typeof entry["provider"] === "string" && typeof entry["baseUrl"] === "string";
}

/** A fetch with pi's bounded retry for management requests (see the module comment). */
async function fetchWithRetry(url: URL, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    const attemptSignal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
    try {
      const response = await fetch(url, { headers, signal: signal ? AbortSignal.any([signal, attemptSignal]) : attemptSignal });
      if (!RETRYABLE.has(response.status) || attempt >= MAX_RETRIES) return response;
      await response.body?.cancel().catch(() => undefined);
    } catch (error) {
      if (signal?.aborted || attempt >= MAX_RETRIES) throw error;
    }
  }
}

/**
 * The overlay: what models-store.json holds for each provider (restored at start), refreshed from
 * the server on request. `version` grows whenever a provider's models change.
 */
export class RemoteCatalog {
  #dynamic = new Map<string, Model<Api>[]>();
  #version = 0;

  constructor(
    /** `<agent dir>/models-store.json`. */
    readonly file: string,
    /** When pi-ai's built-in model data was generated (ms); saved catalogues older than that are ignored. */
    readonly builtInGeneratedAt: number | undefined,
  ) {}

  get version(): number {
    return this.#version;
  }

  /** A provider's overlaid chat models (empty when none). */
  chatModels(provider: string): readonly Model<Api>[] {
    return this.#dynamic.get(provider) ?? [];
  }

  /** Whether a provider's catalogue is overlaid from pi.dev. */
  static overlays(provider: string): boolean {
    return !NOT_OVERLAID.has(provider);
  }

  /** Whether a provider's saved models are its whole catalogue (OpenRouter's, personalised per key). */
  replaces(provider: string): boolean {
    return PERSONALISED.has(provider);
  }

  #newer(entry: StoreEntry | undefined): boolean {
    if (!entry) return false;
    return this.builtInGeneratedAt === undefined || (entry.lastModified !== undefined && entry.lastModified > this.builtInGeneratedAt);
  }

  #publish(provider: string, entry: StoreEntry | undefined): void {
    // A personalised list is the key's own, saved whatever its age.
    const models =
      PERSONALISED.has(provider) || this.#newer(entry)
        ? (entry?.models ?? []).filter((m): m is CatalogEntry & Model<Api> => isObject(m) && isChatModel(m, provider))
        : [];
    const before = this.#dynamic.get(provider) ?? [];
    if (before.length === 0 && models.length === 0) return;
    if (models.length === 0) this.#dynamic.delete(provider);
    else this.#dynamic.set(provider, models);
    this.#version++;
  }

  /**
   * Reads the saved catalogues without waiting on a lock (a start-up read: pi's writes are whole,
   * so a read sees one file or the other). A missing or unreadable file overlays nothing.
   */
  restoreSync(providers: readonly string[]): void {
    if (!existsSync(this.file)) return;
    let data: StoreData;
    try {
      data = parseStore(readFileSync(this.file, "utf8"));
    } catch {
      return;
    }
    for (const provider of providers) if (RemoteCatalog.overlays(provider)) this.#publish(provider, data[provider]);
  }

  /** Runs `change` on the file's data under pi's lock, creating it as pi does; a returned value replaces the file. */
  async #withStore<T>(change: (data: StoreData) => PiJsonChange<StoreData, T>, signal?: AbortSignal): Promise<T> {
    return withPiJsonFile(this.file, parseStore, change, { signal });
  }

  /**
   * The saved catalogues under pi's lock. pi's start-up makes the file (`{}`) to lock it even when
   * it has nothing to save; parley makes it only to save something, so a run that saves nothing
   * (`--no-session`, offline) leaves the agent directory as it was.
   */
  async read(signal?: AbortSignal): Promise<StoreData> {
    if (!existsSync(this.file)) return {};
    return this.#withStore((data) => ({ result: data }), signal);
  }

  async #save(provider: string, entry: StoreEntry, signal?: AbortSignal): Promise<void> {
    await this.#withStore((data) => ({ result: undefined, next: { ...data, [provider]: entry } }), signal);
  }

  /**
   * Refreshes the given providers (those with credentials) from the server, in parallel; the
   * others are only restored from the file. Resolves to each failed provider's error; never rejects.
   */
  async refresh(configured: readonly string[], providers: readonly string[], request: CatalogRequest): Promise<Map<string, Error>> {
    const errors = new Map<string, Error>();
    let stored: StoreData;
    try {
      stored = await this.read(request.signal);
    } catch (error) {
      for (const provider of configured) errors.set(provider, error instanceof Error ? error : new Error(String(error)));
      return errors;
    }
    for (const provider of providers) if (RemoteCatalog.overlays(provider)) this.#publish(provider, stored[provider]);
    if (request.allowNetwork === false) return errors;
    await Promise.all(
      configured
        .filter((provider) => RemoteCatalog.overlays(provider))
        .map(async (provider) => {
          try {
            await this.#refreshOne(provider, stored[provider], request);
          } catch (error) {
            if (!request.signal?.aborted) errors.set(provider, error instanceof Error ? error : new Error(String(error)));
          }
        }),
    );
    return errors;
  }

  async #refreshOne(provider: string, stored: StoreEntry | undefined, request: CatalogRequest): Promise<void> {
    if (PERSONALISED.has(provider)) return this.#refreshPersonal(provider, request);
    const now = request.now ?? Date.now;
    const { signal } = request;
    if (!request.force && stored?.checkedAt !== undefined && stored.lastModified !== undefined && now() - stored.checkedAt < CATALOG_REFRESH_INTERVAL_MS) {
      return;
    }
    const validator = stored && Array.isArray(stored.models) && stored.models.length > 0 ? stored.etag : undefined;
    const url = new URL(`/api/models/providers/${encodeURIComponent(provider)}`, request.baseUrl ?? CATALOG_BASE_URL);
    url.searchParams.set("types", MODEL_TYPES.join(","));
    const response = await fetchWithRetry(
      url,
      { accept: "application/json", "User-Agent": request.userAgent, ...(validator ? { "if-none-match": validator } : {}) },
      signal,
    );
    if (signal?.aborted) return;
    const checkedAt = now();
    if (response.status === 304 && stored) {
      await this.#save(provider, { ...stored, checkedAt }, signal);
      return;
    }
    if (response.status === 404 || response.status === 501) {
      // The restored models stay until the next start, as in pi.
      await this.#save(provider, { ...(stored ?? { models: [] }), checkedAt, lastModified: 0, etag: undefined }, signal);
      return;
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      await this.#save(provider, { ...(stored ?? { models: [] }), checkedAt }, signal);
      throw new Error(`Model catalog request failed for ${provider}: ${response.status}`);
    }
    const lastModified = Date.parse(response.headers.get("last-modified") ?? "");
    const entry: StoreEntry = {
      models: parseCatalog(provider, await response.json()),
      lastModified: Number.isNaN(lastModified) ? 0 : lastModified,
      etag: response.headers.get("etag") ?? undefined,
      checkedAt,
    };
    if (signal?.aborted) return;
    await this.#save(provider, entry, signal);
    this.#publish(provider, entry);
  }

  /** OpenRouter's refresh (see the module comment): pi.dev's newer models merged in, personalised for the key, saved whole. */
  async #refreshPersonal(provider: string, request: CatalogRequest): Promise<void> {
    const { signal, personal } = request;
    if (!personal) return;
    const now = request.now ?? Date.now;
    const url = new URL(`/api/models/providers/${encodeURIComponent(provider)}`, request.baseUrl ?? CATALOG_BASE_URL);
    url.searchParams.set("types", MODEL_TYPES.join(","));
    const response = await fetchWithRetry(url, { accept: "application/json", "User-Agent": request.userAgent }, signal);
    if (signal?.aborted) return;
    let remote: CatalogEntry[] = [];
    if (response.status !== 404 && response.status !== 501) {
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new Error(`Model catalog request failed for ${provider}: ${response.status}`);
      }
      const lastModified = Date.parse(response.headers.get("last-modified") ?? "");
      const models = parseCatalog(provider, await response.json());
      if (this.#newer({ models, lastModified: Number.isNaN(lastModified) ? 0 : lastModified })) remote = models;
    } else await response.body?.cancel().catch(() => undefined);
    // Built-in then pi.dev's, one per type and id (a newer entry takes the place of the built-in one).
    const merged = new Map<string, AnyModel>();
    for (const model of [...personal.builtIn(provider), ...remote.filter(isAnyModel)]) merged.set(`${model.type ?? "chat"}\0${model.id}`, model);
    const key = personal.key(provider);
    const baseUrl = personal.baseUrl(provider);
    const { personalizeOpenRouterCatalog } = await importModule<OpenRouterModule>(await piAiFile("providers/openrouter.js"));
    const personalised = await personalizeOpenRouterCatalog([...merged.values()], {
      ...(key !== undefined ? { credential: { type: "api_key", key } } : {}),
      ...(baseUrl !== undefined ? { baseUrl } : {}),
      allowNetwork: true,
      signal: signal ?? new AbortController().signal,
      // The caller saves the result itself.
      publish: async () => true,
    });
    if (signal?.aborted) return;
    const entry: StoreEntry = { models: personalised.map((model) => ({ ...model })), checkedAt: now() };
    await this.#save(provider, entry, signal);
    this.#publish(provider, entry);
  }
}
