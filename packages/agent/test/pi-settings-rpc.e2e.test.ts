/**
 * The settings.json keys that change what pi sends to a provider in RPC mode, through the spawned
 * CLI against a local server standing in for the provider (a models.json provider): thinking
 * budgets, blocked images, the provider SDK's retries and timeout (`retry.provider`,
 * `httpIdleTimeoutMs`), and the budget of a branch summary (`branchSummary.reserveTokens`); and
 * the extension hooks on provider requests (`before_provider_request`, `before_provider_headers`,
 * `after_provider_response`), for the loop's requests and a compaction's summary.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { imageSize } from "../src/tools/image-fit.js";
import { makeImage } from "./helpers/images.js";
import { closedAfterEach, MINUTE, NO_KEYS, ok, place, write, type Place } from "./helpers/pi-home.js";

const TREE_BACK = resolve(import.meta.dirname, "fixtures/pi-dropin/tree-back.ts");
const OPTIONS_ECHO = resolve(import.meta.dirname, "fixtures/pi-dropin/options-echo.ts");

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** How the stand-in answers one request: the test decides per request, in order. */
type Answer = (res: ServerResponse, seen: Seen) => void;

const anthropicError =
  (status: number, extra: Record<string, string> = {}): Answer =>
  (res) => {
    res.writeHead(status, { "content-type": "application/json", ...extra });
    res.end(JSON.stringify({ type: "error", error: { type: status >= 500 ? "api_error" : "invalid_request_error", message: `stand-in ${status}` } }));
  };

/** An OpenAI chat-completions stream with one text reply. */
const openAiText =
  (text: string): Answer =>
  (res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.end(`${chunk({ role: "assistant", content: text }, null)}${chunk({}, "stop")}data: [DONE]\n\n`);
  };

/** Never answers: the request stays open until the client gives up (or the server closes). */
const hang: Answer = () => {};

interface StandIn {
  baseUrl: string;
  seen: Seen[];
  answers: Answer[];
  close(): void;
}

async function standIn(fallback: Answer): Promise<StandIn> {
  const seen: Seen[] = [];
  const answers: Answer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const record: Seen = { url: req.url ?? "", headers: req.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
      seen.push(record);
      (answers.shift() ?? fallback)(res, record);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    answers,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

// Registered before closedAfterEach: after-hooks run in reverse, so the agents close first.
const servers: StandIn[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});
const running = closedAfterEach();

/** This machine's proxy variables, left out: the settings under test decide the proxy. */
const NO_PROXY_ENV: NodeJS.ProcessEnv = {
  HTTP_PROXY: undefined,
  HTTPS_PROXY: undefined,
  http_proxy: undefined,
  https_proxy: undefined,
  NO_PROXY: undefined,
  no_proxy: undefined,
};

function start(p: Place, args: string[]): AgentProcess {
  const env = { ...NO_KEYS, ...NO_PROXY_ENV, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir };
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", ...args], { cwd: p.cwd, env });
  running.push(agent);
  return agent;
}

/** Sends a prompt and waits until the agent has settled; returns the run's records. */
async function promptSettled(agent: AgentProcess, command: object): Promise<Rec[]> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", ...command });
  await agent.waitFor((r) => r.type === "agent_settled", MINUTE, from);
  return agent.records.slice(from);
}

/** models.json with one provider at the stand-in. */
function provider(p: Place, baseUrl: string, api: "anthropic-messages" | "openai-completions", model: Record<string, unknown>): void {
  write(join(p.agentDir, "models.json"), {
    providers: {
      standin: {
        baseUrl,
        api,
        apiKey: "sk-stand-in",
        models: [{ name: "Stand-in", input: ["text", "image"], contextWindow: 200_000, maxTokens: 64_000, ...model }],
      },
    },
  });
}

const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

describe("settings.json keys that shape provider requests in RPC mode", () => {
  it(
    "transport, thinkingBudgets and retry.provider reach every provider's stream options, with the newest pi's defaults",
    async () => {
      const p = place("parley-settings-");
      const echoed = async (): Promise<Record<string, unknown>> => {
        const agent = start(p, ["--no-session", "-e", OPTIONS_ECHO, "--model", "echo-options/opts"]);
        const records = await promptSettled(agent, { message: "which options?" });
        const end = records.find((r) => r.type === "message_end" && (r["message"] as { role: string }).role === "assistant");
        const text = ((end?.["message"] as { content: { text?: string }[] } | undefined)?.content ?? [])[0]?.text ?? "{}";
        return JSON.parse(text) as Record<string, unknown>;
      };
      write(join(p.agentDir, "settings.json"), {
        transport: "websocket",
        thinkingBudgets: { medium: 7777 },
        retry: { provider: { timeoutMs: 4321, maxRetries: 2, maxRetryDelayMs: 999 } },
      });
      expect(await echoed()).toEqual({ transport: "websocket", thinkingBudgets: { medium: 7777 }, timeoutMs: 4321, maxRetries: 2, maxRetryDelayMs: 999 });
      // Defaults: auto transport, the HTTP idle timeout (5 minutes) as the timeout, no SDK retries, a 60 s cap.
      write(join(p.agentDir, "settings.json"), {});
      expect(await echoed()).toEqual({ transport: "auto", timeoutMs: 300_000, maxRetries: 0, maxRetryDelayMs: 60_000 });
      write(join(p.agentDir, "settings.json"), { httpIdleTimeoutMs: 0 });
      expect((await echoed())["timeoutMs"]).toBe(2_147_483_647);
    },
    3 * MINUTE,
  );

  it(
    "thinkingBudgets, images.blockImages and retry.provider.maxRetries reach the request, as in pi",
    async () => {
      const server = await standIn(anthropicError(400));
      servers.push(server);
      const p = place("parley-settings-");
      // A reasoning model with budget-based thinking (not one of the adaptive-thinking ids).
      provider(p, server.baseUrl, "anthropic-messages", { id: "stand-in-reasoner", reasoning: true });
      write(join(p.agentDir, "settings.json"), {
        thinkingBudgets: { low: 3333 },
        images: { blockImages: true },
        retry: { enabled: false, provider: { maxRetries: 1 } },
      });
      const agent = start(p, ["--no-session", "--model", "standin/stand-in-reasoner", "--thinking", "low"]);
      // The first request fails with a retryable status: the SDK retries it once (maxRetries 1).
      server.answers.push(anthropicError(500, { "retry-after-ms": "1" }));
      await promptSettled(agent, { message: "what is in the picture?", images: [{ type: "image", data: PIXEL, mimeType: "image/png" }] });
      expect(server.seen).toHaveLength(2);
      const body = server.seen[1]!.body as { thinking?: { budget_tokens?: number }; messages: { content: { type: string; text?: string }[] }[] };
      expect(body.thinking?.budget_tokens).toBe(3333);
      const content = body.messages[0]!.content;
      expect(content.map((c) => c.type)).not.toContain("image");
      expect(content.map((c) => c.text)).toContain("Image reading is disabled.");

      // Without those settings: pi's default budget, the image is sent, and the SDK does not retry
      // (the newest pi leaves retrying to its own auto-retry, off here).
      write(join(p.agentDir, "settings.json"), { retry: { enabled: false } });
      const plain = start(p, ["--no-session", "--model", "standin/stand-in-reasoner", "--thinking", "low"]);
      const before = server.seen.length;
      server.answers.push(anthropicError(500, { "retry-after-ms": "1" }));
      await promptSettled(plain, { message: "what is in the picture?", images: [{ type: "image", data: PIXEL, mimeType: "image/png" }] });
      expect(server.seen.length - before).toBe(1);
      const sent = server.seen.at(-1)!.body as { thinking?: { budget_tokens?: number }; messages: { content: { type: string }[] }[] };
      expect(sent.thinking?.budget_tokens).not.toBe(3333);
      expect(sent.messages[0]!.content.map((c) => c.type)).toContain("image");
    },
    3 * MINUTE,
  );

  it(
    "retry.provider.timeoutMs and httpIdleTimeoutMs end a request the provider does not answer",
    async () => {
      const server = await standIn(hang);
      servers.push(server);
      const p = place("parley-settings-");
      provider(p, server.baseUrl, "openai-completions", { id: "stand-in-chat" });
      for (const settings of [{ retry: { enabled: false, provider: { timeoutMs: 300 } } }, { retry: { enabled: false }, httpIdleTimeoutMs: "300" }]) {
        write(join(p.agentDir, "settings.json"), settings);
        const agent = start(p, ["--no-session", "--model", "standin/stand-in-chat"]);
        const records = await promptSettled(agent, { message: "hello" });
        const end = records.find((r) => r.type === "message_end" && (r["message"] as { role: string }).role === "assistant");
        const message = end?.["message"] as { stopReason: string; errorMessage?: string } | undefined;
        expect(message?.stopReason, JSON.stringify(settings)).toBe("error");
        expect(message?.errorMessage ?? "").toMatch(/time/i);
      }
    },
    3 * MINUTE,
  );

  it(
    "branchSummary.reserveTokens limits what a branch summary reads to the newest entries that fit",
    async () => {
      const server = await standIn(openAiText("the branch, summarised"));
      servers.push(server);
      const p = place("parley-settings-");
      // 4000 tokens of context; 2800 reserved leaves 1200 for the branch (about 4800 characters).
      provider(p, server.baseUrl, "openai-completions", { id: "stand-in-chat", contextWindow: 4000 });
      const t = "2026-01-01T00:00:00.000Z";
      const id = "0199bbbb-0000-7000-8000-000000000001";
      const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: t, cwd: p.cwd })];
      let parentId: string | null = null;
      for (let i = 1; i <= 6; i++) {
        const entryId = `e000000${i}`;
        const role = i % 2 === 1 ? "user" : "assistant";
        const text = `marker-${i} ${"x".repeat(2000)}`;
        const message =
          role === "user"
            ? { role, content: text, timestamp: i }
            : {
                role,
                content: [{ type: "text", text }],
                api: "openai-completions",
                provider: "standin",
                model: "stand-in-chat",
                usage: {
                  input: 0,
                  output: 0,
                  cacheRead: 0,
                  cacheWrite: 0,
                  totalTokens: 0,
                  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
                },
                stopReason: "stop",
                timestamp: i,
              };
        lines.push(JSON.stringify({ type: "message", id: entryId, parentId, timestamp: t, message }));
        parentId = entryId;
      }

      const summarised = async (settings: object): Promise<string> => {
        write(join(p.agentDir, "settings.json"), settings);
        // A copy per run: the summary is appended to the session file.
        const copy = join(p.home, `branch-${server.seen.length}.jsonl`);
        write(copy, `${lines.join("\n")}\n`);
        const agent = start(p, ["--session", copy, "--model", "standin/stand-in-chat", "-e", TREE_BACK]);
        const from = agent.records.length;
        agent.send({ type: "prompt", message: "/back e0000001", id: "back" });
        const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", MINUTE, from);
        expect(String(note["message"])).toContain('"cancelled":false');
        return JSON.stringify(server.seen.at(-1)?.body);
      };

      const limited = await summarised({ branchSummary: { reserveTokens: 2800 } });
      expect(limited).toContain("marker-6");
      expect(limited).toContain("marker-5");
      expect(limited).not.toContain("marker-3");
      expect(limited).not.toContain("marker-2");

      // pi's default reserve (16384) is more than this model's window: no limit, as in pi.
      const whole = await summarised({});
      for (const marker of ["marker-2", "marker-3", "marker-4", "marker-5", "marker-6"]) expect(whole).toContain(marker);
    },
    3 * MINUTE,
  );

  it(
    "httpProxy (global settings only) sends provider requests through the proxy, as in pi",
    async () => {
      const provider = await standIn(openAiText("via the proxy"));
      servers.push(provider);
      const providerPort = Number(new URL(provider.baseUrl).port);
      // The proxy: CONNECT tunnels go to the stand-in provider whatever host they name; a plain
      // proxied request (absolute URL) is answered by the proxy as the provider would.
      const proxied: string[] = [];
      const proxy = createServer((req, res) => {
        proxied.push(`${req.method} ${req.url}`);
        req.resume();
        req.on("end", () => openAiText("via the proxy")(res, { url: req.url ?? "", headers: req.headers, body: {} }));
      });
      proxy.on("connect", (req, socket, head) => {
        proxied.push(`CONNECT ${req.url}`);
        const upstream = connect(providerPort, "127.0.0.1", () => {
          socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
          upstream.write(head);
          upstream.pipe(socket);
          socket.pipe(upstream);
        });
        upstream.on("error", () => socket.destroy());
        socket.on("error", () => upstream.destroy());
      });
      await new Promise<void>((done) => proxy.listen(0, "127.0.0.1", done));
      servers.push({ baseUrl: "", seen: [], answers: [], close: () => (proxy.closeAllConnections(), proxy.close()) });
      const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

      const p = place("parley-settings-");
      // A host that does not resolve: only the proxy can reach it.
      const unreachable = `http://provider.invalid:${providerPort}/v1`;
      write(join(p.agentDir, "models.json"), {
        providers: { standin: { baseUrl: unreachable, api: "openai-completions", apiKey: "sk-stand-in", models: [{ id: "stand-in-chat", name: "Stand-in" }] } },
      });

      // In the project's settings it is ignored (the project must not redirect the user's traffic).
      write(join(p.agentDir, "settings.json"), { retry: { enabled: false } });
      write(join(p.cwd, ".pi", "settings.json"), { httpProxy: proxyUrl });
      const fromProject = start(p, ["--no-session", "--approve", "--model", "standin/stand-in-chat"]);
      const failed = await promptSettled(fromProject, { message: "hello" });
      expect(failed.some((r) => r.type === "message_end" && (r["message"] as { stopReason?: string }).stopReason === "error")).toBe(true);
      expect(proxied).toEqual([]);

      write(join(p.agentDir, "settings.json"), { retry: { enabled: false }, httpProxy: proxyUrl });
      const agent = start(p, ["--no-session", "--model", "standin/stand-in-chat"]);
      const records = await promptSettled(agent, { message: "hello" });
      const end = records.find((r) => r.type === "message_end" && (r["message"] as { role: string }).role === "assistant");
      expect(JSON.stringify(end?.["message"]), agent.stderr()).toContain("via the proxy");
      expect(proxied.join(" ")).toContain(`provider.invalid:${providerPort}`);
    },
    3 * MINUTE,
  );

  it(
    "set_thinking_level \"max\" (the newest pi's level) is the model's highest level",
    async () => {
      const p = place("parley-settings-");
      const agent = start(p, ["--no-session", "-e", OPTIONS_ECHO, "--model", "echo-options/opts"]);
      const levels = ((await ok(agent, { type: "get_available_thinking_levels" }))["data"] as { levels: string[] }).levels;
      await ok(agent, { type: "set_thinking_level", level: "max" });
      const state = (await ok(agent, { type: "get_state" }))["data"] as { thinkingLevel: string };
      expect(state.thinkingLevel).toBe(levels.at(-1));
    },
    2 * MINUTE,
  );

  it(
    "images.autoResize: the read tool scales an image over 2000 pixels down, unless the setting is false",
    async () => {
      const p = place("parley-settings-");
      writeFileSync(join(p.cwd, "wide.png"), makeImage(2600, 130, "png"));
      const script = join(p.home, "turns.json");
      write(script, [{ toolCalls: [{ name: "read", arguments: { path: "wide.png" } }] }, "done"]);
      const readResult = async (): Promise<{ content: { type: string; text?: string; data?: string }[] }> => {
        const agent = start(p, ["--no-session", "--model-script", script]);
        const records = await promptSettled(agent, { message: "look" });
        const end = records.find((r) => r.type === "tool_execution_end");
        expect(end?.["isError"], JSON.stringify(end)).toBe(false);
        return end?.["result"] as { content: { type: string; text?: string; data?: string }[] };
      };
      // PNG or JPEG, whichever came out smaller.
      const imageWidth = (base64: string | undefined): number | undefined => imageSize(Buffer.from(base64 ?? "", "base64"))?.width;

      const scaled = await readResult();
      expect(scaled.content[0]?.text).toContain("2600x130");
      expect(imageWidth(scaled.content.find((c) => c.type === "image")?.data)).toBe(2000);

      write(join(p.agentDir, "settings.json"), { images: { autoResize: false } });
      const untouched = await readResult();
      expect(imageWidth(untouched.content.find((c) => c.type === "image")?.data)).toBe(2600);
    },
    3 * MINUTE,
  );
});

/** Extension hooks on provider requests: changes the payload and the headers, hears the response's status. */
const PROVIDER_HOOKS = `export default function (pi) {
  pi.on("before_provider_request", (event) => ({ ...event.payload, user: "from-before-provider-request" }));
  pi.on("before_provider_headers", (event) => { event.headers["x-from-extension"] = "yes"; });
  pi.on("after_provider_response", (event, ctx) => ctx.ui.notify("status " + event.status, "info"));
}
`;

describe("extension hooks on provider requests, through a real provider (the newest pi's)", () => {
  it(
    "before_provider_request replaces the payload and before_provider_headers adds a header on the loop's requests; after_provider_response hears the status; a compaction's summary gets the headers only",
    async () => {
      const server = await standIn(openAiText("a reply"));
      servers.push(server);
      const p = place("parley-provider-hooks-");
      provider(p, server.baseUrl, "openai-completions", { id: "stand-in-chat", reasoning: false });
      const hooks = join(p.home, "hooks.ts");
      write(hooks, PROVIDER_HOOKS);
      // "a reply" (2 tokens) and "again" (2) pass a budget of 3: the second exchange is kept, the first summarised.
      write(join(p.agentDir, "settings.json"), { compaction: { keepRecentTokens: 3 } });
      const agent = start(p, ["--no-session", "-e", hooks, "--model", "standin/stand-in-chat"]);
      const run = await promptSettled(agent, { message: "hello" });
      expect(run.some((r) => r.type === "extension_ui_request" && r["message"] === "status 200")).toBe(true);
      await promptSettled(agent, { message: "again" });
      server.answers.push(openAiText("the summary"));
      await ok(agent, { type: "compact" });
      expect(server.seen).toHaveLength(3);
      const [first, second, summary] = server.seen as [Seen, Seen, Seen];
      for (const request of [first, second]) {
        expect(request.body["user"]).toBe("from-before-provider-request");
        expect(request.headers["x-from-extension"]).toBe("yes");
      }
      // As in the newest pi: a summary goes through the session's stream function (headers), not the loop's payload hook.
      expect(summary.headers["x-from-extension"]).toBe("yes");
      expect(summary.body["user"]).toBeUndefined();
      expect(JSON.stringify(summary.body["messages"])).toContain("<conversation>");
    },
    3 * MINUTE,
  );
});
