/**
 * Virtual models (the newest pi's `pi.registerVirtualModel`): catalogue entries that pick a
 * physical model for each request. The selection (`model_change`, get_state, `ctx.model`) may
 * name one; everything below the routing step sees physical models only: providers stream them
 * and assistant messages name them. Router state lives on the session branch as custom entries.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Api, AssistantMessage, Message, Model } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@parley/protocol";
import { isThinkingLevel, THINKING_LEVELS } from "@parley/protocol/constants";
import type { ThinkingLevel } from "./model-patterns.js";
import { ABORTED_MESSAGE } from "./reply-stream.js";

/** The api of virtual catalogue entries: a request for it fails unless routed first. */
export const VIRTUAL_MODEL_API = "pi-virtual";
/** Custom entry type holding router state on the session branch (`data`: provider, modelId, state). */
export const VIRTUAL_MODEL_STATE_ENTRY = "pi.virtual-model-state";

/** Why a request is routed: the first after a user's message, any other loop request, an automatic retry, or one outside the loop (summaries). */
export type RouteReason = "user" | "continuation" | "retry" | "direct";

export interface RouteRequest {
  model: Model<Api>;
  thinkingLevel: ThinkingLevel;
  reason: RouteReason;
  /** The physical model and level of the latest successful response in `messages`. */
  previous?: { model: Model<Api>; thinkingLevel?: ThinkingLevel };
  /** For `retry`: the failed request, no longer in `messages`. */
  failed?: { model: Model<Api>; thinkingLevel?: ThinkingLevel; message: AssistantMessage };
  /** Router state last stored on this branch; absent for `direct` requests. */
  state?: unknown;
  messages: readonly Message[];
  signal?: AbortSignal;
}

export interface Route {
  model: Model<Api>;
  thinkingLevel: ThinkingLevel;
  /** New router state; `undefined` or the request's own state keeps the current one. */
  state?: unknown;
}

export interface VirtualModelDefinition {
  provider: string;
  id: string;
  name: string;
  thinkingLevels?: readonly ThinkingLevel[];
  contextWindow?: number;
  maxTokens?: number;
  input?: ("text" | "image")[];
  route(request: RouteRequest): unknown;
}

export function isVirtualModel(model: { api: string }): boolean {
  return model.api === VIRTUAL_MODEL_API;
}

function knownLevel(value: unknown): ThinkingLevel | undefined {
  return isThinkingLevel(value) ? value : undefined;
}

function text(value: object, key: string, what: string): string {
  const found = Reflect.get(value, key);
  if (typeof found !== "string" || found.trim() === "") throw new TypeError(`registerVirtualModel: ${what} must be a non-empty string`);
  return found;
}

function limit(value: object, key: string): number | undefined {
  const found = Reflect.get(value, key);
  if (found === undefined) return undefined;
  if (typeof found !== "number" || !Number.isFinite(found) || found < 0) throw new TypeError(`registerVirtualModel: ${key} must be a non-negative number`);
  return found;
}

/**
 * What an extension passed to `pi.registerVirtualModel`, checked; throws a TypeError saying what
 * is wrong. `context()` makes the `ctx` its router gets with each request.
 */
export function parseVirtualModel(value: unknown, context: () => unknown): VirtualModelDefinition {
  if (typeof value !== "object" || value === null) throw new TypeError("registerVirtualModel: expected { provider, id, name, route }");
  const provider = text(value, "provider", "provider");
  const id = text(value, "id", "id");
  const name = typeof Reflect.get(value, "name") === "string" ? String(Reflect.get(value, "name")) : id;
  const route: unknown = Reflect.get(value, "route");
  if (typeof route !== "function") throw new TypeError(`registerVirtualModel: ${provider}/${id} needs a route(request, ctx) function`);
  const levels: unknown = Reflect.get(value, "thinkingLevels");
  if (levels !== undefined && (!Array.isArray(levels) || levels.some((l) => knownLevel(l) === undefined))) {
    throw new TypeError(`registerVirtualModel: thinkingLevels must list levels of ${THINKING_LEVELS.join(", ")}`);
  }
  const input: unknown = Reflect.get(value, "input");
  if (input !== undefined && (!Array.isArray(input) || input.some((i) => i !== "text" && i !== "image"))) {
    throw new TypeError('registerVirtualModel: input must list "text" and/or "image"');
  }
  const contextWindow = limit(value, "contextWindow");
  const maxTokens = limit(value, "maxTokens");
  return {
    provider,
    id,
    name,
    ...(Array.isArray(levels) ? { thinkingLevels: levels.flatMap((l) => knownLevel(l) ?? []) } : {}),
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(Array.isArray(input) ? { input: input.filter((i): i is "text" | "image" => i === "text" || i === "image") } : {}),
    route: (request) => Reflect.apply(route, value, [request, context()]),
  };
}

/** The catalogue entry: the offered levels map to themselves, the others are unsupported (pi-ai's thinkingLevelMap). */
export function virtualCatalogEntry(definition: VirtualModelDefinition): Model<Api> {
  const levels = definition.thinkingLevels ?? ["off"];
  const map = Object.fromEntries(THINKING_LEVELS.map((level) => [level, levels.includes(level) ? level : null]));
  return {
    id: definition.id,
    name: definition.name,
    api: VIRTUAL_MODEL_API,
    provider: definition.provider,
    baseUrl: "",
    reasoning: levels.some((level) => level !== "off"),
    thinkingLevelMap: map,
    input: definition.input ?? ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: definition.contextWindow ?? 0,
    maxTokens: definition.maxTokens ?? 0,
  };
}

/** The registered virtual models, by provider and id; registering one again replaces it. */
export class VirtualModels {
  readonly #byKey = new Map<string, { definition: VirtualModelDefinition; model: Model<Api> }>();

  register(definition: VirtualModelDefinition): Model<Api> {
    const model = virtualCatalogEntry(definition);
    this.#byKey.set(`${definition.provider}/${definition.id}`, { definition, model });
    return model;
  }

  unregister(provider: string, id: string): boolean {
    return this.#byKey.delete(`${provider}/${id}`);
  }

  get(provider: string, id: string): VirtualModelDefinition | undefined {
    return this.#byKey.get(`${provider}/${id}`)?.definition;
  }

  find(provider: string, id: string): Model<Api> | undefined {
    return this.#byKey.get(`${provider}/${id}`)?.model;
  }

  models(): Model<Api>[] {
    return [...this.#byKey.values()].map((v) => v.model);
  }

  get size(): number {
    return this.#byKey.size;
  }
}

/** What routing needs to know of the catalogue. */
export interface RouteCatalog {
  /** A physical model of the catalogue (never a virtual one). */
  physical(provider: string, id: string): Model<Api> | undefined;
  hasAuth(model: Model<Api>): boolean;
  clamp(model: Model<Api>, level: ThinkingLevel): ThinkingLevel;
}

/** The level the loop asked for, stamped on a routed response (the newest pi records it on every loop response). */
function levelOf(message: AssistantMessage): ThinkingLevel | undefined {
  return knownLevel(Reflect.get(message, "thinkingLevel"));
}

/**
 * Asks a virtual model's router for one request's physical model and level. Throws, with the
 * newest pi's wording, when the model is not registered, the router throws, or it names a model
 * that is virtual, unknown or without credentials.
 */
export async function routeRequest(
  definition: VirtualModelDefinition | undefined,
  model: Model<Api>,
  catalog: RouteCatalog,
  request: Omit<RouteRequest, "model" | "previous" | "failed"> & { failed?: AssistantMessage },
): Promise<Route> {
  const name = `Virtual model ${model.provider}/${model.id}`;
  if (!definition) throw new Error(`${name} is not registered.`);
  const { failed, ...rest } = request;
  const latest = latestResponse(request.messages);
  const previousModel = latest && catalog.physical(latest.provider, latest.model);
  const previousLevel = latest && levelOf(latest);
  // A failed routing names the virtual model: there is no physical request to report.
  const failedModel = failed && catalog.physical(failed.provider, failed.model);
  const failedLevel = failed && levelOf(failed);
  const answer: unknown = await untilAborted(
    request.signal,
    Promise.resolve().then(() =>
      definition.route({
        ...rest,
        model,
        ...(previousModel ? { previous: { model: previousModel, ...(previousLevel ? { thinkingLevel: previousLevel } : {}) } } : {}),
        ...(failed && failedModel ? { failed: { model: failedModel, ...(failedLevel ? { thinkingLevel: failedLevel } : {}), message: failed } } : {}),
      }),
    ),
  );
  if (typeof answer !== "object" || answer === null) throw new Error(`${name}: route() must return { model, thinkingLevel }.`);
  const chosen: unknown = Reflect.get(answer, "model");
  const provider = typeof chosen === "object" && chosen !== null ? Reflect.get(chosen, "provider") : undefined;
  const id = typeof chosen === "object" && chosen !== null ? Reflect.get(chosen, "id") : undefined;
  if (typeof provider !== "string" || typeof id !== "string") throw new Error(`${name}: route() returned no model.`);
  const routed = `${name} routed to ${provider}/${id}`;
  const target = catalog.physical(provider, id);
  if (!target) throw new Error(`${routed}, which is not a physical model.`);
  if (!catalog.hasAuth(target)) throw new Error(`${routed}, which has no credentials.`);
  const level = knownLevel(Reflect.get(answer, "thinkingLevel")) ?? "off";
  const state: unknown = Reflect.get(answer, "state");
  return { model: target, thinkingLevel: catalog.clamp(target, level), ...(state !== undefined ? { state } : {}) };
}

/**
 * A router's answer, or a rejection once `signal` aborts: a router that ignores the signal (a
 * classifier call that never returns) must not keep the run from being aborted.
 */
function untilAborted<T>(signal: AbortSignal | undefined, work: Promise<T>): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new Error(ABORTED_MESSAGE));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The latest successful response (failed and aborted ones, routing failures among them, are skipped). */
export function latestResponse(messages: readonly (Message | AgentMessage)[]): AssistantMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted") return message;
  }
  return undefined;
}

/** The router state this branch last stored for a virtual model. */
export function routerState(branch: readonly SessionEntry[], provider: string, modelId: string): unknown {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry?.type !== "custom" || entry.customType !== VIRTUAL_MODEL_STATE_ENTRY) continue;
    const data: unknown = entry.data;
    if (typeof data === "object" && data !== null && Reflect.get(data, "provider") === provider && Reflect.get(data, "modelId") === modelId) {
      return Reflect.get(data, "state");
    }
  }
  return undefined;
}

/** The branch's latest model_change, if any. */
export function lastModelChange(branch: readonly SessionEntry[]): { provider: string; modelId: string } | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry?.type === "model_change") return { provider: entry.provider, modelId: entry.modelId };
  }
  return undefined;
}
