/**
 * The models a client is offered (get_available_models, and so cycle_model), as pi offers them:
 * those with credentials (an extension provider's key may name an unset variable: pi takes the
 * name itself then). parley's offline demo model is the last resort, offered only when no other
 * model can answer.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { alike, closedAfterEach, MINUTE, NO_KEYS, ok, place, write } from "./helpers/pi-home.js";
import { PARLEY_BIN, spawnAgent } from "./helpers/spawn.js";

const running = closedAfterEach();

/** Two providers whose keys name environment variables, which may be unset. */
const PROVIDERS = `export default function (pi) {
  const models = [{ id: "m", name: "m", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 }];
  pi.registerProvider("keyless", { baseUrl: "http://localhost:1", api: "openai-completions", apiKey: "KEYLESS_API_KEY", models });
  pi.registerProvider("keyed", { baseUrl: "http://localhost:1", api: "openai-completions", apiKey: "KEYED_API_KEY", models });
  // pi's ModelRegistry answers synchronously, at start-up and in a command.
  const registry = (ctx) => {
    const r = ctx.modelRegistry;
    const echo = r.find("offline", "echo");
    return JSON.stringify({
      available: r.getAvailable().map((m) => m.provider + "/" + m.id).sort(),
      all: r.getAll().length > 100,
      builtIn: r.find("anthropic", "claude-sonnet-4-5")?.id,
      echo: echo?.id,
      auth: echo ? r.hasConfiguredAuth(echo) : "none",
    });
  };
  pi.on("session_start", (_e, ctx) => ctx.ui.notify("REGISTRY start " + registry(ctx), "info"));
  pi.registerCommand("registry", { handler: async (_a, ctx) => ctx.ui.notify("REGISTRY command " + registry(ctx), "info") });
}
`;

async function offered(bin: string, env: NodeJS.ProcessEnv, extensions: boolean): Promise<string[]> {
  const p = place("parley-available-");
  const providers = join(p.home, "providers.ts");
  write(providers, PROVIDERS);
  const args = extensions ? ["-e", OFFLINE_PROVIDER, "-e", providers, "--provider", "offline", "--model", "echo"] : [];
  const agent = spawnAgent(bin, ["--mode", "rpc", "--no-session", ...args], {
    cwd: p.cwd,
    env: { ...NO_KEYS, ...env, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
  });
  running.push(agent);
  const data = (await ok(agent, { type: "get_available_models" }))["data"] as { models: { provider: string; id: string }[] };
  return data.models.map((m) => `${m.provider}/${m.id}`).sort();
}

describe("ctx.modelRegistry", () => {
  it("answers synchronously, at start-up and in a command, as pi's registry does (pi and parley alike)", async () => {
    const seen = await alike(async (bin) => {
      const p = place("parley-registry-");
      const providers = join(p.home, "providers.ts");
      write(providers, PROVIDERS);
      const agent = spawnAgent(bin, ["--mode", "rpc", "--no-session", "-e", OFFLINE_PROVIDER, "-e", providers, "--provider", "offline", "--model", "echo"], {
        cwd: p.cwd,
        env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
      });
      running.push(agent);
      await ok(agent, { type: "prompt", message: "/registry" });
      await agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith("REGISTRY command "), MINUTE);
      expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
      return agent.records.flatMap((r) => (r.type === "extension_ui_request" && String(r["message"]).startsWith("REGISTRY ") ? [r["message"]] : []));
    });
    expect(seen).toHaveLength(2);
    expect(JSON.parse(String(seen[0]).replace(/^REGISTRY start /, ""))).toEqual({
      available: ["keyed/m", "keyless/m", "offline/echo"],
      all: true,
      builtIn: "claude-sonnet-4-5",
      echo: "echo",
      auth: true,
    });
  });
});

describe("the models a client is offered", () => {
  it("extension providers' models, and parley's demo model not beside them (pi and parley alike)", async () => {
    expect(await alike((bin) => offered(bin, { KEYED_API_KEY: "k" }, true))).toEqual(["keyed/m", "keyless/m", "offline/echo"]);
  });

  it("with nothing that can answer, parley offers its demo model (pi offers nothing and cannot answer)", async () => {
    expect(await offered(PARLEY_BIN, {}, false)).toEqual(["parley/offline"]);
  });
});
