/**
 * The models a client is offered (get_available_models, and so cycle_model), as pi offers them:
 * those with credentials (an extension provider's key may name an unset variable: pi takes the
 * name itself then). parley's offline demo model is the last resort, offered only when no other
 * model can answer.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { alike, closedAfterEach, NO_KEYS, ok, place, write } from "./helpers/pi-home.js";
import { PARLEY_BIN, spawnAgent } from "./helpers/spawn.js";

const running = closedAfterEach();

/** Two providers whose keys name environment variables, which may be unset. */
const PROVIDERS = `export default function (pi) {
  const models = [{ id: "m", name: "m", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 }];
  pi.registerProvider("keyless", { baseUrl: "http://localhost:1", api: "openai-completions", apiKey: "KEYLESS_API_KEY", models });
  pi.registerProvider("keyed", { baseUrl: "http://localhost:1", api: "openai-completions", apiKey: "KEYED_API_KEY", models });
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

describe("the models a client is offered", () => {
  it("extension providers' models, and parley's demo model not beside them (pi and parley alike)", async () => {
    expect(await alike((bin) => offered(bin, { KEYED_API_KEY: "k" }, true))).toEqual(["keyed/m", "keyless/m", "offline/echo"]);
  });

  it("with nothing that can answer, parley offers its demo model (pi offers nothing and cannot answer)", async () => {
    expect(await offered(PARLEY_BIN, {}, false)).toEqual(["parley/offline"]);
  });
});
