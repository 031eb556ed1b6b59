/**
 * Anthropic message threads (pi-ai 1.6's `thread` request field, beta `message-threads-2026-08-12`),
 * side by side with pi 1.6.0 through the spawned CLIs in RPC mode, against a local server speaking
 * the Anthropic Messages wire (a models.json provider with `compat.supportsMessageThreads`, as
 * pi's models.md says to turn them on for an endpoint other than api.anthropic.com). The first
 * request of a session creates a thread with the whole conversation; the next sends only the new
 * messages, continuing from the previous reply's id, without `system` and `tools`; a rejected
 * continue is sent again as a new thread. The bodies pi and parley send must have the same shape.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { agentWorld, CLI, type AgentWorld } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE, NO_KEYS, ok, write } from "./helpers/pi-home.js";
import { type AgentProcess, ROOT, spawnAgent } from "./helpers/spawn.js";

const AGENTS = { pi: join(ROOT, "node_modules/pi-newest/dist/cli.js"), parley: CLI.parley } as const;
type Agent = keyof typeof AGENTS;
const MODEL = "claude-stand-in";

interface Seen {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}
type Answer = (res: ServerResponse, n: number) => void;

/** A streamed Anthropic reply with one text block; its message id is `msg_<n>`. */
const reply: Answer = (res, n) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  res.end(
    event("message_start", {
      message: {
        id: `msg_${n}`,
        type: "message",
        role: "assistant",
        model: MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    }) +
      event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: `reply ${n}` } }) +
      event("content_block_stop", { index: 0 }) +
      event("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 3 } }) +
      event("message_stop", {}),
  );
};

/** Anthropic's rejection of a continue whose thread is gone. */
const threadNotFound: Answer = (res) => {
  res.writeHead(400, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      type: "error",
      error: { type: "invalid_request_error", message: "thread not found", details: { error_code: "thread_not_found" } },
    }),
  );
};

interface StandIn {
  baseUrl: string;
  seen: Seen[];
  answers: Answer[];
  close(): void;
}

async function standIn(): Promise<StandIn> {
  const seen: Seen[] = [];
  const answers: Answer[] = [];
  let replies = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      seen.push({ headers: req.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      const answer = answers.shift() ?? reply;
      if (answer === reply) replies++;
      answer(res, replies);
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

const servers: StandIn[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});
const running = closedAfterEach();
const worlds: AgentWorld[] = [];
afterAll(() => {
  for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
});

async function start(agent: Agent, saved = false): Promise<{ p: AgentProcess; server: StandIn }> {
  const server = await standIn();
  servers.push(server);
  const world = agentWorld(`parley-threads-${agent}-`);
  worlds.push(world);
  write(join(world.agentDir, "models.json"), {
    providers: {
      standin: {
        baseUrl: server.baseUrl,
        api: "anthropic-messages",
        apiKey: "sk-stand-in",
        models: [{ id: MODEL, name: "Stand-in", input: ["text"], contextWindow: 200_000, maxTokens: 8_000, compat: { supportsMessageThreads: true } }],
      },
    },
  });
  const p = spawnAgent(process.execPath, [AGENTS[agent], "--mode", "rpc", ...(saved ? [] : ["--no-session"]), "--provider", "standin", "--model", MODEL], {
    cwd: world.cwd,
    env: { ...NO_KEYS, ...world.env, PI_OFFLINE: "1", NO_COLOR: "1" },
    checkSchema: agent === "parley",
  });
  running.push(p);
  return { p, server };
}

async function prompt(p: AgentProcess, message: string): Promise<void> {
  const from = p.records.length;
  await ok(p, { type: "prompt", message });
  await p.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

/** What a request says about threads, comparable across agents (no prompt text, no paths). */
function shape(seen: Seen): Record<string, unknown> {
  const messages = (seen.body["messages"] as { role: string; content: unknown }[]) ?? [];
  const text = (content: unknown): string =>
    typeof content === "string" ? content : Array.isArray(content) ? content.map((b: { text?: string }) => b.text ?? "").join("") : "";
  return {
    thread: seen.body["thread"],
    messages: messages.map((m) => `${m.role}: ${text(m.content)}`),
    system: "system" in seen.body,
    tools: "tools" in seen.body,
    threadsBeta: String(seen.headers["anthropic-beta"] ?? "")
      .split(",")
      .map((b) => b.trim())
      .includes("message-threads-2026-08-12"),
  };
}

async function sideBySide(scenario: (agent: Agent) => Promise<Record<string, unknown>[]>): Promise<Record<string, unknown>[]> {
  const pi = await scenario("pi");
  const parley = await scenario("parley");
  expect(parley).toEqual(pi);
  return parley;
}

describe("Anthropic message threads, as pi 1.6 sends them", () => {
  it("creates a thread, then continues it with only the new messages", async () => {
    const shapes = await sideBySide(async (agent) => {
      const { p, server } = await start(agent);
      await prompt(p, "one");
      await prompt(p, "two");
      await prompt(p, "three");
      return server.seen.map(shape);
    });
    expect(shapes).toEqual([
      { thread: { type: "create" }, messages: ["user: one"], system: true, tools: true, threadsBeta: true },
      { thread: { type: "continue", previous_message_id: "msg_1" }, messages: ["user: two"], system: false, tools: false, threadsBeta: true },
      { thread: { type: "continue", previous_message_id: "msg_2" }, messages: ["user: three"], system: false, tools: false, threadsBeta: true },
    ]);
  });

  it("sends a rejected continue again in full as a new thread", async () => {
    const shapes = await sideBySide(async (agent) => {
      const { p, server } = await start(agent);
      await prompt(p, "one");
      server.answers.push(threadNotFound);
      await prompt(p, "two");
      // The reply records the fallback among its diagnostics, as pi-ai 1.6 notes it.
      const end = p.records.findLast((r) => r.type === "message_end" && (r["message"] as { role: string }).role === "assistant");
      const diagnostics = ((end?.["message"] as { diagnostics?: { type: string; details?: unknown }[] }).diagnostics ?? []).map((d) => ({
        type: d.type,
        details: d.details,
      }));
      await prompt(p, "three");
      return [...server.seen.map(shape), { diagnostics }];
    });
    expect(shapes.at(-1)).toEqual({ diagnostics: [{ type: "anthropic_thread_fallback", details: { reason: "thread_not_found" } }] });
    expect(shapes.slice(0, -1).map((s) => s["thread"])).toEqual([
      { type: "create" },
      { type: "continue", previous_message_id: "msg_1" },
      { type: "create" },
      { type: "continue", previous_message_id: "msg_2" },
    ]);
    expect(shapes[2]?.["messages"]).toEqual(["user: one", "assistant: reply 1", "user: two"]);
  });

  it("a session left and taken up again starts a new thread (its thread state is dropped when it is left, as pi drops it)", async () => {
    const shapes = await sideBySide(async (agent) => {
      const { p, server } = await start(agent, true);
      await prompt(p, "one");
      const state = await ok(p, { type: "get_state" });
      const file = (state["data"] as { sessionFile: string }).sessionFile;
      await ok(p, { type: "new_session" });
      await ok(p, { type: "switch_session", sessionPath: file });
      await prompt(p, "two");
      return server.seen.map(shape);
    });
    expect(shapes.map((s) => s["thread"])).toEqual([{ type: "create" }, { type: "create" }]);
    expect(shapes[1]?.["messages"]).toEqual(["user: one", "assistant: reply 1", "user: two"]);
  });
});
