/**
 * models.json and pi 1.6's image and classifier models, side by side with pi 1.6 through the
 * spawned CLI: a provider entry's `baseUrl` moves its built-in image and classifier models too, its
 * `compat` reaches its classifiers, its `apiKey` and `headers` go with a classify call; a `models`
 * entry is a chat model whatever `type` it names (models.json defines chat models only). The
 * classify call goes to a local server (127.0.0.1) that records what it got.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Side, sideWorld, startSide } from "./helpers/newest-pi.js";
import type { Rec } from "./helpers/spawn.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/agent/typed-config.js");

const seen: { url: string | undefined; headers: IncomingHttpHeaders }[] = [];
const server = createServer((req, res) => {
  let text = "";
  req.setEncoding("utf8").on("data", (d: string) => {
    text += d;
  });
  req.on("end", () => {
    seen.push({ url: req.url, headers: req.headers });
    const body = JSON.parse(text || "{}") as { questions?: { name: string }[] };
    res.writeHead(200, { "content-type": "application/json" });
    const answers = (body.questions ?? []).map((q) => ({ name: q.name, type: "predicate", probability: 0.9 }));
    res.end(JSON.stringify({ answers, usage: { input_tokens: 3, output_tokens: 1 } }));
  });
});
let base = "";
const dirs: string[] = [];
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((ok) => server.close(() => ok()));
});

async function run(side: Side): Promise<{ result: unknown; sent: unknown[] }> {
  const dir = mkdtempSync(join(tmpdir(), `parley-typed-config-${side}-`));
  dirs.push(dir);
  const world = sideWorld(dir, { PI_OFFLINE: "1", CFG_KEY: "cfg-key", CFG_TEAM: "blue", OPENAI_API_KEY: "env-key" });
  const models = {
    providers: {
      openai: {
        baseUrl: base,
        apiKey: "$CFG_KEY",
        headers: { "x-team": "$CFG_TEAM" },
        compat: { imageInput: "images" },
        models: [{ id: "cfg-extra", type: "classifier", api: "openai-completions" }],
      },
      openrouter: { baseUrl: `${base}/router` },
    },
  };
  writeFileSync(join(world.agentDir, "models.json"), JSON.stringify(models));
  const agent = startSide(side, ["--mode", "rpc", "--no-session", "-e", FIXTURE], { cwd: world.cwd, env: world.env });
  try {
    const from = agent.records.length;
    const before = seen.length;
    const response = await agent.request({ type: "prompt", message: "/typed-config" });
    expect(response["success"], JSON.stringify(response)).toBe(true);
    const note = await agent.waitFor(
      (r: Rec) => (r.type === "extension_ui_request" && r["method"] === "notify") || r.type === "extension_error",
      undefined,
      from,
    );
    expect(note.type, JSON.stringify(note)).toBe("extension_ui_request");
    const sent = seen.slice(before).map((s) => ({ url: s.url, authorization: s.headers.authorization, team: s.headers["x-team"] }));
    return { result: JSON.parse(String(note["message"])), sent };
  } finally {
    agent.kill();
  }
}

describe("models.json and image and classifier models, as pi 1.6", () => {
  it("baseUrl and compat adjust the built-in ones, apiKey and headers go with a classify call, models entries stay chat models", async () => {
    const pi = await run("pi");
    const parley = await run("parley");
    expect(parley).toEqual(pi);
    expect(parley.result).toMatchObject({
      luna: { baseUrl: base, compat: expect.objectContaining({ imageInput: "images" }) },
      painter: { baseUrl: `${base}/router` },
      extraAsChat: true,
      extraAsClassifier: false,
      extraFound: null,
      classify: { stopReason: "stop" },
    });
    expect(parley.sent).toEqual([{ url: "/v1/decisions", authorization: "Bearer cfg-key", team: "blue" }]);
  }, 120_000);
});
