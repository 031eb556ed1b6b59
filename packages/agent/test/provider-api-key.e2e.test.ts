/**
 * A provider's configured `apiKey` as pi 1.6 reads it, through the spawned CLI side by side with pi
 * 1.6 and a local OpenAI-compatible server (127.0.0.1 only) that records the key each request
 * carries: an extension's `registerProvider` key and models.json's, `$VAR` / `${VAR}` from the
 * environment, `!command` output, `$$` for `$`, and a bare name as the literal key (not the
 * variable of that name, pi 0.73's reading). A configured key comes before the provider's
 * environment variable, after auth.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Side, sideWorld, startSide } from "./helpers/newest-pi.js";
import { replyTo } from "./helpers/oauth-world.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/agent/key-provider.js");

const keys: (string | undefined)[] = [];
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    keys.push(req.headers.authorization);
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "k1", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.end(`${chunk({ role: "assistant", content: "answered" }, null)}${chunk({}, "stop")}data: [DONE]\n\n`);
  });
});
let base = "";
const bases: string[] = [];
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  for (const dir of bases) rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((ok) => server.close(() => ok()));
});

/** Both sides in turn (the server's record of keys is shared). */
async function inTurn<T>(scenario: (side: Side) => Promise<T>): Promise<Record<Side, T>> {
  const pi = await scenario("pi");
  return { pi, parley: await scenario("parley") };
}

/** The Authorization header a prompt's request carried, on one side, with `modelsJson` and `env` in its world. */
async function keySent(side: Side, args: string[], env: NodeJS.ProcessEnv, modelsJson?: object): Promise<string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), `parley-apikey-${side}-`));
  bases.push(dir);
  const world = sideWorld(dir, { PI_OFFLINE: "1", KEYCO_BASE: base, KEYCO_TOKEN: "from-env", ...env });
  if (modelsJson) writeFileSync(join(world.agentDir, "models.json"), JSON.stringify(modelsJson));
  const agent = startSide(side, ["--mode", "rpc", "--no-session", ...args], { cwd: world.cwd, env: world.env });
  try {
    const from = keys.length;
    expect(await replyTo(agent, "hello")).toBe("answered");
    expect(keys.length - from).toBe(1);
    return keys[from];
  } finally {
    agent.kill();
  }
}

const CASES: { config: string; sent: string }[] = [
  { config: "KEYCO_TOKEN", sent: "Bearer KEYCO_TOKEN" },
  { config: "$KEYCO_TOKEN", sent: "Bearer from-env" },
  { config: "${KEYCO_TOKEN}-suffix", sent: "Bearer from-env-suffix" },
  { config: "!echo from-command", sent: "Bearer from-command" },
  { config: "$$KEYCO_TOKEN", sent: "Bearer $KEYCO_TOKEN" },
];

describe("a provider's configured apiKey, read as pi 1.6 reads it", () => {
  for (const { config, sent } of CASES) {
    it(`registerProvider apiKey ${JSON.stringify(config)} sends ${sent}, as pi 1.6`, async () => {
      const seen = await inTurn((side) => keySent(side, ["-e", FIXTURE, "--provider", "keyco", "--model", "k1"], { KEYCO_APIKEY_CONFIG: config }));
      expect(seen.parley).toEqual(seen.pi);
      expect(seen.parley).toBe(sent);
    }, 120_000);
  }

  for (const { config, sent } of CASES.slice(0, 2)) {
    it(`models.json apiKey ${JSON.stringify(config)} sends ${sent}, as pi 1.6`, async () => {
      const models = { providers: { jsonco: { baseUrl: base, api: "openai-completions", apiKey: config, models: [{ id: "j1" }] } } };
      const seen = await inTurn((side) => keySent(side, ["--provider", "jsonco", "--model", "j1"], {}, models));
      expect(seen.parley).toEqual(seen.pi);
      expect(seen.parley).toBe(sent);
    }, 120_000);
  }

  it("models.json's key for a built-in provider comes before the provider's environment variable, as in pi 1.6", async () => {
    const models = { providers: { deepseek: { baseUrl: base, apiKey: "$KEYCO_TOKEN" } } };
    const seen = await inTurn((side) => keySent(side, ["--provider", "deepseek", "--model", "deepseek-flash"], { DEEPSEEK_API_KEY: "ds-env" }, models));
    expect(seen.parley).toEqual(seen.pi);
    expect(seen.parley).toBe("Bearer from-env");
  }, 120_000);
});
