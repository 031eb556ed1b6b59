/**
 * The virtual-model pieces on their own: what a registration must look like, the catalogue entry
 * it becomes, what the router is told and what its answer must be, and router state on a branch.
 * (The whole of it, through the spawned CLI, is in virtual-models.e2e.test.ts.)
 */
import type { Api, AssistantMessage, Model } from "@earendil-works/pi-ai/compat";
import type { SessionEntry } from "@parley/protocol";
import { assert, describe, expect, it } from "vitest";
import { LoopRouting } from "../src/agent/virtual-routing.js";
import {
  lastModelChange,
  parseVirtualModel,
  type RouteCatalog,
  type RouteRequest,
  routeRequest,
  routerState,
  VIRTUAL_MODEL_API,
  virtualCatalogEntry,
} from "../src/models/virtual-models.js";

const physical = (provider: string, id: string, reasoning = true): Model<Api> => ({
  id,
  name: id,
  api: "test-api",
  provider,
  baseUrl: "",
  reasoning,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1000,
  maxTokens: 100,
});

const MODELS = [physical("p", "a"), physical("p", "plain", false), physical("nokey", "b")];
const catalog: RouteCatalog = {
  physical: (provider, id) => MODELS.find((m) => m.provider === provider && m.id === id),
  hasAuth: (m) => m.provider !== "nokey",
  clamp: (m, level) => (m.reasoning ? level : "off"),
};

const reply = (provider: string, model: string, extra: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "x" }],
  api: "test-api",
  provider,
  model,
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: 1,
  ...extra,
});

const noContext = () => ({});

describe("parseVirtualModel", () => {
  it("says what is wrong with a registration", () => {
    expect(() => parseVirtualModel(undefined, noContext)).toThrow("expected { provider, id, name, route }");
    expect(() => parseVirtualModel({ provider: "", id: "x", route: () => ({}) }, noContext)).toThrow("provider must be a non-empty string");
    expect(() => parseVirtualModel({ provider: "r", id: "x" }, noContext)).toThrow("r/x needs a route(request, ctx) function");
    expect(() => parseVirtualModel({ provider: "r", id: "x", route: () => ({}), thinkingLevels: ["loud"] }, noContext)).toThrow(
      "thinkingLevels must list levels of",
    );
    expect(() => parseVirtualModel({ provider: "r", id: "x", route: () => ({}), input: ["video"] }, noContext)).toThrow("input must list");
    expect(() => parseVirtualModel({ provider: "r", id: "x", route: () => ({}), contextWindow: -1 }, noContext)).toThrow(
      "contextWindow must be a non-negative number",
    );
  });

  it("calls the router with the request and the context it makes, as the object's method", () => {
    const seen: unknown[] = [];
    const registration = {
      provider: "r",
      id: "x",
      tag: "mine",
      route(this: { tag: string }, request: unknown, ctx: unknown) {
        seen.push(this.tag, request, ctx);
        return {};
      },
    };
    const definition = parseVirtualModel(registration, () => "ctx");
    expect(definition.name).toBe("x");
    definition.route({ reason: "user" } as RouteRequest);
    expect(seen).toEqual(["mine", { reason: "user" }, "ctx"]);
  });
});

describe("virtualCatalogEntry", () => {
  it("offers the given levels only, text and images, and unknown limits by default", () => {
    const model = virtualCatalogEntry(parseVirtualModel({ provider: "r", id: "x", name: "X", thinkingLevels: ["low", "max"], route: () => ({}) }, noContext));
    expect(model).toMatchObject({
      api: VIRTUAL_MODEL_API,
      provider: "r",
      id: "x",
      name: "X",
      reasoning: true,
      input: ["text", "image"],
      contextWindow: 0,
      maxTokens: 0,
    });
    expect(model.thinkingLevelMap).toEqual({ off: null, minimal: null, low: "low", medium: null, high: null, xhigh: null, max: "max" });
    expect(virtualCatalogEntry(parseVirtualModel({ provider: "r", id: "y", route: () => ({}) }, noContext)).reasoning).toBe(false);
  });
});

describe("routeRequest", () => {
  const virtual = virtualCatalogEntry({ provider: "r", id: "v", name: "v", route: () => ({}) });
  const route = (answer: unknown, request: Partial<Parameters<typeof routeRequest>[3]> = {}) =>
    routeRequest({ provider: "r", id: "v", name: "v", route: () => answer }, virtual, catalog, {
      reason: "user",
      thinkingLevel: "high",
      messages: [],
      ...request,
    });

  it("gives the physical model, its clamped level and new state", async () => {
    await expect(route({ model: physical("p", "a"), thinkingLevel: "low", state: { n: 1 } })).resolves.toEqual({
      model: MODELS[0],
      thinkingLevel: "low",
      state: { n: 1 },
    });
    await expect(route({ model: physical("p", "plain"), thinkingLevel: "high" })).resolves.toEqual({ model: MODELS[1], thinkingLevel: "off" });
  });

  it("refuses, in pi's words, a model that is not registered, virtual, unknown or without credentials", async () => {
    await expect(routeRequest(undefined, virtual, catalog, { reason: "user", thinkingLevel: "off", messages: [] })).rejects.toThrow(
      "Virtual model r/v is not registered.",
    );
    await expect(route({ model: virtual, thinkingLevel: "off" })).rejects.toThrow("Virtual model r/v routed to r/v, which is not a physical model.");
    await expect(route({ model: physical("p", "gone"), thinkingLevel: "off" })).rejects.toThrow("routed to p/gone, which is not a physical model.");
    await expect(route({ model: physical("nokey", "b"), thinkingLevel: "off" })).rejects.toThrow("routed to nokey/b, which has no credentials.");
    await expect(route(undefined)).rejects.toThrow("route() must return { model, thinkingLevel }");
    await expect(route({ thinkingLevel: "off" })).rejects.toThrow("route() returned no model");
  });

  it("tells the router the latest successful response and the failed one, with their levels", async () => {
    let seen: RouteRequest | undefined;
    const definition = {
      provider: "r",
      id: "v",
      name: "v",
      route: (request: RouteRequest) => {
        seen = request;
        return { model: physical("p", "a"), thinkingLevel: "low" };
      },
    };
    const good = reply("p", "a", { thinkingLevel: "medium" } as Partial<AssistantMessage>);
    const failed = reply("p", "a", { stopReason: "error", errorMessage: "overloaded" });
    await routeRequest(definition, virtual, catalog, { reason: "retry", thinkingLevel: "high", messages: [good, failed], failed });
    expect(seen?.previous).toEqual({ model: MODELS[0], thinkingLevel: "medium" });
    expect(seen?.failed).toEqual({ model: MODELS[0], message: failed });
    // A failed routing's response names the virtual model: no physical request to report.
    await routeRequest(definition, virtual, catalog, {
      reason: "retry",
      thinkingLevel: "high",
      messages: [],
      failed: reply("r", "v", { stopReason: "error" }),
    });
    expect(seen?.failed).toBeUndefined();
    expect(seen?.previous).toBeUndefined();
  });
});

describe("router state and the selection on a branch", () => {
  const entry = (type: string, fields: object): SessionEntry => ({ type, id: type, parentId: null, timestamp: "t", ...fields }) as SessionEntry;

  it("finds the latest state for the model, and the latest model_change", () => {
    const branch = [
      entry("model_change", { provider: "r", modelId: "v" }),
      entry("custom", { customType: "pi.virtual-model-state", data: { provider: "r", modelId: "v", state: 1 } }),
      entry("custom", { customType: "pi.virtual-model-state", data: { provider: "r", modelId: "w", state: 2 } }),
      entry("custom", { customType: "other", data: { provider: "r", modelId: "v", state: 3 } }),
    ];
    expect(routerState(branch, "r", "v")).toBe(1);
    expect(routerState(branch, "r", "w")).toBe(2);
    expect(routerState(branch, "r", "x")).toBeUndefined();
    expect(lastModelChange(branch)).toEqual({ provider: "r", modelId: "v" });
    expect(lastModelChange([])).toBeUndefined();
  });
});

describe("a route prepared before its loop request", () => {
  const virtual = virtualCatalogEntry({ provider: "r", id: "v", name: "v", route: () => ({}) });
  const routing = (): { loop: LoopRouting; routed: () => number } => {
    let count = 0;
    const loop = new LoopRouting({
      models: {
        route: async () => {
          count++;
          return { model: physical("p", `a${count}`), thinkingLevel: "low" };
        },
      },
      session: { branch: () => [], append: () => assert.fail("nothing is saved without router state") },
      thinkingLevel: "low",
      emit: () => undefined,
    });
    return { loop, routed: () => count };
  };

  it("is taken by the request it was made for, once", async () => {
    const { loop } = routing();
    const signal = new AbortController().signal;
    const prepared = loop.prepare(virtual, [], signal);
    expect(loop.takePrepared(virtual, signal)).toBe(prepared);
    expect(loop.takePrepared(virtual, signal)).toBeUndefined();
  });

  it("is not taken by a later request when its own was aborted before it was sent", async () => {
    const { loop } = routing();
    const first = new AbortController();
    await loop.prepare(virtual, [], first.signal);
    first.abort();
    // The next run's request: another signal, and the aborted run's route must not answer for it.
    expect(loop.takePrepared(virtual, new AbortController().signal)).toBeUndefined();
    expect(loop.takePrepared(virtual, first.signal)).toBeUndefined();
  });

  it("is not taken for another model, nor after it was dropped (an abort, a new run)", async () => {
    const { loop } = routing();
    const signal = new AbortController().signal;
    loop.prepare(virtual, [], signal);
    expect(loop.takePrepared(physical("p", "a"), signal)).toBeUndefined();
    loop.prepare(virtual, [], signal);
    loop.dropPrepared();
    expect(loop.takePrepared(virtual, signal)).toBeUndefined();
  });
});
