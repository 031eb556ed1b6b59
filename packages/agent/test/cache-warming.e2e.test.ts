/**
 * Prompt-cache warming through the spawned CLI, side by side with pi 1.6, against a local server
 * speaking OpenAI's chat completions: a models.json model whose prompt cache lives 20 s (so the
 * refresh is due 10 s after the request, well after its reply) and whose cache misses are costly. After one prompt, each
 * program hands extensions the same cache_warming_decision, sends the same request again capped at
 * one output token, and records its usage as the same `usage` entry (entry_appended on the wire,
 * and in the session file). With `cacheWarming: "off"`, or an extension's "stop", no refresh is sent.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PARLEY_BIN, ROOT, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/agent/warming-decisions.js");
const NEWEST_PI = join(ROOT, "node_modules/pi-newest/dist/cli.js");

/** Each request's body, by the agent that sent it (the key names it). */
const requests: { key: string | undefined; body: Record<string, unknown> }[] = [];
const server = createServer((req, res) => {
  let text = "";
  req.setEncoding("utf8").on("data", (d: string) => {
    text += d;
  });
  req.on("end", () => {
    requests.push({ key: req.headers.authorization, body: JSON.parse(text) as Record<string, unknown> });
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (payload: object) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "warm-1", ...payload })}\n\n`;
    res.end(
      chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "warm reply" }, finish_reason: null }] }) +
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
        chunk({ choices: [], usage: { prompt_tokens: 1000, completion_tokens: 2, total_tokens: 1002 } }) +
        "data: [DONE]\n\n",
    );
  });
});
let base = "";
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

type Bin = "parley" | "pi";

function agentDir(key: string, settings: object): { home: string; dir: string } {
  const home = mkdtempSync(join(tmpdir(), "parley-warming-"));
  const dir = join(home, ".pi", "agent");
  mkdirSync(dir, { recursive: true });
  const model = {
    id: "warm-1",
    cost: { input: 1000, output: 1, cacheRead: 0, cacheWrite: 0 },
    promptCache: { short: 20 },
    contextWindow: 100_000,
    maxTokens: 1000,
  };
  writeFileSync(join(dir, "models.json"), JSON.stringify({ providers: { warm: { baseUrl: base, api: "openai-completions", apiKey: key, models: [model] } } }));
  writeFileSync(join(dir, "settings.json"), JSON.stringify(settings));
  return { home, dir };
}

function start(bin: Bin, key: string, settings: object, env: Record<string, string> = {}): AgentProcess {
  const { home, dir } = agentDir(key, settings);
  const args = ["--mode", "rpc", "-e", FIXTURE, "--provider", "warm", "--model", "warm-1", "--no-tools", "--system-prompt", "Be brief."];
  const options = { cwd: home, env: { HOME: home, PI_CODING_AGENT_DIR: dir, PI_OFFLINE: "1", ...env } };
  return bin === "parley" ? spawnAgent(PARLEY_BIN, args, options) : spawnAgent(process.execPath, [NEWEST_PI, ...args], { ...options, checkSchema: false });
}

async function prompt(agent: AgentProcess): Promise<void> {
  const from = agent.records.length;
  const response = await agent.request({ type: "prompt", message: "hello" });
  expect(response["success"], JSON.stringify(response)).toBe(true);
  await agent.waitFor((r: Rec) => r.type === "agent_settled", undefined, from);
}

const decisionOf = (r: Rec): unknown => (r.type === "extension_ui_request" && r["method"] === "notify" ? JSON.parse(String(r["message"])) : undefined);
const usageEntryOf = (r: Rec): Record<string, unknown> | undefined => {
  const entry = r.type === "entry_appended" ? (r["entry"] as Record<string, unknown>) : undefined;
  return entry?.["type"] === "usage" ? entry : undefined;
};

interface Warmed {
  decision: unknown;
  entry: Record<string, unknown>;
  prompt: Record<string, unknown>;
  refresh: Record<string, unknown>;
  fileEntry: unknown;
}

async function warmOnce(bin: Bin): Promise<Warmed> {
  const key = `Bearer sk-${bin}-warm`;
  const agent = start(bin, key.slice("Bearer ".length), {});
  try {
    await prompt(agent);
    const note = await agent.waitFor((r) => decisionOf(r) !== undefined);
    const appended = await agent.waitFor((r) => usageEntryOf(r) !== undefined);
    const sent = requests.filter((r) => r.key === key);
    const state = await agent.request({ type: "get_state" });
    const file = String((state["data"] as Record<string, unknown>)["sessionFile"]);
    const entry = usageEntryOf(appended) ?? {};
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return {
      decision: decisionOf(note),
      entry,
      prompt: sent[0]?.body ?? {},
      refresh: sent[1]?.body ?? {},
      fileEntry: lines.find((l) => l["id"] === entry["id"]),
    };
  } finally {
    agent.kill();
  }
}

describe("prompt-cache warming as pi 1.6", () => {
  const got: Partial<Record<Bin, Warmed>> = {};
  beforeAll(async () => {
    got.pi = await warmOnce("pi");
    got.parley = await warmOnce("parley");
  }, 300_000);

  it("parley refreshes the last request with a one-token cap and records its usage", () => {
    const warmed = got.parley;
    expect(warmed?.decision).toEqual({ type: "cache_warming_decision", warmCost: 0.000001, missCost: 1, continuationProbability: 0.15, action: "warm" });
    const { max_completion_tokens: _p, max_tokens: _q, ...promptRest } = warmed?.prompt ?? {};
    const { max_completion_tokens: capped, max_tokens: cappedOld, ...refreshRest } = warmed?.refresh ?? {};
    expect(capped ?? cappedOld).toBe(1);
    expect(refreshRest).toEqual(promptRest);
    expect(warmed?.entry).toMatchObject({ type: "usage", kind: "cache_warm", provider: "warm", model: "warm-1", usage: { input: 1000, output: 2 } });
    expect(warmed?.fileEntry).toEqual(warmed?.entry);
  });

  it("the decision, the refresh's shape and the usage entry equal pi 1.6's", () => {
    expect(got.parley?.decision).toEqual(got.pi?.decision);
    const shape = (w: Warmed | undefined) => {
      const { messages, ...rest } = w?.refresh ?? {};
      return { ...rest, roles: (messages as { role: string }[] | undefined)?.map((m) => m.role) };
    };
    expect(shape(got.parley)).toEqual(shape(got.pi));
    const comparable = (e: Record<string, unknown> | undefined) => {
      const { id: _i, parentId: _p, timestamp: _t, ...rest } = e ?? {};
      return rest;
    };
    expect(comparable(got.parley?.entry)).toEqual(comparable(got.pi?.entry));
  });

  for (const bin of ["pi", "parley"] as const) {
    it(`${bin}: an extension's "stop" sends no refresh; the next prompt is the next request`, async () => {
      const key = `Bearer sk-${bin}-stop`;
      const agent = start(bin, key.slice("Bearer ".length), {}, { WARMING_OVERRIDE: "stop" });
      try {
        await prompt(agent);
        await agent.waitFor((r) => decisionOf(r) !== undefined);
        await prompt(agent);
        // Two prompts, no refresh between them (the second prompt's warming may have begun since).
        const bodies = requests.filter((r) => r.key === key).map((r) => (r.body["messages"] as unknown[]).length);
        expect(bodies.slice(0, 2)).toEqual([bodies[0], (bodies[0] ?? 0) + 2]);
        expect(agent.records.some((r) => usageEntryOf(r) !== undefined)).toBe(false);
      } finally {
        agent.kill();
      }
    });
  }

  it('parley: with cacheWarming "off" no decision is asked and no refresh sent', async () => {
    const off = start("parley", "sk-parley-off", { cacheWarming: "off" });
    const on = start("parley", "sk-parley-on", {});
    try {
      // The agent with warming off asks first; the one with it on asks after, with the same model,
      // and refreshes its cache entry: by then the first one's refresh would have been due earlier.
      await prompt(off);
      await prompt(on);
      await on.waitFor((r) => usageEntryOf(r) !== undefined);
      expect(requests.filter((r) => r.key === "Bearer sk-parley-off")).toHaveLength(1);
      expect(off.records.some((r) => decisionOf(r) !== undefined || usageEntryOf(r) !== undefined)).toBe(false);
    } finally {
      off.kill();
      on.kill();
    }
  });
});
