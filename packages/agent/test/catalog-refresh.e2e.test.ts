/**
 * The live model catalogue, side by side with pi 1.6.0 (the `pi-newest` devDependency) through
 * the spawned CLIs in RPC mode: both reach a stand-in pi.dev on 127.0.0.1 through an HTTPS proxy
 * (helpers/catalog-server.ts), each in its own temp HOME / agent dir with only an Anthropic key.
 * They must ask the same URL with the same headers, save the same models-store.json (pi's file,
 * 0600), list and select the same new model; revalidate with the saved etag; ask nothing offline
 * (pi still makes an empty file, parley does not); and stay quiet on stderr when the server fails.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CatalogServer, startCatalogServer } from "./helpers/catalog-server.js";
import { agentWorld, CLI, type AgentWorld } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE, NO_KEYS } from "./helpers/pi-home.js";
import { type AgentProcess, ROOT, spawnAgent } from "./helpers/spawn.js";

const AGENTS = { pi: join(ROOT, "node_modules/pi-newest/dist/cli.js"), parley: CLI.parley } as const;
type Agent = keyof typeof AGENTS;
/** Newer than pi-ai 1.6's built-in model data, so both overlay the catalogue. */
const LAST_MODIFIED = "Wed, 01 Jan 2031 00:00:00 GMT";
const NEW_MODEL = {
  id: "claude-test-9",
  name: "Claude Test 9",
  api: "anthropic-messages",
  provider: "anthropic",
  baseUrl: "https://api.anthropic.com",
  reasoning: true,
  input: ["text", "image"],
  cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
  contextWindow: 200000,
  maxTokens: 64000,
};
const PATH = "/api/models/providers/anthropic?types=chat%2Cimage%2Cclassifier";

const running = closedAfterEach();
const worlds: AgentWorld[] = [];
let server: CatalogServer;
beforeAll(async () => {
  server = await startCatalogServer();
});
afterAll(async () => {
  await server.close();
  for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
});

function start(agent: Agent, extraEnv: Record<string, string> = {}, store?: object): { p: AgentProcess; world: AgentWorld } {
  const world = agentWorld(`parley-catalog-${agent}-`);
  worlds.push(world);
  if (store) writeFileSync(join(world.agentDir, "models-store.json"), JSON.stringify(store, null, 2));
  const p = spawnAgent(process.execPath, [AGENTS[agent], "--mode", "rpc", "--no-session"], {
    cwd: world.cwd,
    env: { ...NO_KEYS, ...world.env, ...server.env, ANTHROPIC_API_KEY: "test-key", NO_COLOR: "1", ...extraEnv },
    checkSchema: agent === "parley",
  });
  running.push(p);
  return { p, world };
}

type Store = Record<string, { models: { id: string }[]; checkedAt?: number; lastModified?: number; etag?: string }>;
function readStore(world: AgentWorld): Store | undefined {
  try {
    return JSON.parse(readFileSync(join(world.agentDir, "models-store.json"), "utf8")) as Store;
  } catch {
    return undefined;
  }
}

/** Waits (by polling the file, with the test's ceiling) until the store satisfies `ok`. */
async function storeWhere(world: AgentWorld, ok: (store: Store) => boolean): Promise<Store> {
  const until = Date.now() + MINUTE;
  for (;;) {
    const store = readStore(world);
    if (store && ok(store) && !existsSync(join(world.agentDir, "models-store.json.lock"))) return store;
    if (Date.now() > until) throw new Error(`models-store.json never matched: ${JSON.stringify(store)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function modelIds(p: AgentProcess): Promise<string[]> {
  const r = await p.request({ type: "get_available_models" }, MINUTE);
  expect(r["success"], JSON.stringify(r)).toBe(true);
  return ((r["data"] as { models: { id: string; provider: string }[] }).models ?? []).map((m) => `${m.provider}/${m.id}`);
}

const stripChecked = (store: Store): Store => Object.fromEntries(Object.entries(store).map(([k, { checkedAt: _c, ...rest }]) => [k, rest])) as Store;

describe("live model catalogue refresh, as pi 1.6 does it", () => {
  it("asks pi.dev for the configured provider, saves models-store.json and lists the new model, as pi does", async () => {
    server.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "last-modified": LAST_MODIFIED, etag: '"v1"' });
      res.end(JSON.stringify({ models: [NEW_MODEL] }));
    };
    const seen: Record<string, unknown> = {};
    for (const agent of ["pi", "parley"] as const) {
      server.requests.length = 0;
      const { p, world } = start(agent);
      const store = await storeWhere(world, (s) => (s["anthropic"]?.models.length ?? 0) > 0);
      expect(await modelIds(p)).toContain("anthropic/claude-test-9");
      const set = await p.request({ type: "set_model", provider: "anthropic", modelId: "claude-test-9" }, MINUTE);
      expect(set["success"], JSON.stringify(set)).toBe(true);
      expect(statSync(join(world.agentDir, "models-store.json")).mode & 0o777).toBe(0o600);
      seen[agent] = {
        requests: server.requests.map((r) => ({ path: r.path, accept: r.headers.accept, ua: r.headers["user-agent"], inm: r.headers["if-none-match"] })),
        store: stripChecked(store),
        checkedAt: typeof store["anthropic"]?.checkedAt,
        stderr: p.stderr(),
      };
    }
    expect(seen["parley"]).toMatchObject({ requests: [{ path: PATH, accept: "application/json" }] });
    const { stderr: piErr, ...pi } = seen["pi"] as { stderr: string };
    const { stderr: parleyErr, ...parley } = seen["parley"] as { stderr: string };
    expect(parley).toEqual(pi);
    expect(parleyErr).not.toMatch(/catalog/i);
    expect(piErr).not.toMatch(/catalog/i);
  });

  it("revalidates a saved catalogue older than 4 hours with its etag; a 304 only moves checkedAt", async () => {
    server.handler = (_req, res) => {
      res.writeHead(304, { etag: '"v1"' }).end();
    };
    const old = Date.now() - 5 * 60 * 60 * 1000;
    const saved = { anthropic: { models: [NEW_MODEL], lastModified: Date.parse(LAST_MODIFIED), etag: '"v1"', checkedAt: old } };
    const seen: Record<string, unknown> = {};
    for (const agent of ["pi", "parley"] as const) {
      server.requests.length = 0;
      const { p, world } = start(agent, {}, saved);
      // The saved model is there from the start (read at start-up, before any request).
      expect(await modelIds(p)).toContain("anthropic/claude-test-9");
      const store = await storeWhere(world, (s) => (s["anthropic"]?.checkedAt ?? old) > old);
      seen[agent] = { requests: server.requests.map((r) => ({ path: r.path, inm: r.headers["if-none-match"] })), store: stripChecked(store) };
    }
    expect(seen["parley"]).toEqual(seen["pi"]);
    expect(seen["parley"]).toMatchObject({ requests: [{ path: PATH, inm: '"v1"' }] });
  });

  it("asks nothing with PI_OFFLINE; pi makes an empty models-store.json, parley leaves the folder as it was", async () => {
    server.handler = (_req, res) => {
      res.writeHead(500).end();
    };
    server.requests.length = 0;
    const files: Record<string, string | undefined> = {};
    for (const agent of ["pi", "parley"] as const) {
      const { p, world } = start(agent, { PI_OFFLINE: "1" });
      expect(await modelIds(p)).not.toContain("anthropic/claude-test-9");
      // The background work (the saved catalogues read, nothing asked) is done once the agent has gone.
      p.closeInput();
      await p.exited;
      const file = join(world.agentDir, "models-store.json");
      files[agent] = existsSync(file) ? readFileSync(file, "utf8") : undefined;
    }
    expect(files).toEqual({ pi: "{}", parley: undefined });
    expect(server.requests).toEqual([]);
    expect(server.refused).toEqual([]);
  });

  it("a failing server: three attempts, the check time saved, nothing said on stderr, as pi", async () => {
    server.handler = (_req, res) => {
      res.writeHead(503).end();
    };
    const seen: Record<string, unknown> = {};
    for (const agent of ["pi", "parley"] as const) {
      server.requests.length = 0;
      const { p, world } = start(agent);
      const store = await storeWhere(world, (s) => s["anthropic"]?.checkedAt !== undefined);
      const ids = await modelIds(p);
      expect(ids).not.toContain("anthropic/claude-test-9");
      expect(ids.length).toBeGreaterThan(0);
      seen[agent] = { requests: server.requests.map((r) => r.path), store: stripChecked(store), stderr: p.stderr() };
    }
    expect(seen["parley"]).toEqual(seen["pi"]);
    expect((seen["pi"] as { requests: string[] }).requests).toEqual([PATH, PATH, PATH]);
  });

  it("`update --models` asks now even when the saved catalogue is fresh, and says what pi says, on success and on failure", async () => {
    const fresh = { anthropic: { models: [], lastModified: Date.parse(LAST_MODIFIED), etag: '"v0"', checkedAt: Date.now() } };
    const run = async (agent: Agent, status: number): Promise<Record<string, unknown>> => {
      server.handler = (_req, res) => {
        if (status !== 200) return void res.writeHead(status).end();
        res.writeHead(200, { "content-type": "application/json", "last-modified": LAST_MODIFIED, etag: '"v2"' });
        res.end(JSON.stringify([NEW_MODEL]));
      };
      server.requests.length = 0;
      const world = agentWorld(`parley-catalog-update-${agent}-`);
      worlds.push(world);
      writeFileSync(join(world.agentDir, "models-store.json"), JSON.stringify(fresh));
      const env = { ...process.env, ...NO_KEYS, ...world.env, ...server.env, ANTHROPIC_API_KEY: "test-key", NO_COLOR: "1", FORCE_COLOR: "0" };
      const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [AGENTS[agent], "update", "--models"], { cwd: world.cwd, env, timeout: MINUTE }, (error, stdout, stderr) => {
          resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
        });
      });
      const store = readStore(world);
      return { ...result, requests: server.requests.map((r) => r.path), store: store ? stripChecked(store) : undefined };
    };
    for (const status of [200, 503]) {
      const pi = await run("pi", status);
      const parley = await run("parley", status);
      expect(parley).toEqual(pi);
    }
    const ok200 = await run("parley", 200);
    expect(ok200).toMatchObject({ code: 0, stdout: "Model catalogs refreshed\n", requests: [PATH] });
  });
});
