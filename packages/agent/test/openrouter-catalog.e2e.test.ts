/**
 * OpenRouter's live catalogue, side by side with pi 1.6.0 through the spawned CLIs in RPC mode:
 * pi.dev's catalogue (a stand-in on 127.0.0.1 behind an HTTPS proxy, helpers/catalog-server.ts)
 * merged over the built-in models, then narrowed to the models the key may use with their limits
 * and prices (`GET <base URL>/models/user` on a local server, the base URL set in models.json),
 * saved whole in models-store.json and listed. On the next start the saved list is the catalogue,
 * offline included. A failing pi.dev saves nothing.
 */
import { rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CatalogServer, startCatalogServer } from "./helpers/catalog-server.js";
import { agentWorld, CLI, type AgentWorld } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE, NO_KEYS } from "./helpers/pi-home.js";
import { type AgentProcess, ROOT, spawnAgent } from "./helpers/spawn.js";

const AGENTS = { pi: join(ROOT, "node_modules/pi-newest/dist/cli.js"), parley: CLI.parley } as const;
type Agent = keyof typeof AGENTS;
const LAST_MODIFIED = "Wed, 01 Jan 2031 00:00:00 GMT";
const BUILT_IN = "~deepseek/deepseek-flash-latest";
const NEW_MODEL = {
  type: "chat",
  id: "vendor/brand-new",
  name: "Vendor: Brand New",
  api: "openai-completions",
  provider: "openrouter",
  baseUrl: "https://openrouter.ai/api/v1",
  reasoning: false,
  input: ["text"],
  cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100000,
  maxTokens: 8000,
};

const running = closedAfterEach();
let debugInfo = (): string => "";
const worlds: AgentWorld[] = [];
let catalog: CatalogServer;
const userRequests: { url: string | undefined; headers: IncomingHttpHeaders }[] = [];
const openrouter = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    userRequests.push({ url: req.url, headers: req.headers });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        data: [
          { id: BUILT_IN, context_length: 50000, top_provider: { max_completion_tokens: 4000 }, pricing: { prompt: "0.000001", completion: "0.000002" } },
          { id: NEW_MODEL.id, context_length: 64000 },
        ],
      }),
    );
  });
});
let base = "";
beforeAll(async () => {
  catalog = await startCatalogServer();
  await new Promise<void>((ok) => openrouter.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(openrouter.address() as AddressInfo).port}/api/v1`;
});
afterAll(async () => {
  await catalog.close();
  await new Promise<void>((ok) => openrouter.close(() => ok()));
  for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
});

function start(agent: Agent, world: AgentWorld, extraEnv: Record<string, string> = {}): AgentProcess {
  const p = spawnAgent(process.execPath, [AGENTS[agent], "--mode", "rpc", "--no-session"], {
    cwd: world.cwd,
    env: { ...NO_KEYS, ...world.env, ...catalog.env, NO_PROXY: "127.0.0.1", OPENROUTER_API_KEY: "or-key", NO_COLOR: "1", ...extraEnv },
    checkSchema: agent === "parley",
  });
  running.push(p);
  debugInfo = () =>
    `stderr: ${p.stderr()} catalog: ${JSON.stringify(catalog.requests.map((r) => r.path))} refused: ${JSON.stringify(catalog.refused)} user: ${userRequests.length}`;
  return p;
}

function newWorld(agent: Agent): AgentWorld {
  const world = agentWorld(`parley-openrouter-${agent}-`);
  worlds.push(world);
  writeFileSync(join(world.agentDir, "models.json"), JSON.stringify({ providers: { openrouter: { baseUrl: base } } }));
  return world;
}

type Store = Record<string, { models: { id: string; type?: string }[]; checkedAt?: number }>;
const storeFile = (world: AgentWorld) => join(world.agentDir, "models-store.json");
function readStore(world: AgentWorld): Store | undefined {
  try {
    return JSON.parse(readFileSync(storeFile(world), "utf8")) as Store;
  } catch {
    return undefined;
  }
}

async function storeWhere(world: AgentWorld, ok: (store: Store) => boolean): Promise<Store> {
  const until = Date.now() + MINUTE;
  for (;;) {
    const store = readStore(world);
    if (store && ok(store) && !existsSync(`${storeFile(world)}.lock`)) return store;
    if (Date.now() > until) throw new Error(`models-store.json never matched: ${JSON.stringify(store)?.slice(0, 500)} ${debugInfo()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The OpenRouter chat models offered, with what personalisation changes. */
async function offered(p: AgentProcess): Promise<unknown[]> {
  const r = await p.request({ type: "get_available_models" }, MINUTE);
  expect(r["success"], JSON.stringify(r)).toBe(true);
  return (r["data"] as { models: Record<string, unknown>[] }).models
    .filter((m) => m["provider"] === "openrouter")
    .map((m) => ({ id: m["id"], contextWindow: m["contextWindow"], maxTokens: m["maxTokens"], cost: m["cost"], baseUrl: m["baseUrl"] }));
}

describe("OpenRouter's catalogue personalised for the key, as pi 1.6 does it", () => {
  it("merges pi.dev's newer models, keeps those the key may use with its limits and prices, saves the list whole and lists it; the next start (offline) keeps it", async () => {
    catalog.handler = (req, res) => {
      if (!req.url?.startsWith("/api/models/providers/openrouter")) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/json", "last-modified": LAST_MODIFIED, etag: '"or1"' });
      res.end(JSON.stringify({ models: [NEW_MODEL] }));
    };
    const seen: Record<string, unknown> = {};
    for (const agent of ["pi", "parley"] as const) {
      catalog.requests.length = 0;
      userRequests.length = 0;
      const world = newWorld(agent);
      const p = start(agent, world);
      const store = await storeWhere(world, (s) => (s["openrouter"]?.models.length ?? 0) > 0);
      const listed = await offered(p);
      p.closeInput();
      await p.exited;
      // Offline, the saved list is still the catalogue.
      const again = start(agent, world, { PI_OFFLINE: "1" });
      const offline = await offered(again);
      const { checkedAt, ...saved } = store["openrouter"] ?? { models: [] };
      seen[agent] = {
        catalogRequests: catalog.requests.map((r) => ({ path: r.path, inm: r.headers["if-none-match"] ?? null })),
        userRequests: userRequests.map((r) => ({ url: r.url, authorization: r.headers.authorization })),
        saved,
        checkedAt: typeof checkedAt,
        listed,
        offline,
      };
    }
    expect(seen["parley"]).toEqual(seen["pi"]);
    const pi = seen["pi"] as { listed: { id: string }[]; userRequests: unknown[]; catalogRequests: { path: string }[] };
    expect(pi.listed.map((m) => m.id).sort()).toEqual([BUILT_IN, NEW_MODEL.id].sort());
    expect(pi.userRequests).toEqual([{ url: "/api/v1/models/user", authorization: "Bearer or-key" }]);
    expect(pi.catalogRequests.map((r) => r.path)).toContain("/api/models/providers/openrouter?types=chat%2Cimage%2Cclassifier");
  });

  it("a failing pi.dev leaves models-store.json without an OpenRouter entry and the built-in catalogue listed, as pi", async () => {
    catalog.handler = (_req, res) => {
      res.writeHead(503).end();
    };
    const seen: Record<string, unknown> = {};
    for (const agent of ["pi", "parley"] as const) {
      userRequests.length = 0;
      catalog.requests.length = 0;
      const world = newWorld(agent);
      const p = start(agent, world);
      // pi.dev is asked three times (a 503 is retried twice); the refresh ends with the third answer.
      const until = Date.now() + MINUTE;
      while (catalog.requests.length < 3 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
      const listed = await offered(p);
      p.closeInput();
      await p.exited;
      seen[agent] = {
        catalogRequests: catalog.requests.length,
        openrouterSaved: readStore(world)?.["openrouter"] ?? null,
        userRequests: userRequests.length,
        listedCount: listed.length,
      };
    }
    expect(seen["parley"]).toEqual(seen["pi"]);
    expect(seen["pi"]).toMatchObject({ catalogRequests: 3, openrouterSaved: null, userRequests: 0 });
  });
});
