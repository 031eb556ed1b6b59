/**
 * Every RPC command through the real CLI: its success shape and a representative error.
 * compact, bash, abort_bash and abort_retry are being implemented elsewhere right now: they get
 * one light check each here.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentProcess, Rec } from "./helpers/spawn.js";
import { messages, msg, processRegistry, runPrompt, state, tempDir, textOf, writeScript, type Msg } from "./fixtures/agent/harness.js";

const procs = processRegistry();

type Model = { id: string; provider: string; [k: string]: unknown };
const ok = async (agent: AgentProcess, command: object): Promise<unknown> => {
  const res = await agent.request(command);
  expect(res, JSON.stringify(res)).toMatchObject({ type: "response", command: (command as { type: string }).type, success: true });
  return res["data"];
};
const fail = async (agent: AgentProcess, command: object): Promise<string> => {
  const res = await agent.request(command);
  expect(res, JSON.stringify(res)).toMatchObject({ type: "response", command: (command as { type: string }).type, success: false });
  expect(typeof res["error"]).toBe("string");
  return res["error"] as string;
};
const MODEL_SHAPE = {
  id: expect.any(String),
  name: expect.any(String),
  api: expect.any(String),
  provider: expect.any(String),
  baseUrl: expect.any(String),
  reasoning: expect.any(Boolean),
  input: expect.any(Array),
  cost: expect.objectContaining({ input: expect.any(Number), output: expect.any(Number) }),
  contextWindow: expect.any(Number),
  maxTokens: expect.any(Number),
};

describe("state, model and settings commands (--no-session)", () => {
  const cwd = tempDir();
  let agent: AgentProcess;
  beforeAll(async () => {
    const script = writeScript([
      { text: "Let me look.", toolCalls: [{ name: "bash", arguments: { command: "echo tool-ran" } }] },
      "Answer with <b>markup</b> & <script>alert('x')</script>",
      "second reply",
    ]);
    agent = procs.parley(["--model-script", script], { cwd, keep: "suite" });
    await agent.request({ type: "get_state" });
  });

  it("get_state before anything happened", async () => {
    const s = await state(agent);
    expect(s).toMatchObject({
      model: { ...MODEL_SHAPE, provider: "parley", id: "script" },
      thinkingLevel: "off",
      isStreaming: false,
      isCompacting: false,
      steeringMode: "one-at-a-time",
      followUpMode: "one-at-a-time",
      sessionId: expect.any(String),
      autoCompactionEnabled: true,
      messageCount: 0,
      pendingMessageCount: 0,
    });
    expect(s).not.toHaveProperty("sessionFile"); // --no-session
    expect(s).not.toHaveProperty("sessionName");
  });

  it("get_commands without extensions lists only the built-in /llama and /mcp (as the newest pi); an unknown command is named", async () => {
    expect(await ok(agent, { type: "get_commands" })).toEqual({
      commands: [
        {
          name: "llama",
          description: "Manage llama.cpp router models",
          source: "extension",
          sourceInfo: { path: "builtin:llama.cpp", source: "builtin", scope: "temporary", origin: "top-level" },
        },
        {
          name: "mcp",
          description: expect.stringContaining("MCP servers"),
          source: "extension",
          sourceInfo: { path: "builtin:mcp", source: "builtin", scope: "temporary", origin: "top-level" },
        },
      ],
    });
    expect(await fail(agent, { type: "no_such_command" })).toMatch(/Unknown command: no_such_command/);
  });

  it("empty-session reads: get_messages, get_last_assistant_text (no text), stats, fork messages, entries, tree", async () => {
    expect(await ok(agent, { type: "get_messages" })).toEqual({ messages: [] });
    expect(await ok(agent, { type: "get_last_assistant_text" })).toEqual({});
    expect(await ok(agent, { type: "get_fork_messages" })).toEqual({ messages: [] });
    // No conversation, but what the session starts with, recorded as pi records it.
    const { entries, leafId } = (await ok(agent, { type: "get_entries" })) as { entries: { type: string; id: string }[]; leafId: string };
    expect(entries.map((e) => e.type)).toEqual(["model_change", "thinking_level_change"]);
    expect(leafId).toBe(entries[1]?.id);
    expect(await ok(agent, { type: "get_tree" })).toMatchObject({
      tree: [{ entry: { type: "model_change" }, children: [{ entry: { type: "thinking_level_change" }, children: [] }] }],
      leafId,
    });
    expect(await ok(agent, { type: "get_session_stats" })).toMatchObject({
      sessionId: expect.any(String),
      userMessages: 0,
      assistantMessages: 0,
      toolCalls: 0,
      toolResults: 0,
      totalMessages: 0,
      tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      cost: 0,
    });
  });

  it("get_available_models, set_model (offline and back), unknown model, cycle_model", async () => {
    const { models } = (await ok(agent, { type: "get_available_models" })) as { models: Model[] };
    for (const m of models) expect(m).toMatchObject(MODEL_SHAPE);
    // The demo model is a last resort: not offered beside a model that answers (it can still be set).
    expect(models.map((m) => `${m.provider}/${m.id}`)).toEqual(["parley/script"]);

    const offline = (await ok(agent, { type: "set_model", provider: "parley", modelId: "offline" })) as Model;
    expect(offline).toMatchObject({ ...MODEL_SHAPE, provider: "parley", id: "offline" });
    expect(((await state(agent))["model"] as Model).id).toBe("offline");
    const back = (await ok(agent, { type: "set_model", provider: "parley", modelId: "script" })) as Model;
    expect(back.id).toBe("script");
    expect(((await state(agent))["model"] as Model).id).toBe("script");

    expect(await fail(agent, { type: "set_model", provider: "nope", modelId: "missing-model" })).toMatch(/Model not found/);
    expect(await fail(agent, { type: "set_model", provider: "parley" })).toMatch(/modelId/);
    expect(((await state(agent))["model"] as Model).id).toBe("script");

    // One model offered: nothing to cycle to, as in pi.
    expect(await ok(agent, { type: "cycle_model" })).toBeNull();
    expect(((await state(agent))["model"] as Model).id).toBe("script");
  });

  it("thinking level on a non-reasoning model: clamped to off, no change announced; cycle returns null", async () => {
    const from = agent.records.length;
    expect(await ok(agent, { type: "get_available_thinking_levels" })).toEqual({ levels: ["off"] });
    expect(await ok(agent, { type: "set_thinking_level", level: "high" })).toBeUndefined();
    expect((await state(agent))["thinkingLevel"]).toBe("off");
    expect(await ok(agent, { type: "cycle_thinking_level" })).toBeNull();
    expect(agent.records.slice(from).some((r) => r.type === "thinking_level_changed")).toBe(false);
    expect(await fail(agent, { type: "set_thinking_level", level: "enormous" })).toMatch(/level/);
  });

  it("queue modes, auto compaction, auto retry", async () => {
    expect(await ok(agent, { type: "set_steering_mode", mode: "all" })).toBeUndefined();
    expect(await ok(agent, { type: "set_follow_up_mode", mode: "all" })).toBeUndefined();
    expect(await state(agent)).toMatchObject({ steeringMode: "all", followUpMode: "all" });
    expect(await fail(agent, { type: "set_steering_mode", mode: "sometimes" })).toMatch(/mode/);
    expect(await fail(agent, { type: "set_follow_up_mode", mode: "never" })).toMatch(/mode/);
    expect(await fail(agent, { type: "set_steering_mode" })).toMatch(/mode/);
    await ok(agent, { type: "set_steering_mode", mode: "one-at-a-time" });
    await ok(agent, { type: "set_follow_up_mode", mode: "one-at-a-time" });
    expect(await state(agent)).toMatchObject({ steeringMode: "one-at-a-time", followUpMode: "one-at-a-time" });

    expect(await ok(agent, { type: "set_auto_compaction", enabled: false })).toBeUndefined();
    expect((await state(agent))["autoCompactionEnabled"]).toBe(false);
    await ok(agent, { type: "set_auto_compaction", enabled: true });
    expect((await state(agent))["autoCompactionEnabled"]).toBe(true);
    expect(await fail(agent, { type: "set_auto_compaction", enabled: "yes" })).toMatch(/enabled/);
    expect(await ok(agent, { type: "set_auto_retry", enabled: false })).toBeUndefined();
    await ok(agent, { type: "set_auto_retry", enabled: true });
    expect(await fail(agent, { type: "set_auto_retry" })).toMatch(/enabled/);
  });

  it("set_session_name: announced with session_info_changed; empty is an error", async () => {
    const from = agent.records.length;
    expect(await ok(agent, { type: "set_session_name", name: "my <work>" })).toBeUndefined();
    expect(agent.records.slice(from).filter((r) => r.type === "session_info_changed")).toEqual([{ type: "session_info_changed", name: "my <work>" }]);
    expect((await state(agent))["sessionName"]).toBe("my <work>");
    expect(await fail(agent, { type: "set_session_name", name: "   " })).toMatch(/empty/i);
    expect((await state(agent))["sessionName"]).toBe("my <work>");
  });

  describe("after a tool-using turn", () => {
    let run: Rec[] = [];
    beforeAll(async () => {
      run = await runPrompt(agent, "Look & tell: <b>bold</b> <script>alert(1)</script>");
    });

    it("get_messages and get_state count the messages", async () => {
      const list = await messages(agent);
      // The run recorded the system prompt first, as pi 1.6 does; it is a message of the context.
      expect(list.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
      expect((await state(agent))["messageCount"]).toBe(5);
      expect(textOf(list[3])).toContain("tool-ran");
    });

    it("get_session_stats counts and contextUsage", async () => {
      const stats = (await ok(agent, { type: "get_session_stats" })) as Record<string, unknown>;
      expect(stats).toMatchObject({
        sessionId: (await state(agent))["sessionId"],
        userMessages: 1,
        assistantMessages: 2,
        toolCalls: 1,
        toolResults: 1,
        // The recorded system message counts, as in pi 1.6.
        totalMessages: 5,
        cost: expect.any(Number),
      });
      const tokens = stats["tokens"] as Record<string, number>;
      const usages = run.filter((r) => r.type === "message_end" && msg(r).role === "assistant").map((r) => msg(r)["usage"] as Record<string, number>);
      expect(tokens["input"]).toBe(usages.reduce((n, u) => n + (u["input"] ?? 0), 0));
      expect(tokens["output"]).toBe(usages.reduce((n, u) => n + (u["output"] ?? 0), 0));
      expect(tokens["total"]).toBe((tokens["input"] ?? 0) + (tokens["output"] ?? 0) + (tokens["cacheRead"] ?? 0) + (tokens["cacheWrite"] ?? 0));
      const last = usages.at(-1) as Record<string, number>;
      expect(stats["contextUsage"]).toEqual({ tokens: last["totalTokens"], contextWindow: 128_000, percent: expect.any(Number) });
      const percent = (stats["contextUsage"] as { percent: number }).percent;
      expect(percent).toBeCloseTo(((last["totalTokens"] ?? 0) / 128_000) * 100, 0);
    });

    it("get_last_assistant_text", async () => {
      expect(await ok(agent, { type: "get_last_assistant_text" })).toEqual({ text: "Answer with <b>markup</b> & <script>alert('x')</script>" });
    });

    it("get_fork_messages, get_entries (with and without since), get_tree", async () => {
      const { entries, leafId } = (await ok(agent, { type: "get_entries" })) as { entries: Rec[]; leafId: string };
      const messageEntries = entries.filter((e) => e.type === "message");
      expect(messageEntries.map((e) => (e["message"] as Msg).role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
      for (const e of entries) expect(e).toMatchObject({ id: expect.any(String), timestamp: expect.any(String) });
      expect(leafId).toBe(entries.at(-1)?.["id"]);
      // Each entry's parent is the one before it (one branch).
      entries.forEach((e, i) => expect(e["parentId"]).toBe(i === 0 ? null : entries[i - 1]?.["id"]));

      // The first message entry is the recorded system message; the user's comes next.
      const user = messageEntries[1] as Rec;
      expect(await ok(agent, { type: "get_fork_messages" })).toEqual({
        messages: [{ entryId: user["id"], text: "Look & tell: <b>bold</b> <script>alert(1)</script>" }],
      });

      const since = (await ok(agent, { type: "get_entries", since: entries[0]?.["id"] })) as { entries: Rec[]; leafId: string };
      expect(since).toEqual({ entries: entries.slice(1), leafId });
      expect(await ok(agent, { type: "get_entries", since: leafId })).toEqual({ entries: [], leafId });
      expect(await fail(agent, { type: "get_entries", since: "no-such-entry" })).toMatch(/no-such-entry/);

      const tree = (await ok(agent, { type: "get_tree" })) as { tree: { entry: Rec; children: unknown[] }[]; leafId: string };
      expect(tree.leafId).toBe(leafId);
      expect(tree.tree).toHaveLength(1);
      // Walk the single chain: it holds the entries in order.
      const chain: string[] = [];
      let node: { entry: Rec; children: unknown[] } | undefined = tree.tree[0];
      while (node) {
        chain.push(node.entry["id"] as string);
        expect(node.children.length).toBeLessThanOrEqual(1);
        node = node.children[0] as typeof node;
      }
      expect(chain).toEqual(entries.map((e) => e["id"]));
    });

    it("export_html: an in-memory session is refused in pi 1.6's words, and nothing is written", async () => {
      const out = join(tempDir(), "export.html");
      expect(await fail(agent, { type: "export_html", outputPath: out })).toBe("Cannot export in-memory session to HTML");
      expect(existsSync(out)).toBe(false);
    });

    it("new_session: fresh context, new id, and the next prompt starts from nothing", async () => {
      const before = await state(agent);
      const from = agent.records.length;
      expect(await ok(agent, { type: "new_session" })).toEqual({ cancelled: false });
      const after = await state(agent);
      expect(after["sessionId"]).not.toBe(before["sessionId"]);
      expect(after["messageCount"]).toBe(0);
      expect(await messages(agent)).toEqual([]);
      expect(await ok(agent, { type: "get_last_assistant_text" })).toEqual({});
      // Only what the new session starts with (model and level), as pi records it.
      const { entries } = (await ok(agent, { type: "get_entries" })) as { entries: { type: string }[] };
      expect(entries.map((e) => e.type)).toEqual(["model_change", "thinking_level_change"]);
      const next = await runPrompt(agent, "fresh");
      const firstCall = msg(next.find((r) => r.type === "message_start" && msg(r).role === "assistant") as Rec);
      const oldFirst = msg(run.find((r) => r.type === "message_start" && msg(r).role === "assistant") as Rec);
      // The model's context is as small as the very first call's (same system prompt, one short message).
      expect((firstCall["usage"] as { input: number }).input).toBeLessThanOrEqual((oldFirst["usage"] as { input: number }).input);
      // The new session's first run records the system prompt (no text) before the prompt, as pi 1.6 does.
      expect((await messages(agent)).map((m) => textOf(m))).toEqual(["", "fresh", "second reply"]);
      expect(agent.records.slice(from).some((r) => r.type === "extension_error")).toBe(false);
    });
  });

  it("compact, bash, abort_bash, abort_retry (light: being implemented elsewhere)", async () => {
    // bash: output streams as bash_execution_update with the command's id, the response has the result.
    const from = agent.records.length;
    agent.send({ type: "bash", id: "bash-1", command: "echo out-1; echo err-1 >&2; exit 3" });
    const bash = await agent.response("bash-1");
    expect(bash).toMatchObject({ success: true, data: { exitCode: 3, cancelled: false, truncated: false } });
    expect((bash["data"] as { output: string }).output).toContain("out-1");
    const updates = agent.records.slice(from).filter((r) => r.type === "bash_execution_update");
    expect(updates.length).toBeGreaterThan(0);
    for (const u of updates) expect(u["id"]).toBe("bash-1");
    expect(updates.map((u) => u["delta"]).join("")).toContain("out-1");
    // Nothing running: abort_bash and abort_retry are harmless no-ops.
    expect(await ok(agent, { type: "abort_bash" })).toBeUndefined();
    expect(await ok(agent, { type: "abort_retry" })).toBeUndefined();
    // compact: either a result or a clear error, bracketed by compaction_start/end.
    const c = await agent.request({ type: "compact" });
    if (c["success"]) expect(c["data"]).toMatchObject({ summary: expect.any(String), firstKeptEntryId: expect.any(String), tokensBefore: expect.any(Number) });
    else expect(String(c["error"]).length).toBeGreaterThan(5);
    expect(await fail(agent, { type: "bash" })).toMatch(/command/);
  });
});

describe("the model catalogue loads on first need", () => {
  it("lines sent with a catalogue command at start-up run and are answered in order, effects included", async () => {
    // Start-up with a local model does not load pi-ai's catalogue; the first line that needs it
    // holds the ones after it, so the get_state after set_model sees the new model.
    const agent = procs.parley(["--model-script", writeScript(["hi"]), "--no-extensions"], { cwd: tempDir() });
    agent.sendRaw(
      [
        { type: "get_state", id: "m1" },
        { type: "set_model", provider: "parley", modelId: "offline", id: "m2" },
        { type: "get_state", id: "m3" },
        { type: "get_available_models", id: "m4" },
        { type: "set_model", provider: "anthropic", modelId: "claude-opus-4-7", id: "m5" },
        { type: "set_model", provider: "parley", modelId: "script", id: "m6" },
        { type: "get_state", id: "m7" },
      ]
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(""),
    );
    await agent.response("m7");
    const responses = agent.records.filter((r) => r.type === "response");
    expect(responses.map((r) => r["id"])).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(responses.map((r) => r["success"])).toEqual([true, true, true, true, false, true, true]);
    const modelOf = (r: Rec): string => {
      const data = r["data"] as { model?: Model; id?: string };
      return data.model?.id ?? String(data.id);
    };
    expect([modelOf(responses[0]!), modelOf(responses[1]!), modelOf(responses[2]!), modelOf(responses[6]!)]).toEqual([
      "script",
      "offline",
      "offline",
      "script",
    ]);
    // The demo model is not offered beside a model that answers.
    expect((responses[3]!["data"] as { models: Model[] }).models.map((m) => `${m.provider}/${m.id}`)).toEqual(["parley/script"]);
    // In the catalogue, but without a key it cannot be used: the error says so.
    expect(String(responses[4]!["error"])).toMatch(/anthropic/i);
  });
});

describe("thinking level on a reasoning model", () => {
  it("set_thinking_level announces thinking_level_changed only on a change; cycle returns the level; a non-reasoning model clamps to off", async () => {
    // A fake key makes the provider's models available; nothing here talks to the network.
    const agent = procs.parley(["--model-script", writeScript([])], { env: { ANTHROPIC_API_KEY: "sk-ant-test-not-a-real-key" } });
    const model = (await ok(agent, { type: "set_model", provider: "anthropic", modelId: "claude-sonnet-4-5" })) as Model;
    expect(model).toMatchObject({ ...MODEL_SHAPE, provider: "anthropic", id: "claude-sonnet-4-5", reasoning: true });
    const { levels } = (await ok(agent, { type: "get_available_thinking_levels" })) as { levels: string[] };
    expect(levels[0]).toBe("off");
    expect(levels).toEqual(expect.arrayContaining(["off", "low", "medium", "high"]));

    const changes = (from: number) => agent.records.slice(from).filter((r) => r.type === "thinking_level_changed");
    let from = agent.records.length;
    await ok(agent, { type: "set_thinking_level", level: "high" });
    expect(changes(from)).toEqual([{ type: "thinking_level_changed", level: "high" }]);
    expect((await state(agent))["thinkingLevel"]).toBe("high");

    from = agent.records.length;
    await ok(agent, { type: "set_thinking_level", level: "high" });
    expect(changes(from)).toEqual([]);

    from = agent.records.length;
    const cycled = (await ok(agent, { type: "cycle_thinking_level" })) as { level: string };
    const expected = levels[(levels.indexOf("high") + 1) % levels.length];
    expect(cycled).toEqual({ level: expected });
    expect(changes(from)).toEqual([{ type: "thinking_level_changed", level: expected }]);

    await ok(agent, { type: "set_thinking_level", level: "medium" });
    from = agent.records.length;
    await ok(agent, { type: "set_model", provider: "parley", modelId: "script" });
    expect((await state(agent))["thinkingLevel"]).toBe("off");
    expect(changes(from)).toEqual([{ type: "thinking_level_changed", level: "off" }]);
  });
});

describe("session-file commands (--session-dir)", () => {
  const dir = tempDir("parley-sessions-");
  const cwd = tempDir();
  let agent: AgentProcess;
  beforeAll(async () => {
    const script = writeScript(["reply one", "reply two", "reply beta", "reply after fork"]);
    agent = procs.raw(["--mode", "rpc", "--session-dir", dir, "--model-script", script], { cwd, keep: "suite" });
    await runPrompt(agent, "first question");
    await runPrompt(agent, "second question");
  });

  it("get_state names the session file, inside --session-dir", async () => {
    const s = await state(agent);
    expect(typeof s["sessionFile"]).toBe("string");
    expect((s["sessionFile"] as string).startsWith(dir)).toBe(true);
    expect(existsSync(s["sessionFile"] as string)).toBe(true);
    expect(await ok(agent, { type: "get_session_stats" })).toMatchObject({
      sessionFile: s["sessionFile"],
      sessionId: s["sessionId"],
      userMessages: 2,
      assistantMessages: 2,
    });
  });

  it("clone: a new session file with the same messages", async () => {
    const before = await state(agent);
    const msgs = await messages(agent);
    expect(await ok(agent, { type: "clone" })).toEqual({ cancelled: false });
    const after = await state(agent);
    expect(after["sessionFile"]).not.toBe(before["sessionFile"]);
    expect(after["sessionId"]).not.toBe(before["sessionId"]);
    expect(existsSync(after["sessionFile"] as string)).toBe(true);
    expect(await messages(agent)).toEqual(msgs);
    // Back to the original for the fork test.
    expect(await ok(agent, { type: "switch_session", sessionPath: before["sessionFile"] })).toEqual({ cancelled: false });
    expect((await state(agent))["sessionFile"]).toBe(before["sessionFile"]);
  });

  it("fork: returns the forked message's text; the new session ends before it", async () => {
    const original = await state(agent);
    const forkable = ((await ok(agent, { type: "get_fork_messages" })) as { messages: { entryId: string; text: string }[] }).messages;
    expect(forkable.map((m) => m.text)).toEqual(["first question", "second question"]);
    const { entries } = (await ok(agent, { type: "get_entries" })) as { entries: Rec[] };
    const assistantEntry = entries.find((e) => e.type === "message" && (e["message"] as Msg).role === "assistant") as Rec;
    // pi's words for both: not a user message, no such entry.
    expect(await fail(agent, { type: "fork", entryId: assistantEntry["id"] })).toBe("Invalid entry ID for forking");
    expect(await fail(agent, { type: "fork", entryId: "no-such-entry" })).toBe("Invalid entry ID for forking");

    const res = await ok(agent, { type: "fork", entryId: forkable[1]?.entryId });
    expect(res).toEqual({ text: "second question", cancelled: false });
    const forked = await state(agent);
    expect(forked["sessionFile"]).not.toBe(original["sessionFile"]);
    expect((await messages(agent)).map((m) => [m.role, textOf(m)])).toEqual([
      // The system message the first run recorded (as pi 1.6) is on the forked branch too.
      ["system", ""],
      ["user", "first question"],
      ["assistant", "reply one"],
    ]);
    // The original file still has the whole conversation.
    const lines = readFileSync(original["sessionFile"] as string, "utf8")
      .trim()
      .split("\n");
    expect(lines.filter((l) => l.includes('"second question"'))).toHaveLength(1);
    // The fork continues from there.
    await runPrompt(agent, "another way");
    expect((await messages(agent)).map((m) => textOf(m))).toEqual(["", "first question", "reply one", "another way", "reply beta"]);
  });

  it("switch_session between two session files; a path with no file starts a session there (as pi)", async () => {
    const a = (await state(agent))["sessionFile"] as string;
    const aMessages = await messages(agent);
    expect(await ok(agent, { type: "new_session" })).toEqual({ cancelled: false });
    await runPrompt(agent, "in session B");
    const b = (await state(agent))["sessionFile"] as string;
    expect(b).not.toBe(a);
    const bMessages = await messages(agent);
    expect(bMessages.map((m) => textOf(m))).toEqual(["", "in session B", "reply after fork"]);

    expect(await ok(agent, { type: "switch_session", sessionPath: a })).toEqual({ cancelled: false });
    expect((await state(agent))["sessionFile"]).toBe(a);
    expect(await messages(agent)).toEqual(aMessages);
    expect(await ok(agent, { type: "switch_session", sessionPath: b })).toEqual({ cancelled: false });
    expect(await messages(agent)).toEqual(bMessages);

    const fresh = join(dir, "missing.jsonl");
    expect(await ok(agent, { type: "switch_session", sessionPath: fresh })).toEqual({ cancelled: false });
    expect((await state(agent))["sessionFile"]).toBe(fresh);
    expect(await messages(agent)).toEqual([]);
    expect(await ok(agent, { type: "switch_session", sessionPath: b })).toEqual({ cancelled: false });
    expect((await state(agent))["sessionFile"]).toBe(b);
  });

  it("new_session with parentSession records the parent in the new file's header", async () => {
    const parent = (await state(agent))["sessionFile"] as string;
    expect(await ok(agent, { type: "new_session", parentSession: parent })).toEqual({ cancelled: false });
    await runPrompt(agent, "child session");
    const child = (await state(agent))["sessionFile"] as string;
    const header = JSON.parse(readFileSync(child, "utf8").split("\n")[0] as string) as Record<string, unknown>;
    expect(header).toMatchObject({ type: "session", parentSession: parent });
  });
});
