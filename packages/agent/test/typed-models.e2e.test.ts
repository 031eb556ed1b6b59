/**
 * ctx.modelRegistry's image and classifier models (pi 1.6): the lists, `classify` (OpenAI's
 * Decisions API) and `generateImages` (OpenRouter's images) against a local server, and the error
 * results for an unknown provider, missing auth and a model of the wrong type. pi 1.6 runs the same
 * extension (fixtures/agent/typed-models.js) with the same key against the same server: the results
 * and the requests each program sent must be equal.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PARLEY_BIN, ROOT, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";

const FIXTURE = resolve(import.meta.dirname, "fixtures/agent/typed-models.js");
const NEWEST_PI = join(ROOT, "node_modules/pi-newest/dist/cli.js");
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

interface Sent {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: unknown;
}
const requests: Sent[] = [];

/** The provider's wire: `/decisions` answers every question; `/chat/completions` returns one image. */
const server = createServer((req, res) => {
  let text = "";
  req.setEncoding("utf8").on("data", (d: string) => {
    text += d;
  });
  req.on("end", () => {
    const body = JSON.parse(text || "null") as { questions?: { name: string; type: string }[] } | null;
    requests.push({ method: req.method, url: req.url, headers: req.headers, body });
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url?.endsWith("/decisions")) {
      const answers = (body?.questions ?? []).map((q) =>
        q.type === "choice"
          ? {
              name: q.name,
              type: "choice",
              choice: "upset",
              probabilities: [
                { value: "calm", probability: 0.25 },
                { value: "upset", probability: 0.75 },
              ],
              confidence: 0.5,
            }
          : q.type === "score"
            ? { name: q.name, type: "score", score: 0.2, confidence: 0.9 }
            : { name: q.name, type: "predicate", probability: 0.97 },
      );
      res.end(JSON.stringify({ answers, usage: { input_tokens: 40, output_tokens: 3 } }));
      return;
    }
    res.end(
      JSON.stringify({
        id: "img-1",
        object: "chat.completion",
        created: 0,
        model: "black-forest-labs/flux-3-image",
        choices: [
          {
            index: 0,
            finish_reason: "stop",
            message: { role: "assistant", content: "here", images: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] },
          },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      }),
    );
  });
});
let base = "";
beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

function start(bin: "parley" | "pi"): AgentProcess {
  const env = { PI_OFFLINE: "1", TYPED_MODELS_BASE: base, OPENAI_API_KEY: "sk-typed", OPENROUTER_API_KEY: "or-typed", TYPESAFE_API_KEY: "" };
  const args = ["--mode", "rpc", "--no-session", "-e", FIXTURE];
  return bin === "parley" ? spawnAgent(PARLEY_BIN, args, { env }) : spawnAgent(process.execPath, [NEWEST_PI, ...args], { env, checkSchema: false });
}

/** Runs `/typed <name>` and returns the notified result, its timestamp dropped, and the requests it made. */
async function run(agent: AgentProcess, name: string): Promise<{ result: Record<string, unknown>; sent: Sent[] }> {
  const from = agent.records.length;
  const before = requests.length;
  const response = await agent.request({ type: "prompt", message: `/typed ${name}` });
  expect(response["success"], JSON.stringify(response)).toBe(true);
  const note = await agent.waitFor(
    (r: Rec) => (r.type === "extension_ui_request" && r["method"] === "notify") || r.type === "extension_error",
    undefined,
    from,
  );
  expect(note.type, JSON.stringify(note)).toBe("extension_ui_request");
  const { timestamp: _t, ...result } = JSON.parse(String(note["message"])) as Record<string, unknown>;
  return { result, sent: requests.slice(before).map(({ headers, ...rest }) => ({ ...rest, headers: comparable(headers) })) };
}

/** The headers both programs choose (the connection's own and the client's identity differ by program). */
function comparable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return { authorization: headers.authorization, "content-type": headers["content-type"] };
}

const CASES = ["lists", "classify", "images", "unknown-provider", "no-auth", "chat-model", "no-image-input", "extension-classifier", "extension-no-images"];

describe("ctx.modelRegistry: image and classifier models as pi 1.6", () => {
  const got: Record<"parley" | "pi", Record<string, { result: Record<string, unknown>; sent: Sent[] }>> = { parley: {}, pi: {} };
  beforeAll(async () => {
    for (const bin of ["pi", "parley"] as const) {
      const agent = start(bin);
      try {
        for (const name of CASES) got[bin][name] = await run(agent, name);
      } finally {
        agent.kill();
      }
    }
  }, 300_000);

  it("classify sends OpenAI's Decisions request with the key and returns the answers", () => {
    const { result, sent } = got.parley["classify"] ?? { result: {}, sent: [] };
    expect(result).toMatchObject({ api: "openai-decisions", provider: "openai", model: "gpt-6-luna", stopReason: "stop" });
    expect(result["answers"]).toEqual({
      mood: { type: "choice", choice: "upset", probabilities: { calm: 0.25, upset: 0.75 }, confidence: 0.5 },
      loud: { type: "bool", probability: 0.97 },
      size: { type: "score", score: 0.2, confidence: 0.9 },
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: "POST", url: "/v1/decisions", headers: { authorization: "Bearer sk-typed" } });
  });

  it("generateImages sends OpenRouter's images request and returns the image", () => {
    const { result, sent } = got.parley["images"] ?? { result: {}, sent: [] };
    expect(result).toMatchObject({
      api: "openrouter-images",
      stopReason: "stop",
      output: [
        { type: "text", text: "here" },
        { type: "image", mimeType: "image/png", data: PNG },
      ],
    });
    expect(sent.map((s) => [s.url, s.headers.authorization])).toEqual([["/v1/chat/completions", "Bearer or-typed"]]);
  });

  it("failures are error results with pi's messages, and send nothing", () => {
    expect(got.parley["unknown-provider"]?.result).toMatchObject({ stopReason: "error", errorMessage: "Unknown provider: no-such-provider" });
    expect(got.parley["no-auth"]?.result["stopReason"]).toBe("error");
    expect(got.parley["chat-model"]?.result["errorMessage"]).toMatch(/is not a classifier model$/);
    expect(got.parley["no-image-input"]?.result["errorMessage"]).toMatch(/is not an image model$/);
    for (const name of ["unknown-provider", "no-auth", "chat-model", "no-image-input"]) expect(got.parley[name]?.sent).toEqual([]);
  });

  it("an extension provider's classifier is listed as one and answers through its own code, with its key", () => {
    expect(got.parley["extension-classifier"]?.result).toMatchObject({
      listed: ["judge"],
      inChat: false,
      answer: { stopReason: "stop", errorMessage: "key tk-literal" },
    });
    expect(got.parley["extension-no-images"]?.result).toMatchObject({
      stopReason: "error",
      errorMessage: "Provider typedco does not support image generation",
    });
  });

  for (const name of CASES) {
    it(`/typed ${name}: the same result and requests as pi 1.6`, () => {
      expect(got.parley[name]).toEqual(got.pi[name]);
    });
  }
});
