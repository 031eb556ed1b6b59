/**
 * A compaction entry's `systemMessage` (the prompt pi 1.6.0 records when it compacts) in the
 * session context, as pi 1.6.0 builds it: before the compaction's summary. Through the spawned
 * CLI on a hand-written 1.6.0-style session file: `get_messages` lists the context as pi 1.6.0's
 * own `buildSessionContext` (from the installed pi-newest) does, and a prompt's request to a local
 * chat-completions server carries the summary but never that system message (parley sends its own
 * system prompt).
 */
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PARLEY_BIN, ROOT, spawnAgent } from "./helpers/spawn.js";

/** pi 1.6.0's own context builder (its module runs on Node 20). */
const { buildSessionContext } = (await import(join(ROOT, "node_modules/pi-newest/dist/core/session-manager.js"))) as {
  buildSessionContext(entries: unknown[]): { messages: unknown[] };
};

const MARKER = "RECORDED-PROMPT-7f3a";

const cleanups: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

/** A local chat-completions server that answers "fine" and keeps every request body. */
async function recordingServer(): Promise<{ baseUrl: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      bodies.push(body);
      const chunk = (b: object): string => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", ...b })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "fine" }, finish_reason: null }] }) +
          chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 } }) +
          "data: [DONE]\n\n",
      );
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies };
}

const at = (s: number): string => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
const assistant = (text: string) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "openai-completions",
  provider: "local",
  model: "local-model",
  usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 12, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: "stop",
  timestamp: 2,
});

/** A session as pi 1.6.0 writes one: its prompt in the transcript, then a compaction that recorded the prompt again. */
function sessionLines(cwd: string): Record<string, unknown>[] {
  return [
    { type: "session", version: 3, id: "0199bbbb-cccc-7ddd-8eee-ffff00001111", timestamp: at(0), cwd },
    { type: "message", id: "m0000001", parentId: null, timestamp: at(1), message: { role: "system", content: "You are pi (first run).", timestamp: 1 } },
    { type: "message", id: "m0000002", parentId: "m0000001", timestamp: at(2), message: { role: "user", content: "old question", timestamp: 2 } },
    { type: "message", id: "m0000003", parentId: "m0000002", timestamp: at(3), message: assistant("old answer") },
    { type: "message", id: "m0000004", parentId: "m0000003", timestamp: at(4), message: { role: "user", content: "kept question", timestamp: 4 } },
    { type: "message", id: "m0000005", parentId: "m0000004", timestamp: at(5), message: assistant("kept answer") },
    {
      type: "compaction",
      id: "c0000006",
      parentId: "m0000005",
      timestamp: at(6),
      summary: "The user asked an old question.",
      firstKeptEntryId: "m0000004",
      tokensBefore: 500,
      systemMessage: { role: "system", content: `You are pi (after compaction). ${MARKER}`, sections: { tools: "<tools/>" }, timestamp: 6 },
    },
    { type: "message", id: "m0000007", parentId: "c0000006", timestamp: at(7), message: { role: "user", content: "after question", timestamp: 7 } },
    { type: "message", id: "m0000008", parentId: "m0000007", timestamp: at(8), message: assistant("after answer") },
  ];
}

describe("a compaction's systemMessage (pi 1.6.0)", () => {
  it("comes before the summary in get_messages, as pi 1.6.0 builds the context, and never reaches the model", async () => {
    const { baseUrl, bodies } = await recordingServer();
    const base = mkdtempSync(join(tmpdir(), "parley-compaction-system-"));
    cleanups.push(() => rmSync(base, { recursive: true, force: true }));
    const agentDir = join(base, "agent");
    const cwd = join(base, "project");
    for (const dir of [agentDir, cwd]) mkdirSync(dir, { recursive: true });
    const model = {
      id: "local-model",
      name: "Local",
      reasoning: false,
      input: ["text"],
      contextWindow: 64000,
      maxTokens: 4000,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    };
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({
        providers: { local: { baseUrl, api: "openai-completions", apiKey: "local-key", compat: { supportsDeveloperRole: false }, models: [model] } },
      }),
    );
    const lines = sessionLines(cwd);
    const file = join(base, "from-pi-1.6.0.jsonl");
    const text = `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
    writeFileSync(file, text);

    const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--session", file, "--provider", "local", "--model", "local-model"], {
      cwd,
      env: { PI_CODING_AGENT_DIR: agentDir },
    });
    cleanups.push(() => agent.kill());
    const answer = await agent.request({ type: "get_messages" }, 60_000);
    expect(answer["success"]).toBe(true);
    const messages = (answer["data"] as { messages: Record<string, unknown>[] }).messages;
    // pi 1.6.0's context of the same file, message for message.
    expect(messages).toEqual(buildSessionContext(lines.slice(1)).messages);
    expect(messages.map((m) => m["role"])).toEqual(["system", "compactionSummary", "user", "assistant", "user", "assistant"]);
    expect(messages[0]).toEqual(lines[6]?.["systemMessage"]);

    // A prompt: the request holds the summary and the kept messages, never the recorded prompt.
    const settled = agent.records.length;
    expect((await agent.request({ type: "prompt", message: "next question" }))["success"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled", 60_000, settled);
    expect(bodies).toHaveLength(1);
    const request = JSON.parse(bodies[0] as string) as { messages: { role: string; content: unknown }[] };
    const sent = JSON.stringify(request.messages);
    expect(sent).toContain("The user asked an old question.");
    expect(sent).toContain("kept question");
    expect(sent).not.toContain('old question"');
    expect(sent).not.toContain(MARKER);
    expect(sent).not.toContain("You are pi");
    // One system message at most, parley's own prompt, first.
    expect(request.messages.filter((m) => m.role === "system" || m.role === "developer").length).toBeLessThanOrEqual(1);
    expect(request.messages.at(-1)).toMatchObject({ role: "user" });
    // The file is appended to, never rewritten.
    expect(readFileSync(file, "utf8").startsWith(text)).toBe(true);
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
  }, 120_000);
});
