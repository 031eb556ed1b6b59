import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  Api,
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageEventStream,
  Context,
  Model,
  Tool,
  ToolCall,
  ToolResultMessage,
} from "@earendil-works/pi-ai/compat";
import { Type } from "typebox";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  chunkText,
  createOfflineModel,
  DEFAULT_MODEL_PER_PROVIDER,
  createScriptModel,
  findPathsIn,
  loadModelScript,
  loadPiAi,
  ModelResolutionError,
  ModelScript,
  ModelScriptError,
  OFFLINE_API,
  PARLEY_SOURCE_ID,
  type PiAi,
  parseModelScript,
  planOfflineReply,
  registerParleyProviders,
  resolveModels,
  SCRIPT_API,
  SCRIPT_EXHAUSTED_TEXT,
} from "../src/models/index.js";

let pi: PiAi;

beforeAll(async () => {
  pi = await loadPiAi();
  await registerParleyProviders();
});

interface Collected {
  events: AssistantMessageEvent[];
  message: AssistantMessage;
}

async function collect(stream: AssistantMessageEventStream, onEvent?: (e: AssistantMessageEvent) => void): Promise<Collected> {
  const events: AssistantMessageEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    onEvent?.(event);
  }
  return { events, message: await stream.result() };
}

const TOOLS: Tool[] = [
  { name: "read", description: "Read a file", parameters: Type.Object({ path: Type.String() }) },
  { name: "ls", description: "List a directory", parameters: Type.Object({ path: Type.Optional(Type.String()) }) },
];

function userContext(text: string, tools: Tool[] | undefined = TOOLS): Context {
  return { systemPrompt: "You are a helpful coding agent.", messages: [{ role: "user", content: text, timestamp: Date.now() }], tools };
}

function scriptModel(turns: unknown[], settings?: { delayMs?: number }): Model<Api> {
  return createScriptModel(new ModelScript(parseModelScript(JSON.stringify(turns), "test.json")), settings);
}

function types(events: AssistantMessageEvent[]): string[] {
  return events.map((e) => e.type);
}

// ---- script model ------------------------------------------------------------------------------

describe("script model through pi-ai streamSimple", () => {
  it("streams a text turn in several deltas and ends with stop", async () => {
    const text = "Hello there, this is a scripted reply.";
    const model = scriptModel([text]);
    expect(model).toMatchObject({ provider: "parley", id: "script", api: SCRIPT_API, reasoning: false });
    const { events, message } = await collect(pi.streamSimple(model, userContext("hi")));

    const kinds = types(events);
    expect(kinds[0]).toBe("start");
    expect(kinds[1]).toBe("text_start");
    expect(kinds.at(-2)).toBe("text_end");
    expect(kinds.at(-1)).toBe("done");
    const deltas = events.filter((e) => e.type === "text_delta");
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(deltas.map((e) => (e.type === "text_delta" ? e.delta : "")).join("")).toBe(text);

    expect(message.stopReason).toBe("stop");
    expect(message.content).toEqual([{ type: "text", text }]);
    expect(message).toMatchObject({ role: "assistant", api: SCRIPT_API, provider: "parley", model: "script" });
    expect(message.usage.input).toBeGreaterThan(0);
    expect(message.usage.output).toBe(Math.ceil(text.length / 4));
    expect(message.usage.totalTokens).toBe(message.usage.input + message.usage.output);
    expect(message.usage.cost.total).toBe(0);
    const done = events.at(-1);
    expect(done?.type === "done" && done.reason).toBe("stop");
  });

  it("gives every event an immutable snapshot with growing text and usage", async () => {
    const { events } = await collect(pi.streamSimple(scriptModel(["one two three four"]), userContext("hi")));
    const texts = events
      .filter((e) => e.type === "text_delta")
      .map((e) => (e.type === "text_delta" && e.partial.content[0]?.type === "text" ? e.partial.content[0].text : ""));
    expect(texts).toEqual(["one", "one two", "one two three", "one two three four"]);
    const outputs = events.filter((e) => e.type === "text_delta").map((e) => (e.type === "text_delta" ? e.partial.usage.output : 0));
    expect([...outputs].sort((a, b) => a - b)).toEqual(outputs);
  });

  it("streams tool calls with ids, argument deltas and stopReason toolUse", async () => {
    const model = scriptModel([
      {
        text: "Let me look.",
        toolCalls: [
          { name: "read", arguments: { path: "src/index.ts", offset: 10 } },
          { name: "ls", arguments: {} },
        ],
      },
    ]);
    const { events, message } = await collect(pi.streamSimple(model, userContext("look")));
    expect(types(events).filter((t) => t.startsWith("toolcall_") && t !== "toolcall_delta")).toEqual([
      "toolcall_start",
      "toolcall_end",
      "toolcall_start",
      "toolcall_end",
    ]);
    const starts = events.filter((e) => e.type === "toolcall_start");
    for (const start of starts) {
      if (start.type !== "toolcall_start") continue;
      const block = start.partial.content[start.contentIndex];
      expect(block?.type).toBe("toolCall");
      expect(block?.type === "toolCall" && block.id).toMatch(/\S/);
    }
    const jsonFor = (index: number): string => events.map((e) => (e.type === "toolcall_delta" && e.contentIndex === index ? e.delta : "")).join("");
    expect(JSON.parse(jsonFor(1))).toEqual({ path: "src/index.ts", offset: 10 });
    expect(jsonFor(2)).toBe("{}");

    expect(message.stopReason).toBe("toolUse");
    const calls = message.content.filter((b) => b.type === "toolCall");
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ name: "read", arguments: { path: "src/index.ts", offset: 10 } });
    expect(calls[1]).toMatchObject({ name: "ls", arguments: {} });
    expect(new Set(calls.map((c) => (c.type === "toolCall" ? c.id : ""))).size).toBe(2);
    const ends = events.filter((e) => e.type === "toolcall_end");
    expect(ends.map((e) => (e.type === "toolcall_end" ? e.toolCall.id : ""))).toEqual(calls.map((c) => (c.type === "toolCall" ? c.id : "")));
    expect(message.content[0]).toEqual({ type: "text", text: "Let me look." });
  });

  it("consumes one turn per call and then answers (script exhausted)", async () => {
    const model = scriptModel(["first", { toolCalls: [{ name: "ls", arguments: {} }] }]);
    const replies: AssistantMessage[] = [];
    for (let i = 0; i < 4; i++) replies.push(await pi.completeSimple(model, userContext("go")));
    expect(replies[0]?.content).toEqual([{ type: "text", text: "first" }]);
    expect(replies[1]?.stopReason).toBe("toolUse");
    expect(replies[2]?.content).toEqual([{ type: "text", text: SCRIPT_EXHAUSTED_TEXT }]);
    expect(replies[3]?.content).toEqual([{ type: "text", text: SCRIPT_EXHAUSTED_TEXT }]);
    expect(replies[3]?.stopReason).toBe("stop");
  });

  it("keeps the script's cursor when the Model object is copied", async () => {
    const model = scriptModel(["a b c", "d e f"]);
    await pi.completeSimple(model, userContext("1"));
    const copy = JSON.parse(JSON.stringify(model)) as Model<Api>;
    const second = await pi.completeSimple(copy, userContext("2"));
    expect(second.content).toEqual([{ type: "text", text: "d e f" }]);
  });

  it("stops promptly with stopReason aborted when the signal fires mid-reply", async () => {
    const words = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(" ");
    const controller = new AbortController();
    let deltas = 0;
    const { events, message } = await collect(pi.streamSimple(scriptModel([words]), userContext("go"), { signal: controller.signal }), (e) => {
      if (e.type === "text_delta" && ++deltas === 3) controller.abort();
    });
    expect(deltas).toBe(3); // stopped right after the abort: no further delta (no wall-clock bound needed)
    expect(message.stopReason).toBe("aborted");
    expect(message.errorMessage).toMatch(/abort/i);
    const last = events.at(-1);
    expect(last?.type).toBe("error");
    expect(last?.type === "error" && last.reason).toBe("aborted");
    expect(message.content[0]?.type === "text" && message.content[0].text.startsWith("word0 word1")).toBe(true);
  });

  it("aborts during a slow (delayed) stream without waiting for the delay", async () => {
    // The delay runs on vitest's clock, which never moves here: only the abort can end the wait.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const controller = new AbortController();
      const stream = pi.streamSimple(scriptModel(["slow reply here"], { delayMs: 60_000 }), userContext("go"), { signal: controller.signal });
      const collected = collect(stream);
      while (vi.getTimerCount() === 0) await new Promise((resolve) => setImmediate(resolve));
      controller.abort();
      const { message } = await collected;
      expect(message.stopReason).toBe("aborted");
      expect(vi.getTimerCount()).toBe(0); // the delay's timer was cleared, not left to run out
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers an already-aborted call with an aborted message and still consumes the turn", async () => {
    const model = scriptModel(["never shown", "second"]);
    const controller = new AbortController();
    controller.abort();
    const { events, message } = await collect(pi.streamSimple(model, userContext("go"), { signal: controller.signal }));
    expect(types(events)).toEqual(["error"]);
    expect(message.stopReason).toBe("aborted");
    const next = await pi.completeSimple(model, userContext("again"));
    expect(next.content).toEqual([{ type: "text", text: "second" }]);
  });

  it("reports an error message when no script is registered for the model", async () => {
    const stray: Model<Api> = { ...scriptModel([]), baseUrl: "parley-script:inline/nope" };
    const message = await pi.completeSimple(stray, userContext("go"));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toMatch(/--model-script/);
  });
});

describe("chunkText", () => {
  it("splits into word-sized pieces that join back to the text", () => {
    for (const text of ["a b c d", "  leading and trailing  ", "one\ntwo\n\nthree\n", "x", "ab", "two words", "héllo 👋🏽 wörld"]) {
      const pieces = chunkText(text);
      expect(pieces.join("")).toBe(text);
      if (Array.from(text).length >= 3) expect(pieces.length).toBeGreaterThanOrEqual(3);
    }
    expect(chunkText("")).toEqual([]);
  });
});

// ---- script validation -------------------------------------------------------------------------

describe("model script validation", () => {
  const cases: [string, string, RegExp, number | undefined, string | undefined][] = [
    ["not JSON", "[1,", /s\.json: not valid JSON/, undefined, undefined],
    ["not an array", '{"text":"hi"}', /expected a JSON array of assistant turns, got object/, undefined, undefined],
    ["a number turn", '["ok", 42]', /turns\[1\] must be a string or an object .* got number/, 1, undefined],
    ["text not a string", '[{"text": 5}]', /turns\[0\]\.text must be a string, got number/, 0, "text"],
    ["toolCalls not an array", '["a", "b", {"toolCalls": {"name": "ls"}}]', /turns\[2\]\.toolCalls must be an array, got object/, 2, "toolCalls"],
    ["missing name", '[{"toolCalls": [{"arguments": {}}]}]', /turns\[0\]\.toolCalls\[0\]\.name must be a non-empty string/, 0, "toolCalls[0].name"],
    [
      "arguments an array",
      '[{"toolCalls": [{"name": "ls", "arguments": {}}, {"name": "read", "arguments": ["x"]}]}]',
      /turns\[0\]\.toolCalls\[1\]\.arguments must be a JSON object, got array/,
      0,
      "toolCalls[1].arguments",
    ],
    ["unknown turn field", '[{"text": "a", "toolcalls": []}]', /turns\[0\]\.toolcalls is not a known field/, 0, "toolcalls"],
    ["unknown call field", '[{"toolCalls": [{"name": "ls", "args": {}}]}]', /turns\[0\]\.toolCalls\[0\]\.args is not a known field/, 0, "toolCalls[0].args"],
    ["empty turn", '["a", {}]', /turns\[1\] must have "text" and\/or "toolCalls"/, 1, undefined],
    ["null turn", "[null]", /turns\[0\] must be .* got null/, 0, undefined],
  ];
  for (const [name, json, pattern, index, field] of cases) {
    it(`rejects ${name}`, () => {
      let caught: unknown;
      try {
        parseModelScript(json, "s.json");
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ModelScriptError);
      const error = caught as ModelScriptError;
      expect(error.message).toMatch(pattern);
      expect(error.message.startsWith("s.json: ")).toBe(true);
      expect(error.index).toBe(index);
      expect(error.field).toBe(field);
    });
  }

  it("accepts strings, text, tool calls without arguments and an empty script", () => {
    expect(parseModelScript('["hi", {"text": ""}, {"toolCalls": [{"name": "ls"}]}]')).toEqual([
      { text: "hi" },
      { text: "" },
      { toolCalls: [{ name: "ls", arguments: {} }] },
    ]);
    expect(parseModelScript("[]")).toEqual([]);
  });

  it("loads a file relative to cwd and names a missing one", () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-script-"));
    try {
      writeFileSync(join(dir, "turns.json"), '["one", {"text": "two"}]');
      const script = loadModelScript("turns.json", dir);
      expect(script.turns).toHaveLength(2);
      expect(script.file).toBe(join(dir, "turns.json"));
      expect(() => loadModelScript("missing.json", dir)).toThrow(/cannot read model script missing\.json: no such file/);
      writeFileSync(join(dir, "bad.json"), '[{"text": 1}]');
      expect(() => loadModelScript("bad.json", dir)).toThrow(/^bad\.json: turns\[0\]\.text must be a string/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// ---- offline model -----------------------------------------------------------------------------

describe("offline model", () => {
  let dir: string;
  const pkg = {
    name: "demo-app",
    version: "1.2.3",
    description: "A demo",
    scripts: { build: "tsc", test: "vitest" },
    dependencies: { left: "1" },
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "parley-offline-"));
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
    writeFileSync(join(dir, "README.md"), "# Demo App\n\nA small demo for parley.\n\n## Usage\n\nRun it.\n\n## License\n\nMIT\n");
    mkdirSync(join(dir, "src"));
    writeFileSync(join(dir, "src", "index.ts"), 'import { x } from "./x.js";\nexport function main() {}\nexport const VERSION = 1;\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function toolResult(call: { id: string; name: string }, text: string, isError = false): ToolResultMessage {
    return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text }], isError, timestamp: Date.now() };
  }

  /** The offline model's turn that called these tools. */
  function toolUse(...calls: Omit<ToolCall, "type">[]): AssistantMessage {
    return {
      role: "assistant",
      content: calls.map((call) => ({ type: "toolCall", ...call })),
      api: OFFLINE_API,
      provider: "parley",
      model: "offline",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "toolUse",
      timestamp: Date.now(),
    };
  }

  it("calls read for a file the user asks about, then summarises the tool result", async () => {
    const model = createOfflineModel({ cwd: dir });
    expect(model).toMatchObject({ provider: "parley", id: "offline", api: OFFLINE_API, reasoning: false });
    const context = userContext("what's in package.json?");
    const first = await collect(pi.streamSimple(model, context));
    expect(first.message.stopReason).toBe("toolUse");
    const calls = first.message.content.filter((b) => b.type === "toolCall");
    expect(calls).toEqual([{ type: "toolCall", id: expect.any(String), name: "read", arguments: { path: "package.json" } }]);
    expect(first.events.filter((e) => e.type === "text_delta").length).toBeGreaterThanOrEqual(3);
    expect(types(first.events)).toContain("toolcall_delta");

    const call = calls[0];
    if (call?.type !== "toolCall") throw new Error("no tool call");
    context.messages.push(first.message, toolResult(call, readFileSync(join(dir, "package.json"), "utf8")));
    const second = await collect(pi.streamSimple(model, context));
    expect(second.message.stopReason).toBe("stop");
    const text = second.message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text).toContain("package.json");
    expect(text).toContain(`${JSON.stringify(pkg, null, 2).split("\n").length} lines`);
    expect(text).toContain("demo-app@1.2.3");
    expect(text).toMatch(/`name`, `version`, `description`, `scripts`, `dependencies`/);
    expect(text).toMatch(/Scripts: `build`, `test`/);
    expect(second.events.filter((e) => e.type === "text_delta").length).toBeGreaterThanOrEqual(3);
  });

  it("reads several files in order and summarises markdown and source files", () => {
    const context = userContext("read src/index.ts and `README.md`, please");
    const plan = planOfflineReply(context, dir);
    expect(plan.toolCalls).toEqual([
      { name: "read", arguments: { path: "src/index.ts" } },
      { name: "read", arguments: { path: "README.md" } },
    ]);
    const assistant = toolUse({ id: "c1", name: "read", arguments: { path: "src/index.ts" } }, { id: "c2", name: "read", arguments: { path: "README.md" } });
    context.messages.push(
      assistant,
      toolResult({ id: "c1", name: "read" }, readFileSync(join(dir, "src", "index.ts"), "utf8")),
      toolResult({ id: "c2", name: "read" }, readFileSync(join(dir, "README.md"), "utf8")),
    );
    const summary = planOfflineReply(context, dir);
    expect(summary.toolCalls).toBeUndefined();
    expect(summary.text).toMatch(/\*\*src\/index\.ts\*\*: 3 lines\. It exports `main`, `VERSION`, has 1 import/);
    expect(summary.text).toMatch(/\*\*README\.md\*\*: 11 lines\. Its first heading is “Demo App”; sections include `Usage`, `License`/);
  });

  it("reports truncated and failed reads from the tool result", () => {
    const context = userContext("read big.txt");
    const assistant = planOfflineReply(userContext("read package.json"), dir);
    expect(assistant.toolCalls).toHaveLength(1);
    context.messages.push(
      toolUse({ id: "a", name: "read", arguments: { path: "big.txt" } }, { id: "b", name: "read", arguments: { path: "gone.txt" } }),
      toolResult({ id: "a", name: "read" }, "line one\nline two\n\n[Showing lines 1-2 of 5000. Use offset=3 to continue.]"),
      toolResult({ id: "b", name: "read" }, "ENOENT: no such file or directory, access 'gone.txt'", true),
    );
    const text = planOfflineReply(context, dir).text ?? "";
    expect(text).toContain("**big.txt**: 5000 lines (I saw the first 2)");
    expect(text).toContain("**gone.txt**: I couldn't read it (ENOENT");
  });

  it("calls ls for 'list files' and for a named directory, and summarises a listing", () => {
    expect(planOfflineReply(userContext("list files"), dir).toolCalls).toEqual([{ name: "ls", arguments: { path: "." } }]);
    expect(planOfflineReply(userContext("ls"), dir).toolCalls).toEqual([{ name: "ls", arguments: { path: "." } }]);
    expect(planOfflineReply(userContext("what is in src/?"), dir).toolCalls).toEqual([{ name: "ls", arguments: { path: "src" } }]);

    const context = userContext("list files");
    context.messages.push(toolUse({ id: "l", name: "ls", arguments: { path: "." } }), toolResult({ id: "l", name: "ls" }, "package.json\nREADME.md\nsrc/"));
    expect(planOfflineReply(context, dir).text).toContain("The working directory has 1 directory (`src/`) and 2 files (`package.json`, `README.md`).");
  });

  it("explains itself and how to configure a real model otherwise", async () => {
    const message = await pi.completeSimple(createOfflineModel({ cwd: dir }), userContext("hello, who are you?"));
    expect(message.stopReason).toBe("stop");
    const text = message.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    expect(text).toMatch(/offline demo model/);
    for (const hint of ["--provider", "--model", "--api-key", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "what's in package.json?"]) {
      expect(text).toContain(hint);
    }
  });

  it("ignores paths outside the working directory and words that are not files", () => {
    expect(findPathsIn("what's in ../package.json or /etc/passwd or the nothing.txt file?", dir)).toEqual([]);
    expect(findPathsIn(`see ${join(dir, "README.md")}, "package.json" and @src/index.ts.`, dir)).toEqual([
      { path: "README.md", kind: "file" },
      { path: "package.json", kind: "file" },
      { path: "src/index.ts", kind: "file" },
    ]);
    expect(planOfflineReply(userContext("tell me a joke"), dir).toolCalls).toBeUndefined();
  });

  it("answers directly when the session has no read tool", () => {
    const plan = planOfflineReply(userContext("what's in package.json?", []), dir);
    expect(plan.toolCalls).toBeUndefined();
    expect(plan.text).toContain("demo-app@1.2.3");
    expect(plan.text).toContain("This session has no `read` tool");
  });
});

// ---- resolution --------------------------------------------------------------------------------

describe("the built-in model catalogue", () => {
  it("is not loaded by an offline or scripted start-up; local models work without it, the rest waits for loadCatalog()", () => {
    // A fresh process: in this one, other tests have loaded pi-ai already.
    const dist = join(import.meta.dirname, "../dist/models/index.js");
    const script = `
      const m = await import(${JSON.stringify(dist)});
      const out = {};
      const r = await m.resolveModels({}, { env: {}, cwd: process.cwd() });
      out.offline = [r.source, r.catalogReady, m.piAiCatalogLoaded(), r.thinkingLevel, r.thinkingLevelsFor(r.model).join(","), r.findModel("parley", "offline")?.id];
      try { r.availableModels(); out.threw = false; } catch (e) { out.threw = /loadCatalog/.test(e.message); }
      try { r.findModel("anthropic", "claude-opus-4-7"); out.findThrew = false; } catch { out.findThrew = true; }
      await r.loadCatalog();
      out.after = [r.catalogReady, r.availableModels().length, r.findModel("anthropic", "claude-opus-4-7")?.id];
      const cli = await m.resolveModels({ model: "anthropic/claude-opus-5-5" }, { env: {}, cwd: process.cwd() });
      out.cli = cli.catalogReady;
      process.stdout.write(JSON.stringify(out));
    `;
    const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })) as Record<string, unknown>;
    expect(out).toEqual({
      offline: ["offline", false, false, "off", "off", "offline"],
      threw: true,
      findThrew: true,
      after: [true, 1, "claude-opus-4-7"],
      cli: true,
    });
  });

  it("every provider pi-ai reads an API-key variable for has a default here (so key detection needs no catalogue)", async () => {
    const pi = await loadPiAi();
    const saved = process.env;
    // An environment in which every variable is set: findEnvKeys names a provider's variables.
    process.env = new Proxy({}, { get: () => "set", has: () => true }) as NodeJS.ProcessEnv;
    let withKeys: string[];
    try {
      withKeys = pi.getProviders().filter((p) => pi.findEnvKeys(p) !== undefined);
    } finally {
      process.env = saved;
    }
    expect(withKeys.length).toBeGreaterThan(10);
    // pi 1.6 has no default for typesafe either, so neither detects a key for it.
    expect(withKeys.filter((p) => !(p in DEFAULT_MODEL_PER_PROVIDER))).toEqual(["typesafe"]);
  });
});

describe("resolveModels", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "parley-resolve-"));
    writeFileSync(join(dir, "turns.json"), '["scripted"]');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const at = (env: Record<string, string>) => ({ env, cwd: dir });

  it("falls back to the offline model with no flags and no keys", async () => {
    const r = await resolveModels({}, at({}));
    expect(r.source).toBe("offline");
    expect(r.isOffline).toBe(true);
    expect(r.offlineNotice).toMatch(/offline demo model/);
    expect(r.model).toMatchObject({ provider: "parley", id: "offline" });
    expect(r.thinkingLevel).toBe("off");
    expect(r.availableModels().map((m) => `${m.provider}/${m.id}`)).toEqual(["parley/offline"]);
    expect(r.hasAuth(r.model)).toBe(true);
    expect(r.getApiKey("anthropic")).toBeUndefined();
  });

  it("does not read the real process.env when an env is given, and restores it", async () => {
    const before = process.env;
    await resolveModels({}, at({ ANTHROPIC_API_KEY: "k" }));
    expect(process.env).toBe(before);
  });

  it("picks the first provider with an API key in the environment, with pi's default model", async () => {
    const r = await resolveModels({}, at({ OPENAI_API_KEY: "sk-o", ANTHROPIC_API_KEY: "sk-a" }));
    expect(r.source).toBe("env");
    expect(r.isOffline).toBe(false);
    expect(r.offlineNotice).toBeUndefined();
    expect(`${r.model.provider}/${r.model.id}`).toBe("anthropic/claude-opus-5-5");
    expect(r.thinkingLevel).toBe("medium");
    expect(r.getApiKey("anthropic")).toBe("sk-a");
    expect(r.getApiKey("openai")).toBe("sk-o");
    const providers = new Set(r.availableModels().map((m) => m.provider));
    // parley's demo model is not offered beside models that answer.
    expect([...providers].sort()).toEqual(["anthropic", "openai"]);

    const o = await resolveModels({}, at({ OPENAI_API_KEY: "sk-o" }));
    expect(`${o.model.provider}/${o.model.id}`).toBe("openai/gpt-6.2-sol");
    expect(o.thinkingLevel).toBe("medium");
  });

  it("does not auto-select on a GitHub token or ambient AWS credentials", async () => {
    const r = await resolveModels({}, at({ GITHUB_TOKEN: "ghp", AWS_PROFILE: "default" }));
    expect(r.source).toBe("offline");
    // pi-ai 1.6 reads Copilot's key from COPILOT_GITHUB_TOKEN only: a plain GitHub token is no credential.
    expect(r.getApiKey("github-copilot")).toBeUndefined();
  });

  it("uses --provider/--model over environment keys", async () => {
    const r = await resolveModels({ model: "anthropic/claude-sonnet-4-5" }, at({ OPENAI_API_KEY: "sk-o" }));
    expect(r.source).toBe("cli");
    expect(`${r.model.provider}/${r.model.id}`).toBe("anthropic/claude-sonnet-4-5");
    expect(r.warnings.join("\n")).toMatch(/no API key for provider "anthropic"/);

    const keyed = await resolveModels({ provider: "anthropic", model: "claude-sonnet-4-5", apiKey: "cli-key" }, at({ OPENAI_API_KEY: "sk-o" }));
    expect(keyed.warnings).toEqual([]);
    expect(keyed.getApiKey("anthropic")).toBe("cli-key");
    expect(keyed.getApiKey("openai")).toBe("sk-o");
    expect(keyed.hasAuth(keyed.model)).toBe(true);
  });

  it("matches patterns like pi: fuzzy alias, provider prefix, :thinking suffix, --provider alone", async () => {
    const fuzzy = await resolveModels({ provider: "anthropic", model: "sonnet" }, at({}));
    expect(fuzzy.model.id).toBe("claude-sonnet-5-5");
    const dated = await resolveModels({ provider: "Anthropic", model: "anthropic/claude-sonnet-4-20250514" }, at({}));
    expect(dated.model.id).toBe("claude-sonnet-4-20250514");
    const suffixed = await resolveModels({ model: "anthropic/claude-opus-4-7:xhigh" }, at({}));
    expect(suffixed.model.id).toBe("claude-opus-4-7");
    expect(suffixed.thinkingLevel).toBe("xhigh");
    const overridden = await resolveModels({ model: "anthropic/claude-opus-4-7:xhigh", thinking: "low" }, at({}));
    expect(overridden.thinkingLevel).toBe("low");
    const alone = await resolveModels({ provider: "openai" }, at({}));
    expect(`${alone.model.provider}/${alone.model.id}`).toBe("openai/gpt-6.2-sol");
    const local = await resolveModels({ model: "parley/offline" }, at({ ANTHROPIC_API_KEY: "k" }));
    expect(local.isOffline).toBe(true);
    expect(local.source).toBe("cli");
    expect(local.offlineNotice).toBeUndefined();
  });

  it("lets --model-script win over everything", async () => {
    const r = await resolveModels(
      { modelScript: "turns.json", provider: "anthropic", model: "sonnet", apiKey: "k", thinking: "high" },
      at({ ANTHROPIC_API_KEY: "k" }),
    );
    expect(r.source).toBe("script");
    expect(r.model).toMatchObject({ provider: "parley", id: "script", api: SCRIPT_API });
    expect(r.isOffline).toBe(false);
    expect(r.thinkingLevel).toBe("off");
    expect(r.warnings.join("\n")).toMatch(/--provider, --model, --api-key are ignored/);
    expect(r.warnings.join("\n")).toMatch(/does not support thinking/);
    expect(r.availableModels()[0]).toBe(r.model);
    expect(r.findModel("parley", "script")).toBe(r.model);
    const reply = await pi.completeSimple(r.model, userContext("go"));
    expect(reply.content).toEqual([{ type: "text", text: "scripted" }]);
    expect(r.script?.consumed).toBe(1);
  });

  it("rejects a bad script before anything else", async () => {
    writeFileSync(join(dir, "bad.json"), '["ok", {"toolCalls": "ls"}]');
    await expect(resolveModels({ modelScript: "bad.json" }, at({}))).rejects.toThrow(/bad\.json: turns\[1\]\.toolCalls must be an array/);
  });

  it("reports unknown providers and models with close matches", async () => {
    await expect(resolveModels({ provider: "antropic", model: "x" }, at({}))).rejects.toThrow(/Unknown provider "antropic"\. Did you mean "anthropic"\?/);
    // As in pi: an unknown id for a known provider is used as a custom id of that provider, with
    // a warning that still names the close matches (a typo is easy to spot).
    const custom = await resolveModels({ provider: "anthropic", model: "claude-sonet-4-5" }, at({}));
    expect(custom.model).toMatchObject({ provider: "anthropic", id: "claude-sonet-4-5", name: "claude-sonet-4-5", api: "anthropic-messages" });
    expect(custom.warnings.join("\n")).toMatch(
      /"anthropic\/claude-sonet-4-5" is not in the catalogue; using it as a custom model id of anthropic \(did you mean: .*anthropic\/claude-sonnet-4-5/,
    );
    const withLevel = await resolveModels({ model: "anthropic/claude-new-model:low" }, at({}));
    expect(withLevel.model.id).toBe("claude-new-model");
    // Without a provider there is nothing to base a custom model on: an error with suggestions.
    const error = await resolveModels({ model: "claude-opsu-4-7" }, at({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelResolutionError);
    expect((error as ModelResolutionError).message).toMatch(/anthropic\/claude-opus-4-7/);
    await expect(resolveModels({ apiKey: "k" }, at({}))).rejects.toThrow(/--api-key needs a model/);
  });

  it("clamps the thinking level to the model and says so", async () => {
    const r = await resolveModels({ model: "anthropic/claude-sonnet-4-5", thinking: "xhigh" }, at({}));
    expect(r.thinkingLevel).toBe("high");
    expect(r.warnings.join("\n")).toMatch(/does not support thinking level "xhigh"; using "high"/);
    const off = await resolveModels({ thinking: "high" }, at({}));
    expect(off.thinkingLevel).toBe("off");
  });

  it("lists thinking levels per model and finds models exactly", async () => {
    const r = await resolveModels({}, at({}));
    const get = (provider: string, id: string): Model<Api> => {
      const m = r.findModel(provider, id);
      if (!m) throw new Error(`${provider}/${id} missing`);
      return m;
    };
    expect(r.thinkingLevelsFor(r.model)).toEqual(["off"]);
    expect(r.thinkingLevelsFor(get("anthropic", "claude-opus-4-7"))).toEqual(["off", "minimal", "low", "medium", "high", "xhigh", "max"]);
    expect(r.thinkingLevelsFor(get("anthropic", "claude-sonnet-4-5"))).toEqual(["off", "minimal", "low", "medium", "high"]);
    expect(r.thinkingLevelsFor(get("openai", "gpt-6.2-sol"))).not.toContain("off");
    expect(r.clampThinkingLevel(get("openai", "gpt-6.2-sol"), "off")).toBe("low");
    expect(r.findModel("parley", "offline")).toBe(r.offlineModel);
    expect(r.findModel("parley", "script")).toBeUndefined();
    expect(r.findModel("anthropic", "nope")).toBeUndefined();
  });

  it("prefers providers with credentials for a fuzzy pattern that spans providers", async () => {
    // pi's rule alone (no keys anywhere): the highest matching alias id across all providers
    const none = await resolveModels({}, at({}));
    expect(none.matchModel("opus-4-7").model.provider).toBe("amazon-bedrock");
    const keyed = await resolveModels({}, at({ ANTHROPIC_API_KEY: "k" }));
    expect(keyed.matchModel("opus-4-7").model).toMatchObject({ provider: "anthropic", id: "claude-opus-4-7" });
    const cli = await resolveModels({ model: "opus-4-7" }, at({ ANTHROPIC_API_KEY: "k" }));
    expect(`${cli.model.provider}/${cli.model.id}`).toBe("anthropic/claude-opus-4-7");
  });

  it("registers the parley APIs idempotently and again after they were removed", async () => {
    await registerParleyProviders();
    await registerParleyProviders();
    expect(pi.getApiProviders().filter((p) => p.api === SCRIPT_API || p.api === OFFLINE_API)).toHaveLength(2);
    pi.unregisterApiProviders(PARLEY_SOURCE_ID);
    expect(pi.getApiProvider(SCRIPT_API)).toBeUndefined();
    await registerParleyProviders();
    expect(pi.getApiProvider(SCRIPT_API)).toBeDefined();
    expect(pi.getApiProvider(OFFLINE_API)).toBeDefined();
  });
});

describe("the start-up model, as pi chooses it (chooseStartup)", () => {
  const dir = mkdtempSync(join(tmpdir(), "parley-startup-"));
  const at = (env: Record<string, string>, authKey?: (provider: string) => string | undefined) => ({ env, cwd: dir, ...(authKey ? { authKey } : {}) });
  const ref = (m: { provider: string; id: string }) => `${m.provider}/${m.id}`;

  it("an exact id comes first: --model gpt-5 with an OpenAI key is gpt-5, never gpt-5.5-pro", async () => {
    const r = await resolveModels({}, at({ OPENAI_API_KEY: "sk-test" }));
    const chosen = await r.chooseStartup({ model: "gpt-5" });
    expect(ref(chosen.model)).toBe("openai/gpt-5");
    expect(chosen.source).toBe("cli");
  });

  it("settings' default, then --models, then keys (auth.json included), then extension providers, then offline", async () => {
    const none = await resolveModels({}, at({}));
    const offline = await none.chooseStartup({});
    expect(ref(offline.model)).toBe("parley/offline");
    expect(offline.offlineNotice).toMatch(/offline demo model/);
    expect(ref((await none.chooseStartup({ defaultProvider: "anthropic", defaultModel: "claude-sonnet-4-5" })).model)).toBe("anthropic/claude-sonnet-4-5");
    // As in pi, --models patterns match the models that have credentials.
    expect((await none.chooseStartup({ scoped: ["claude-sonnet-4-5"] })).model.provider).toBe("parley");
    const keyed = await resolveModels({}, at({ ANTHROPIC_API_KEY: "sk-ant-test" }));
    const scoped = await keyed.chooseStartup({
      scoped: ["nothing-matches-this", "anthropic/claude-sonnet-4-5:low"],
      defaultProvider: "openai",
      defaultModel: "gpt-5",
    });
    expect(ref(scoped.model)).toBe("anthropic/claude-sonnet-4-5");
    expect(scoped.thinkingLevel).toBe("low");
    expect(ref((await keyed.chooseStartup({ scoped: ["anthropic/*sonnet-4-5*"] })).model)).toMatch(/^anthropic\/claude-sonnet-4-5/);

    const fromAuth = await resolveModels(
      {},
      at({}, (p) => (p === "openai" ? "sk-from-auth-json" : undefined)),
    );
    expect(ref((await fromAuth.chooseStartup({})).model)).toBe(`openai/${DEFAULT_MODEL_PER_PROVIDER["openai"]}`);
    expect(fromAuth.getApiKey("openai")).toBe("sk-from-auth-json");

    const withExtension = await resolveModels({}, at({}));
    const extensionModel = { ...withExtension.offlineModel, provider: "fixture", id: "echo-1", api: "fixture-api" } as typeof withExtension.offlineModel;
    withExtension.setExtraModels({ models: () => [extensionModel], hasAuth: () => true });
    const chosen = await withExtension.chooseStartup({});
    expect(ref(chosen.model)).toBe("fixture/echo-1");
    expect(chosen.offlineNotice).toBeUndefined();
    expect(ref((await withExtension.chooseStartup({ provider: "fixture", model: "echo-1" })).model)).toBe("fixture/echo-1");
    expect(ref((await withExtension.chooseStartup({ model: "fixture/echo-1" })).model)).toBe("fixture/echo-1");
  });

  it("--api-key needs a model, as in pi", async () => {
    const r = await resolveModels({}, at({}));
    await expect(r.chooseStartup({ apiKey: "k" })).rejects.toThrow(/--api-key requires a model/);
  });
});
