/**
 * Virtual models (the newest pi's `pi.registerVirtualModel`) through the spawned CLI: listed and
 * selected like any model, each request routed to a physical model with the reason pi gives
 * (user, continuation, retry, direct), router state kept on the session branch, a failed routing
 * answered with an error response, and a resumed session keeping the virtual selection.
 * The router is fixtures/virtual-router.ts; it tells the client each request it routes.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentText, startAcp } from "./helpers/acp-client.js";
import { checkedAgents } from "./helpers/checked-agents.js";
import { type AgentProcess, ROOT, spawnAgent, PARLEY_BIN } from "./helpers/spawn.js";

type Rec = Record<string, unknown>;

const ROUTER = join(ROOT, "packages/agent/test/fixtures/virtual-router.ts");
const agents = checkedAgents();

interface World {
  home: string;
  cwd: string;
  sessions: string;
}

function world(): World {
  const base = mkdtempSync(join(tmpdir(), "parley-virtual-"));
  const home = join(base, "home");
  const cwd = join(base, "proj");
  const sessions = join(base, "sessions");
  for (const dir of [join(home, ".pi", "agent"), cwd, sessions]) mkdirSync(dir, { recursive: true });
  // Retries at once: the retry test waits for events, not for time. A compaction budget of one
  // token, so that a one-prompt session has something to compact (pi 1.6 refuses what fits it).
  writeFileSync(join(home, ".pi", "agent", "settings.json"), JSON.stringify({ retry: { baseDelayMs: 1 }, compaction: { keepRecentTokens: 1 } }));
  return { home, cwd, sessions };
}

function start(w: World, args: string[] = [], env: NodeJS.ProcessEnv = {}): AgentProcess {
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--session-dir", w.sessions, "-e", ROUTER, ...args], {
    cwd: w.cwd,
    env: { HOME: w.home, PI_CODING_AGENT_DIR: join(w.home, ".pi", "agent"), ...env },
  });
  agents.push(agent);
  return agent;
}

/** What the router told the client of each request it routed, from record `from` on. */
function routes(agent: AgentProcess, from = 0): Rec[] {
  return agent.records
    .slice(from)
    .filter((r) => r.type === "extension_ui_request" && r["method"] === "notify" && String(r["message"]).startsWith("route "))
    .map((r) => JSON.parse(String(r["message"]).slice("route ".length)) as Rec);
}

async function data(agent: AgentProcess, command: object): Promise<Rec> {
  const response = await agent.request(command);
  expect(response["success"], JSON.stringify(response)).toBe(true);
  return (response["data"] ?? {}) as Rec;
}

async function prompt(agent: AgentProcess, message: string): Promise<void> {
  const from = agent.records.length;
  await data(agent, { type: "prompt", message });
  await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
}

async function assistants(agent: AgentProcess): Promise<Rec[]> {
  const { messages } = (await data(agent, { type: "get_messages" })) as { messages: Rec[] };
  return messages.filter((m) => m["role"] === "assistant");
}

const text = (message: Rec | undefined): string =>
  ((message?.["content"] ?? []) as Rec[])
    .filter((c) => c["type"] === "text")
    .map((c) => c["text"])
    .join("");

describe("virtual models (spawned CLI)", () => {
  it("are listed and selected like models, and route each request to a physical model", async () => {
    const agent = start(world());
    const { models } = (await data(agent, { type: "get_available_models" })) as { models: Rec[] };
    const auto = models.find((m) => m["provider"] === "router" && m["id"] === "auto");
    expect(auto).toMatchObject({ api: "pi-virtual", name: "Auto", reasoning: true, contextWindow: 123_456 });
    // The registration that clashes with a physical model is refused, and said; the physical one stays.
    expect(agent.records.find((r) => r.type === "extension_error")).toMatchObject({
      event: "register_virtual_model",
      error: "Virtual model phys/small conflicts with a physical model.",
    });
    expect(models.find((m) => m["provider"] === "phys" && m["id"] === "small")).toMatchObject({ api: "phys-faux" });

    await data(agent, { type: "set_model", provider: "router", modelId: "auto" });
    expect(await data(agent, { type: "get_available_thinking_levels" })).toEqual({ levels: ["low", "high"] });
    await data(agent, { type: "set_thinking_level", level: "high" });

    await prompt(agent, "hello");
    const [first] = await assistants(agent);
    // The response names the physical model, with the level the router chose and that provider's key.
    expect(first).toMatchObject({ provider: "phys", model: "large", thinkingLevel: "medium", stopReason: "stop" });
    expect(text(first)).toBe("large level=medium key=phys-key");
    expect(routes(agent)).toEqual([{ reason: "user", level: "high", state: null }]);
    // The selection stays virtual, and the limits shown are the answering model's.
    const state = await data(agent, { type: "get_state" });
    expect(state["model"]).toMatchObject({ provider: "router", id: "auto" });
    expect(state["thinkingLevel"]).toBe("high");
    const stats = await data(agent, { type: "get_session_stats" });
    expect((stats["contextUsage"] as Rec | undefined)?.["contextWindow"]).toBe(200_000);
  });

  it("routes a tool follow-up as a continuation and keeps router state on the branch", async () => {
    const agent = start(world());
    await data(agent, { type: "set_model", provider: "router", modelId: "auto" });
    await data(agent, { type: "set_thinking_level", level: "low" });
    await prompt(agent, "use the ping tool");
    expect(routes(agent)).toEqual([
      { reason: "user", level: "low", state: null },
      { reason: "continuation", level: "low", previous: "small:medium", state: { count: 1 } },
    ]);
    const replies = await assistants(agent);
    expect(replies.map((m) => m["model"])).toEqual(["small", "small"]);
    expect(text(replies[1])).toBe("small level=medium key=phys-key after pong");
    // Each new state is an entry of its own, told to the client.
    const saved = agent.records.filter((r) => r.type === "entry_appended").map((r) => r["entry"] as Rec);
    expect(saved.map((e) => [e["customType"], e["data"]])).toEqual([
      ["pi.virtual-model-state", { provider: "router", modelId: "auto", state: { count: 1 } }],
      ["pi.virtual-model-state", { provider: "router", modelId: "auto", state: { count: 2 } }],
    ]);
    const from = agent.records.length;
    await prompt(agent, "again");
    expect(routes(agent, from)).toEqual([{ reason: "user", level: "low", previous: "small:medium", state: { count: 2 } }]);
  });

  it("routes an automatic retry with the failed request, and a summary as a direct request", async () => {
    const agent = start(world());
    await data(agent, { type: "set_model", provider: "router", modelId: "auto" });
    await data(agent, { type: "set_thinking_level", level: "high" });
    await prompt(agent, "fail once");
    await agent.waitFor((r) => r.type === "auto_retry_end");
    expect(routes(agent)).toEqual([
      { reason: "user", level: "high", state: null },
      { reason: "retry", level: "high", failed: "large:large: overloaded_error, please retry", state: { count: 1 } },
    ]);
    expect(text((await assistants(agent)).at(-1))).toBe("large level=medium key=phys-key");

    const from = agent.records.length;
    const compacted = await data(agent, { type: "compact" });
    expect(String(compacted["summary"])).toContain("Summary by large level=medium key=phys-key");
    // A request outside the loop has no state, and keeps none.
    expect(routes(agent, from)).toEqual([{ reason: "direct", level: "high", state: null }]);
    expect(agent.records.slice(from).filter((r) => r.type === "entry_appended")).toEqual([]);
  });

  it("a retry made on a physical model is not reported to the router of a later prompt", async () => {
    const agent = start(world());
    await data(agent, { type: "set_model", provider: "phys", modelId: "large" });
    await prompt(agent, "fail once");
    await agent.waitFor((r) => r.type === "auto_retry_end");
    await data(agent, { type: "set_model", provider: "router", modelId: "auto" });
    const from = agent.records.length;
    await prompt(agent, "hello");
    // pi-agent-core 1.6 records the level every reply was asked at, a physical model's too.
    expect(routes(agent, from)).toMatchObject([{ reason: "user", previous: "large:medium" }]);
  });

  it("ends the request with an error response when the router names no physical model", async () => {
    const agent = start(world());
    await data(agent, { type: "set_model", provider: "router", modelId: "auto" });
    await prompt(agent, "route to nowhere");
    const [reply] = await assistants(agent);
    expect(reply).toMatchObject({
      provider: "router",
      model: "auto",
      stopReason: "error",
      errorMessage: "Virtual model router/auto routed to router/auto, which is not a physical model.",
    });
    // The agent goes on: the next prompt is routed again (at "high": "medium" is not offered, and clamps up).
    await prompt(agent, "hello");
    expect(text((await assistants(agent)).at(-1))).toBe("large level=medium key=phys-key");
  });

  it("abort ends a run whose router never answers (and ignores its signal)", async () => {
    const agent = start(world());
    await data(agent, { type: "set_model", provider: "router", modelId: "auto" });
    const from = agent.records.length;
    await data(agent, { type: "prompt", message: "hang in routing" });
    await agent.until(() => routes(agent, from).length === 1);
    await data(agent, { type: "abort" });
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    expect((await assistants(agent)).at(-1)).toMatchObject({ provider: "router", model: "auto", stopReason: "aborted" });
    // Nothing of the hung routing is left: the next prompt is routed and answered.
    await prompt(agent, "hello");
    expect(text((await assistants(agent)).at(-1))).toBe("large level=medium key=phys-key");
  });

  it("a resumed session keeps its virtual selection, or falls back to the model that answered when the router is gone", async () => {
    const w = world();
    const first = start(w);
    await data(first, { type: "set_model", provider: "router", modelId: "auto" });
    await data(first, { type: "set_thinking_level", level: "high" });
    await prompt(first, "hello");
    const file = String((await data(first, { type: "get_state" }))["sessionFile"]);
    first.closeInput();
    await first.exited;
    const lines = readFileSync(file, "utf8").trim().split("\n");
    // The selection is recorded; the responses after it name the physical model.
    const entries = lines.map((l) => JSON.parse(l) as Rec);
    expect(entries.filter((e) => e["type"] === "model_change").at(-1)).toMatchObject({ provider: "router", modelId: "auto" });
    expect(entries.filter((e) => e["type"] === "message" && (e["message"] as Rec)["role"] === "assistant").map((e) => (e["message"] as Rec)["model"])).toEqual([
      "large",
    ]);

    const again = start(w, ["--session", file]);
    expect((await data(again, { type: "get_state" }))["model"]).toMatchObject({ provider: "router", id: "auto" });
    await prompt(again, "still there?");
    // The router's state on the branch carried over.
    expect(routes(again)).toEqual([{ reason: "user", level: "high", previous: "large:medium", state: { count: 1 } }]);
    again.closeInput();
    await again.exited;

    const without = start(w, ["--session", file], { ROUTER_OFF: "1" });
    expect((await data(without, { type: "get_state" }))["model"]).toMatchObject({ provider: "phys", id: "large" });
  });

  it("can be chosen on the command line, with a level, cycled to, and be settings' default", async () => {
    const agent = start(world(), ["--model", "router/auto:low"]);
    const state = await data(agent, { type: "get_state" });
    expect(state["model"]).toMatchObject({ provider: "router", id: "auto" });
    expect(state["thinkingLevel"]).toBe("low");
    await prompt(agent, "hello");
    expect(text((await assistants(agent)).at(-1))).toBe("small level=medium key=phys-key");

    const scoped = start(world(), ["--models", "phys/large,router/auto"]);
    expect((await data(scoped, { type: "get_state" }))["model"]).toMatchObject({ provider: "phys", id: "large" });
    expect((await data(scoped, { type: "cycle_model" }))["model"]).toMatchObject({ provider: "router", id: "auto" });

    // settings.json's default model may be one too.
    const w = world();
    writeFileSync(
      join(w.home, ".pi", "agent", "settings.json"),
      JSON.stringify({ defaultProvider: "router", defaultModel: "auto", defaultThinkingLevel: "high" }),
    );
    const fromSettings = start(w);
    const settled = await data(fromSettings, { type: "get_state" });
    expect([settled["model"], settled["thinkingLevel"]]).toMatchObject([{ provider: "router", id: "auto" }, "high"]);
  });

  it("ctx.modelRegistry resolves request credentials, and routes a request an extension makes through it", async () => {
    const agent = start(world());
    await data(agent, { type: "prompt", message: "/ask what now?" });
    const note = await agent.waitFor((r) => r["method"] === "notify" && String(r["message"]).startsWith("ask "));
    expect(JSON.parse(String(note["message"]).slice("ask ".length))).toEqual({
      auth: { ok: true, apiKey: "phys-key" },
      providerAuth: { auth: { apiKey: "phys-key" } },
      model: "phys/large",
      text: "large level=medium key=phys-key",
    });
    expect(routes(agent)).toEqual([{ reason: "direct", level: "high", state: null }]);
  });

  it("in ACP: offered as a model option with its own levels, and routed", async () => {
    const w = world();
    const h = await startAcp(["--session-dir", w.sessions, "-e", ROUTER], { cwd: w.cwd, home: w.home });
    try {
      const { sessionId, configOptions } = await h.agent.request("session/new", { cwd: w.cwd, mcpServers: [] });
      const model = configOptions?.find((o) => o.id === "model");
      expect(model?.type === "select" ? model.options.map((o) => ("value" in o ? o.value : "")) : []).toContain("router/auto");
      const set = await h.agent.request("session/set_config_option", { sessionId, configId: "model", value: "router/auto" });
      const thinking = set.configOptions.find((o) => o.id === "thinking");
      expect(thinking?.type === "select" ? thinking.options.map((o) => ("value" in o ? o.value : "")) : []).toEqual(["low", "high"]);
      await h.agent.request("session/set_config_option", { sessionId, configId: "thinking", value: "low" });
      const done = await h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] });
      expect(done.stopReason).toBe("end_turn");
      expect(agentText(h, sessionId)).toContain("small level=medium key=phys-key");
    } finally {
      await h.close();
    }
  });
});
