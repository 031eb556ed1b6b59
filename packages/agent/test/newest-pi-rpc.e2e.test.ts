/**
 * What the newest pi's own RPC test file checks (packages/coding-agent/test/rpc.test.ts in
 * earendil-works/pi), beyond the scenarios pi-rpc-client.e2e.test.ts already re-creates, written
 * here in our own words and driven through the spawned CLI.
 *
 * As in pi's file, the model is a custom provider in the agent directory's models.json
 * (`api: "openai-completions"`) whose base URL is a local HTTP server answering in the
 * OpenAI chat-completions streaming format, chosen at start-up with `--provider/--model`.
 * The server is ours: it answers the word it finds asked for, so replies are predictable.
 *
 * Also the prompt preflight of pi's rpc-prompt-response-semantics test: a prompt refused for lack
 * of credentials gets exactly one failure response, worded as pi words it.
 */
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";

/** One streamed chat-completions answer: the text, then the stop chunk with usage, then [DONE]. */
function sseAnswer(text: string): string {
  const chunk = (body: object): string => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", ...body })}\n\n`;
  return (
    chunk({ choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] }) +
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 } }) +
    "data: [DONE]\n\n"
  );
}

/** A streamed answer that calls the bash tool once. */
function sseToolCall(command: string): string {
  const chunk = (body: object): string => `data: ${JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 0, model: "m", ...body })}\n\n`;
  const call = { index: 0, id: "call_1", type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } };
  return (
    chunk({ choices: [{ index: 0, delta: { role: "assistant", tool_calls: [call] }, finish_reason: null }] }) +
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }], usage: { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 } }) +
    "data: [DONE]\n\n"
  );
}

/** The reply to a request body: what the prompt asks to be echoed, a summary when asked for one. */
function replyFor(body: string): string {
  if (body.includes("summar")) return "A short summary.";
  const asked = /echo-word-(\w+)/.exec(body);
  return asked ? `word ${asked[1]}` : "hello";
}

/**
 * While `holding`, requests are answered only once `release()` is called, so that a test can act
 * while a run is surely going on (no timing involved).
 */
let holding = false;
const releaseHeld: (() => void)[] = [];
function release(): void {
  holding = false;
  for (const go of releaseHeld.splice(0)) go();
}

async function startModelServer(): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      const answer = (): void => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        // "use-the-tool" asks for one bash call; once its result is in the context, a text reply.
        const wantsTool = body.includes("use-the-tool") && !body.includes('"role":"tool"');
        res.end(wantsTool ? sseToolCall("echo from-tool") : sseAnswer(replyFor(body)));
      };
      if (holding) releaseHeld.push(answer);
      else answer();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

const cleanups: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  release();
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

interface World {
  agentDir: string;
  cwd: string;
  start(extra?: string[]): AgentProcess;
}

/** An extension with one command, `/ping`, which does nothing (so a prompt of it starts no run). */
function pingExtension(dir: string): string {
  const file = join(dir, "ping-command.ts");
  writeFileSync(file, 'export default function (pi) { pi.registerCommand("ping", { description: "does nothing", handler: async () => {} }); }\n');
  return file;
}

/** An extension whose `input` handler handles "swallow" and rewrites "shout …" (with the event's source). */
function inputExtension(dir: string): string {
  const file = join(dir, "input-handler.ts");
  writeFileSync(
    file,
    `export default function (pi) {
  pi.on("input", (event) => {
    if (event.text === "swallow") return { action: "handled" };
    if (event.text.startsWith("shout ")) return { action: "transform", text: event.source + ":" + event.text.slice(6).toUpperCase() };
    return { action: "continue" };
  });
}
`,
  );
  return file;
}

/** An agent directory whose models.json names the local server (with or without an API key). */
async function world(options: { apiKey: boolean }): Promise<World> {
  const { server, baseUrl } = await startModelServer();
  cleanups.push(() => new Promise<void>((res) => server.close(() => res())));
  const base = mkdtempSync(join(tmpdir(), "parley-newest-pi-"));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  const agentDir = join(base, "agent");
  const cwd = join(base, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
  const provider = {
    baseUrl,
    api: "openai-completions",
    ...(options.apiKey ? { apiKey: "local-key" } : {}),
    compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
    models: [
      {
        id: "local-model",
        name: "Local",
        reasoning: true,
        input: ["text"],
        contextWindow: 64000,
        maxTokens: 4000,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      },
    ],
  };
  writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: { local: provider } }));
  return {
    agentDir,
    cwd,
    start(extra: string[] = []): AgentProcess {
      const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--provider", "local", "--model", "local-model", ...extra], {
        cwd,
        env: { PI_CODING_AGENT_DIR: agentDir },
      });
      cleanups.push(() => agent.kill());
      return agent;
    },
  };
}

type Data = Record<string, unknown>;

async function ok(agent: AgentProcess, command: object): Promise<Data> {
  const response = await agent.request(command);
  expect(response, JSON.stringify(response)).toMatchObject({ type: "response", success: true });
  return (response["data"] ?? {}) as Data;
}

/** Sends a prompt and waits for the run's agent_settled (the event the newest RpcClient waits for). */
async function promptAndSettle(agent: AgentProcess, message: string): Promise<Rec[]> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message });
  await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
  return agent.records.slice(from);
}

const ids = (entries: unknown): string[] => (entries as { id: string }[]).map((e) => e.id);

describe("the newest pi's RPC test scenarios, through the spawned CLI", () => {
  it("a models.json provider chosen with --provider/--model answers prompts; agent_settled ends each run", async () => {
    const w = await world({ apiKey: true });
    const agent = w.start();
    const state = await ok(agent, { type: "get_state" });
    expect(state["model"]).toMatchObject({ provider: "local", id: "local-model" });
    expect(state["messageCount"]).toBe(0);
    const events = await promptAndSettle(agent, "Say echo-word-alpha please");
    const last = events.filter((e) => e.type === "message_end").at(-1)?.["message"] as { role: string; content: { type: string; text?: string }[] };
    expect(last.role).toBe("assistant");
    expect(last.content.find((c) => c.type === "text")?.text).toBe("word alpha");
  });

  it("get_entries: a since cursor returns the entries after it; an unknown one is 'Entry not found'", async () => {
    const agent = (await world({ apiKey: true })).start();
    await promptAndSettle(agent, "Reply with just ok");
    const all = await ok(agent, { type: "get_entries" });
    const entries = all["entries"] as { id: string }[];
    expect(entries.length).toBeGreaterThanOrEqual(2);
    expect(all["leafId"]).toBe(entries.at(-1)?.id);
    const since = await ok(agent, { type: "get_entries", since: entries[0]?.id });
    expect(ids(since["entries"])).toEqual(ids(entries.slice(1)));
    expect(since["leafId"]).toBe(all["leafId"]);
    const unknown = await agent.request({ type: "get_entries", since: "no-such-entry" });
    expect(unknown).toMatchObject({ success: false, command: "get_entries" });
    expect(String(unknown["error"])).toContain("Entry not found");
  });

  it("get_tree is one chain with the entries of get_entries, and the same leaf", async () => {
    const agent = (await world({ apiKey: true })).start();
    await promptAndSettle(agent, "Reply with just ok");
    const { entries, leafId } = (await ok(agent, { type: "get_entries" })) as { entries: { id: string }[]; leafId: string };
    const tree = await ok(agent, { type: "get_tree" });
    expect(tree["leafId"]).toBe(leafId);
    type Node = { entry: { id: string }; children: Node[] };
    let nodes = tree["tree"] as Node[];
    const chain: string[] = [];
    while (nodes.length === 1 && nodes[0] !== undefined) {
      chain.push(nodes[0].entry.id);
      nodes = nodes[0].children;
    }
    expect(nodes).toEqual([]);
    expect(chain).toEqual(ids(entries));
  });

  it("compact appends: the entries from before it are still first, in order, then a compaction entry", async () => {
    const agent = (await world({ apiKey: true })).start();
    await promptAndSettle(agent, "Reply with just ok");
    const before = ids((await ok(agent, { type: "get_entries" }))["entries"]);
    const result = await ok(agent, { type: "compact" });
    // One turn, larger than the budget of one token: cut in two, with no history before it (pi 1.6's words).
    expect(result["summary"]).toBe("No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nA short summary.");
    const after = (await ok(agent, { type: "get_entries" }))["entries"] as { id: string; type: string }[];
    expect(ids(after.slice(0, before.length))).toEqual(before);
    expect(after.some((e) => e.type === "compaction")).toBe(true);
  });

  it("compact while a compaction runs: the later request aborts it and compacts (as the newest pi); one compaction entry", async () => {
    const agent = (await world({ apiKey: true })).start();
    await promptAndSettle(agent, "Reply with just ok");
    const from = agent.records.length;
    holding = true;
    agent.send({ id: "first-compact", type: "compact" });
    // The first one's summary request is held: it surely still runs when the second arrives.
    await agent.waitFor((r) => r.type === "compaction_start", undefined, from);
    agent.send({ id: "second-compact", type: "compact" });
    const first = await agent.response("first-compact");
    expect(first).toMatchObject({ success: false, command: "compact", error: "Compaction cancelled" });
    expect(await agent.waitFor((r) => r.type === "compaction_end", undefined, from)).toMatchObject({ aborted: true });
    release();
    const second = await agent.response("second-compact");
    expect(second).toMatchObject({ success: true, data: { summary: expect.stringContaining("A short summary.") } });
    const { entries } = (await ok(agent, { type: "get_entries" })) as { entries: { type: string }[] };
    expect(entries.filter((e) => e.type === "compaction")).toHaveLength(1);
  });

  it("get_available_thinking_levels holds the current level, and cycling stays within it", async () => {
    const agent = (await world({ apiKey: true })).start();
    const { levels } = (await ok(agent, { type: "get_available_thinking_levels" })) as { levels: string[] };
    expect(levels.length).toBeGreaterThan(1);
    const { thinkingLevel } = await ok(agent, { type: "get_state" });
    expect(levels).toContain(thinkingLevel);
    const cycled = (await ok(agent, { type: "cycle_thinking_level" })) as { level: string };
    expect(levels).toContain(cycled.level);
    expect(cycled.level).not.toBe(thinkingLevel);
  });

  it("--continue in a new process restores the session: same id, entries, leaf and last reply", async () => {
    const w = await world({ apiKey: true });
    const first = w.start();
    await promptAndSettle(first, "Say echo-word-kept");
    const state = await ok(first, { type: "get_state" });
    const stats = await ok(first, { type: "get_session_stats" });
    const entries = await ok(first, { type: "get_entries" });
    expect((await ok(first, { type: "get_last_assistant_text" }))["text"]).toBe("word kept");
    first.kill();
    await first.exited;

    const second = w.start(["--continue"]);
    expect((await ok(second, { type: "get_state" }))["messageCount"]).toBe(state["messageCount"]);
    expect((await ok(second, { type: "get_session_stats" }))["sessionId"]).toBe(stats["sessionId"]);
    const restored = await ok(second, { type: "get_entries" });
    expect(ids(restored["entries"])).toEqual(ids(entries["entries"]));
    expect(restored["leafId"]).toBe(entries["leafId"]);
    expect((await ok(second, { type: "get_last_assistant_text" }))["text"]).toBe("word kept");
    // pi's directory layout: one session file under sessions/<cwd folder>/.
    const folders = readdirSync(join(w.agentDir, "sessions"));
    expect(folders).toHaveLength(1);
  });

  it("prompt, steer and follow_up answer with the newest pi's disposition: started, queued, handled", async () => {
    const w = await world({ apiKey: true });
    const agent = w.start(["-e", pingExtension(w.cwd)]);
    const from = agent.records.length;
    holding = true;
    expect(await ok(agent, { type: "prompt", message: "Start" })).toEqual({ disposition: "started" });
    await agent.waitFor((r) => r.type === "agent_start", undefined, from);
    // The model's reply is held: the run is surely still going on.
    expect(await ok(agent, { type: "prompt", message: "later", streamingBehavior: "followUp" })).toEqual({ disposition: "queued" });
    expect(await ok(agent, { type: "steer", message: "now this" })).toEqual({ disposition: "queued" });
    expect(await ok(agent, { type: "follow_up", message: "and then" })).toEqual({ disposition: "queued" });
    release();
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    // An extension command is handled at once and starts no run.
    expect(await ok(agent, { type: "prompt", message: "/ping" })).toEqual({ disposition: "handled" });
    expect((await ok(agent, { type: "get_state" }))["isStreaming"]).toBe(false);
  });

  it("steer and follow_up go through extensions' input handlers first: handled (nothing queued) or transformed", async () => {
    const w = await world({ apiKey: true });
    const agent = w.start(["-e", inputExtension(w.cwd), "--no-session"]);
    // Idle: both queue for the next run, as in pi, after the input handlers.
    expect(await ok(agent, { type: "steer", message: "swallow" })).toEqual({ disposition: "handled" });
    expect(await ok(agent, { type: "follow_up", message: "swallow" })).toEqual({ disposition: "handled" });
    expect((await ok(agent, { type: "get_state" }))["pendingMessageCount"]).toBe(0);
    expect(await ok(agent, { type: "steer", message: "shout now" })).toEqual({ disposition: "queued" });
    expect(await ok(agent, { type: "follow_up", message: "shout later" })).toEqual({ disposition: "queued" });
    const queued = await ok(agent, { type: "clear_queue" });
    expect(queued).toEqual({ steering: ["rpc:NOW"], followUp: ["rpc:LATER"] });
  });

  it("agent_settled says whether the run was aborted; tool_execution_end says how long the tool ran", async () => {
    const agent = (await world({ apiKey: true })).start();
    let from = agent.records.length;
    await ok(agent, { type: "prompt", message: "Please use-the-tool" });
    const end = await agent.waitFor((r) => r.type === "tool_execution_end", undefined, from);
    expect(end).toMatchObject({ toolName: "bash", isError: false });
    expect(typeof end["durationMs"]).toBe("number");
    expect(end["durationMs"] as number).toBeGreaterThanOrEqual(0);
    expect(await agent.waitFor((r) => r.type === "agent_settled", undefined, from)).toEqual({ type: "agent_settled", aborted: false });

    from = agent.records.length;
    holding = true;
    await ok(agent, { type: "prompt", message: "Start" });
    await agent.waitFor((r) => r.type === "agent_start", undefined, from);
    await ok(agent, { type: "abort" });
    expect(await agent.waitFor((r) => r.type === "agent_settled", undefined, from)).toEqual({ type: "agent_settled", aborted: true });
    release();
  });

  it("input events say how a message will be queued while a run goes on; pi.sendUserMessage expands templates only when asked", async () => {
    const w = await world({ apiKey: true });
    const extension = join(w.cwd, "input-recorder.ts");
    writeFileSync(
      extension,
      `export default function (pi) {
  const seen = [];
  pi.on("input", (event) => {
    seen.push({ text: event.text, source: event.source, streamingBehavior: event.streamingBehavior });
  });
  pi.registerCommand("send-raw", { handler: async () => pi.sendUserMessage("/greet raw") });
  pi.registerCommand("send-expanded", { handler: async () => pi.sendUserMessage("/greet x", { expandPromptTemplates: true }) });
  pi.registerCommand("report", { handler: async (_args, ctx) => ctx.ui.notify(JSON.stringify(seen), "info") });
}
`,
    );
    const template = join(w.cwd, "greet.md");
    writeFileSync(template, "Hello template $1");
    const agent = w.start(["-e", extension, "--prompt-template", template, "--no-session"]);
    let from = agent.records.length;
    holding = true;
    await ok(agent, { type: "prompt", message: "Start" });
    await agent.waitFor((r) => r.type === "agent_start", undefined, from);
    await ok(agent, { type: "steer", message: "s1" });
    await ok(agent, { type: "follow_up", message: "f1" });
    await ok(agent, { type: "prompt", message: "p1", streamingBehavior: "followUp" });
    release();
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    await ok(agent, { type: "steer", message: "idle" });
    await ok(agent, { type: "clear_queue" });
    for (const command of ["/send-raw", "/send-expanded"]) {
      from = agent.records.length;
      await ok(agent, { type: "prompt", message: command });
      await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    }
    from = agent.records.length;
    await ok(agent, { type: "prompt", message: "/report" });
    const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", undefined, from);
    expect(JSON.parse(String(note["message"]))).toEqual([
      { text: "Start", source: "rpc" },
      { text: "s1", source: "rpc", streamingBehavior: "steer" },
      { text: "f1", source: "rpc", streamingBehavior: "followUp" },
      { text: "p1", source: "rpc", streamingBehavior: "followUp" },
      { text: "idle", source: "rpc" },
      { text: "/greet raw", source: "extension" },
      { text: "/greet x", source: "extension" },
    ]);
    const { messages } = (await ok(agent, { type: "get_messages" })) as { messages: { role: string; content: unknown }[] };
    const userTexts = messages
      .filter((m) => m.role === "user")
      .map((m) => (typeof m.content === "string" ? m.content : (m.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("")));
    expect(userTexts.slice(-2)).toEqual(["/greet raw", "Hello template x"]);
  });

  it("a prompt without credentials gets one failure response, worded as pi words it", async () => {
    const agent = (await world({ apiKey: false })).start();
    const response = await agent.request({ type: "prompt", message: "Hello" });
    expect(response).toMatchObject({ type: "response", command: "prompt", success: false });
    expect(String(response["error"])).toContain("No API key found for local.\n\nUse /login to log into a provider via OAuth or API key. See:");
    // Still exactly one response for that id once the agent has answered a later command.
    await ok(agent, { type: "get_state" });
    expect(agent.records.filter((r) => r.type === "response" && r["id"] === response["id"])).toHaveLength(1);
  });
});
