/**
 * pi's example extensions that gate, observe and extend the agent loop, loaded unmodified, driven
 * by a scripted model through the real CLI; plus a fixture (written against pi's types) for the
 * hooks no example covers on its own.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PARLEY_BIN, PI_EXAMPLES, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";
import {
  AGENT_FIXTURES,
  SLOW,
  call,
  messages,
  msg,
  notes,
  processRegistry,
  runPrompt,
  state,
  tempDir,
  textOf,
  uiRequests,
  writeScript,
  type Msg,
} from "./fixtures/agent/harness.js";
import { quietFor } from "./helpers/waits.js";

const procs = processRegistry();
const ex = (name: string) => join(PI_EXAMPLES, name);
const HOOKS = join(AGENT_FIXTURES, "hooks.ts");

/** Waits for the next dialog of `method` from `from` on. */
const dialog = (agent: AgentProcess, method: string, from: number) =>
  agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === method, 10_000, from);
const answer = (agent: AgentProcess, request: Rec, fields: Record<string, unknown>) =>
  agent.send({ type: "extension_ui_response", id: request["id"], ...fields });
const toolEnds = (records: Rec[]) => records.filter((r) => r.type === "tool_execution_end");
const noErrors = (agent: AgentProcess) => expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_SYSTEM: "/dev/null" } });
}
function gitRepo(): string {
  const dir = tempDir("parley-repo-");
  git(dir, "init", "-q");
  git(dir, "config", "user.email", "test@example.com");
  git(dir, "config", "user.name", "Test");
  git(dir, "config", "commit.gpgsign", "false");
  writeFileSync(join(dir, "README.md"), "# repo\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "initial");
  return dir;
}

describe("permission-gate.ts", () => {
  it("a dangerous bash call opens the select dialog: No blocks it with the reason, Yes runs it; a safe call asks nothing", async () => {
    const cwd = tempDir();
    const dangerous = "rm -rf ./nonexistent-dir-xyz && touch ran-marker";
    const script = writeScript([
      call("bash", { command: dangerous }),
      "blocked, moving on",
      call("bash", { command: dangerous }),
      call("bash", { command: "echo safe > safe-marker" }),
      "all done",
    ]);
    const agent = procs.parley(["--model-script", script, "-e", ex("permission-gate.ts")], { cwd });

    // Block.
    let from = agent.records.length;
    await agent.request({ type: "prompt", message: "clean up" });
    const ask = await dialog(agent, "select", from);
    expect(ask).toMatchObject({ title: expect.stringContaining(dangerous), options: ["Yes", "No"] });
    answer(agent, ask, { value: "No" });
    await agent.waitFor((r) => r.type === "agent_settled", 10_000, from);
    let run = agent.records.slice(from);
    const blocked = toolEnds(run)[0] as Rec;
    expect(blocked).toMatchObject({ toolName: "bash", isError: true });
    expect(textOf(blocked["result"])).toContain("Blocked by user");
    const result = msg(run.find((r) => r.type === "message_end" && msg(r).role === "toolResult") as Rec);
    expect(result).toMatchObject({ role: "toolResult", toolName: "bash", isError: true });
    expect(textOf(result)).toContain("Blocked by user");
    expect(existsSync(join(cwd, "ran-marker"))).toBe(false);
    expect(textOf(msg(run.filter((r) => r.type === "message_end").at(-1) as Rec))).toBe("blocked, moving on");

    // Allow; then a harmless command goes through without a dialog.
    from = agent.records.length;
    await agent.request({ type: "prompt", message: "really clean up" });
    const ask2 = await dialog(agent, "select", from);
    answer(agent, ask2, { value: "Yes" });
    await agent.waitFor((r) => r.type === "agent_settled", 10_000, from);
    run = agent.records.slice(from);
    expect(toolEnds(run).map((r) => [r["isError"]])).toEqual([[false], [false]]);
    expect(existsSync(join(cwd, "ran-marker"))).toBe(true);
    expect(existsSync(join(cwd, "safe-marker"))).toBe(true);
    expect(uiRequests(agent, "select", from)).toHaveLength(1);
    noErrors(agent);
  });
});

describe("protected-paths.ts", () => {
  it("a write to .env is blocked with the reason; the file is not created; other writes pass", async () => {
    const cwd = tempDir();
    const script = writeScript([
      {
        toolCalls: [
          { name: "write", arguments: { path: ".env", content: "SECRET=1\n" } },
          { name: "write", arguments: { path: "ok.txt", content: "fine\n" } },
        ],
      },
      "done",
    ]);
    const agent = procs.parley(["--model-script", script, "-e", ex("protected-paths.ts")], { cwd });
    const run = await runPrompt(agent, "write files");
    const ends = toolEnds(run);
    expect(ends.map((r) => [r["toolName"], r["isError"]])).toEqual([
      ["write", true],
      ["write", false],
    ]);
    expect(textOf(ends[0]?.["result"])).toContain('Path ".env" is protected');
    expect(existsSync(join(cwd, ".env"))).toBe(false);
    expect(readFileSync(join(cwd, "ok.txt"), "utf8")).toBe("fine\n");
    expect(uiRequests(agent, "notify")).toEqual([expect.objectContaining({ message: "Blocked write to protected path: .env", notifyType: "warning" })]);
    noErrors(agent);
  });
});

describe("confirm-destructive.ts", () => {
  it("confirms new_session, switch_session and fork; declining cancels each", async () => {
    const dir = tempDir("parley-sessions-");
    const script = writeScript(["reply alpha", "reply beta"]);
    const agent = procs.raw(["--mode", "rpc", "--session-dir", dir, "--model-script", script, "-e", ex("confirm-destructive.ts")], { cwd: tempDir() });
    await runPrompt(agent, "alpha");
    const a = (await state(agent))["sessionFile"] as string;

    // new_session: decline, then accept.
    let from = agent.records.length;
    agent.send({ type: "new_session", id: "ns-1" });
    let ask = await dialog(agent, "confirm", from);
    expect(ask).toMatchObject({ title: "Clear session?", message: "This will delete all messages in the current session." });
    answer(agent, ask, { confirmed: false });
    expect((await agent.response("ns-1"))["data"]).toEqual({ cancelled: true });
    expect(notes(agent, from)).toContain("Clear cancelled");
    expect((await state(agent))["sessionFile"]).toBe(a);
    from = agent.records.length;
    agent.send({ type: "new_session", id: "ns-2" });
    answer(agent, await dialog(agent, "confirm", from), { confirmed: true });
    expect((await agent.response("ns-2"))["data"]).toEqual({ cancelled: false });
    await runPrompt(agent, "beta");
    const b = (await state(agent))["sessionFile"] as string;
    expect(b).not.toBe(a);

    // switch_session with user messages here: decline, then accept.
    from = agent.records.length;
    agent.send({ type: "switch_session", id: "sw-1", sessionPath: a });
    ask = await dialog(agent, "confirm", from);
    expect(ask).toMatchObject({ title: "Switch session?" });
    answer(agent, ask, { confirmed: false });
    expect((await agent.response("sw-1"))["data"]).toEqual({ cancelled: true });
    expect((await state(agent))["sessionFile"]).toBe(b);
    from = agent.records.length;
    agent.send({ type: "switch_session", id: "sw-2", sessionPath: a });
    answer(agent, await dialog(agent, "confirm", from), { confirmed: true });
    expect((await agent.response("sw-2"))["data"]).toEqual({ cancelled: false });
    expect((await state(agent))["sessionFile"]).toBe(a);
    // The first run recorded the system prompt (no text) first, as pi 1.6 does.
    expect((await messages(agent)).map((m) => textOf(m))).toEqual(["", "alpha", "reply alpha"]);

    // fork: the select names the entry; "No" cancels, "Yes" forks.
    const [forkable] = ((await agent.request({ type: "get_fork_messages" }))["data"] as { messages: { entryId: string }[] }).messages;
    from = agent.records.length;
    agent.send({ type: "fork", id: "fk-1", entryId: forkable?.entryId });
    ask = await dialog(agent, "select", from);
    expect(ask).toMatchObject({ title: `Fork from entry ${forkable?.entryId.slice(0, 8)}?`, options: ["Yes, create fork", "No, stay in current session"] });
    answer(agent, ask, { value: "No, stay in current session" });
    expect((await agent.response("fk-1"))["data"]).toMatchObject({ cancelled: true });
    expect((await state(agent))["sessionFile"]).toBe(a);
    from = agent.records.length;
    agent.send({ type: "fork", id: "fk-2", entryId: forkable?.entryId });
    answer(agent, await dialog(agent, "select", from), { value: "Yes, create fork" });
    expect((await agent.response("fk-2"))["data"]).toEqual({ text: "alpha", cancelled: false });
    expect((await state(agent))["sessionFile"]).not.toBe(a);
    // Forked before the first user message: only the system message the first run recorded before it (as pi 1.6).
    expect((await messages(agent)).map((m) => m.role)).toEqual(["system"]);
    noErrors(agent);
  });
});

describe("dirty-repo-guard.ts and git-checkpoint.ts in a temp git repo", () => {
  it("dirty-repo-guard: asks only when the tree is dirty; declining cancels new_session", async () => {
    const repo = gitRepo();
    const agent = procs.parley(["--model-script", writeScript(["ok"]), "-e", ex("dirty-repo-guard.ts")], { cwd: repo });
    // Clean: no dialog.
    let from = agent.records.length;
    expect((await agent.request({ type: "new_session" }))["data"]).toEqual({ cancelled: false });
    expect(uiRequests(agent, "select", from)).toEqual([]);
    // Dirty: select; decline cancels, accept proceeds.
    writeFileSync(join(repo, "README.md"), "# changed\n");
    writeFileSync(join(repo, "new.txt"), "untracked\n");
    from = agent.records.length;
    agent.send({ type: "new_session", id: "dirty-1" });
    const ask = await dialog(agent, "select", from);
    expect(ask).toMatchObject({ title: "You have 2 uncommitted file(s). new session anyway?", options: ["Yes, proceed anyway", "No, let me commit first"] });
    answer(agent, ask, { value: "No, let me commit first" });
    expect((await agent.response("dirty-1"))["data"]).toEqual({ cancelled: true });
    expect(uiRequests(agent, "notify", from)).toEqual([expect.objectContaining({ message: "Commit your changes first", notifyType: "warning" })]);
    from = agent.records.length;
    agent.send({ type: "new_session", id: "dirty-2" });
    answer(agent, await dialog(agent, "select", from), { value: "Yes, proceed anyway" });
    expect((await agent.response("dirty-2"))["data"]).toEqual({ cancelled: false });
    noErrors(agent);
  });

  it("git-checkpoint: runs git on each turn without error; the working tree is untouched by it; fork still works", async () => {
    const repo = gitRepo();
    const script = writeScript([call("write", { path: "feature.txt", content: "v1\n" }), "written"]);
    const agent = procs.parley(["--model-script", script, "-e", ex("git-checkpoint.ts")], { cwd: repo });
    await runPrompt(agent, "write the feature");
    noErrors(agent);
    expect(readFileSync(join(repo, "feature.txt"), "utf8")).toBe("v1\n");
    // `git stash create` makes a commit object but changes neither the tree nor the stash list.
    expect(git(repo, "status", "--porcelain")).toBe("?? feature.txt\n");
    expect(git(repo, "stash", "list")).toBe("");
    // Checkpoints are cleared at agent_end, so fork asks nothing and succeeds.
    const [forkable] = ((await agent.request({ type: "get_fork_messages" }))["data"] as { messages: { entryId: string }[] }).messages;
    const from = agent.records.length;
    const res = await agent.request({ type: "fork", entryId: forkable?.entryId });
    expect(res["data"]).toEqual({ text: "write the feature", cancelled: false });
    expect(uiRequests(agent, "select", from)).toEqual([]);
    noErrors(agent);
  });
});

describe("ctx.sessionManager", () => {
  it("has every method of pi's ReadonlySessionManager", async () => {
    const dir = tempDir("parley-sessions-");
    const agent = procs.raw(
      ["--mode", "rpc", "--session-dir", dir, "--model-script", writeScript(["hi"]), "-e", join(AGENT_FIXTURES, "session-manager-probe.ts")],
      { cwd: tempDir() },
    );
    await runPrompt(agent, "hello");
    const { leafId } = (await agent.request({ type: "get_entries" }))["data"] as { leafId: string };
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/sm-probe" });
    const report = JSON.parse(notes(agent, from)[0] as string) as Record<string, unknown>;
    expect(report).toEqual({ missing: [], leafEntryId: leafId, leafIsEntry: true, label: null, treeRoots: 1, branch: 5, entries: 5, sessionDir: "string" });
    noErrors(agent);
  });
});

describe("tool examples: hello.ts and todo.ts", () => {
  it("scripted calls reach the extension tools; todo keeps its state across calls and prompts, and resets with a new session", async () => {
    const script = writeScript([
      {
        toolCalls: [
          { name: "hello", arguments: { name: "World" } },
          { name: "todo", arguments: { action: "add", text: "buy milk" } },
        ],
      },
      call("todo", { action: "add", text: "walk dog" }),
      "added",
      call("todo", { action: "toggle", id: 1 }),
      call("todo", { action: "list" }),
      call("todo", { action: "explode" }),
      "listed",
      call("todo", { action: "list" }),
      "empty",
    ]);
    const agent = procs.parley(["--model-script", script, "-e", ex("hello.ts"), "-e", ex("todo.ts")]);

    let run = await runPrompt(agent, "greet and add todos");
    let ends = toolEnds(run);
    expect(ends.map((r) => [r["toolName"], r["isError"]])).toEqual([
      ["hello", false],
      ["todo", false],
      ["todo", false],
    ]);
    expect(ends[0]?.["result"]).toEqual({ content: [{ type: "text", text: "Hello, World!" }], details: { greeted: "World" } });
    expect(textOf(ends[1]?.["result"])).toBe("Added todo #1: buy milk");
    expect(textOf(ends[2]?.["result"])).toBe("Added todo #2: walk dog");

    run = await runPrompt(agent, "toggle and list");
    ends = toolEnds(run);
    expect(ends.map((r) => textOf(r["result"]))[0]).toBe("Todo #1 completed");
    expect(textOf(ends[1]?.["result"])).toBe("[x] #1: buy milk\n[ ] #2: walk dog");
    expect((ends[1]?.["result"] as { details: unknown }).details).toEqual({
      action: "list",
      todos: [
        { id: 1, text: "buy milk", done: true },
        { id: 2, text: "walk dog", done: false },
      ],
      nextId: 3,
    });
    // An action outside the schema's enum is an error result, not a crash.
    expect(ends[2]).toMatchObject({ toolName: "todo", isError: true });
    expect(textOf(ends[2]?.["result"])).toMatch(/action/);
    // The details are what the session keeps (todo reconstructs from them).
    const results = (await messages(agent)).filter((m: Msg) => m.role === "toolResult" && m.toolName === "todo");
    expect(results).toHaveLength(5);

    // /todos needs ctx.ui.custom (a TUI feature): in RPC mode it resolves undefined, nothing breaks.
    expect((await agent.request({ type: "prompt", message: "/todos" }))["success"]).toBe(true);

    // A new session starts with an empty list (session_start reconstructs from the new branch).
    expect((await agent.request({ type: "new_session" }))["data"]).toEqual({ cancelled: false });
    run = await runPrompt(agent, "list");
    expect(textOf(toolEnds(run)[0]?.["result"])).toBe("No todos");
    noErrors(agent);
  });
});

describe("loop hooks: input, before_agent_start, context, tool_result, message_end", () => {
  it("input: transform rewrites the prompt, handled swallows it (pi's input-transform.ts and a fixture)", async () => {
    const agent = procs.parley(["--model-script", writeScript(["one", "two"]), "-e", HOOKS, "-e", ex("input-transform.ts")]);
    let run = await runPrompt(agent, "shout make it loud");
    // The user's message (the run's first message_end is the system prompt it recorded, as in pi 1.6).
    expect(textOf(msg(run.find((r) => r.type === "message_end" && msg(r).role === "user") as Rec))).toBe("MAKE IT LOUD");
    run = await runPrompt(agent, "?quick what is rpc");
    expect(textOf(msg(run.find((r) => r.type === "message_end") as Rec))).toBe("Respond briefly in 1-2 sentences: what is rpc");

    const from = agent.records.length;
    expect((await agent.request({ type: "prompt", message: "swallow" }))["success"]).toBe(true);
    expect((await agent.request({ type: "prompt", message: "ping" }))["success"]).toBe(true);
    await agent.waitFor((r) => r["method"] === "notify" && r["message"] === "pong", 5000, from);
    expect(agent.records.slice(from).some((r) => r.type === "agent_start")).toBe(false);
    expect((await messages(agent)).map((m) => textOf(m))).toEqual(["", "MAKE IT LOUD", "one", "Respond briefly in 1-2 sentences: what is rpc", "two"]);
    noErrors(agent);
  });

  it("input: a prompt handled by an extension does not make the next prompt look 'already processing'", async () => {
    const agent = procs.parley(["--model-script", writeScript(["answered"]), "-e", ex("input-transform.ts")]);
    await agent.request({ type: "get_state" });
    const from = agent.records.length;
    // Both arrive together, as a client that types fast would send them.
    agent.sendRaw('{"type":"prompt","id":"in-1","message":"ping"}\n{"type":"prompt","id":"in-2","message":"hello"}\n');
    expect((await agent.response("in-1"))["success"]).toBe(true);
    const second = await agent.response("in-2");
    expect(second, JSON.stringify(second)).toMatchObject({ success: true });
    await agent.waitFor((r) => r.type === "agent_settled", 10_000, from);
    expect((await messages(agent)).map((m) => textOf(m))).toEqual(["", "hello", "answered"]);
  });

  it("before_agent_start: a message is injected after the prompt, persisted, and the model reads it", async () => {
    const agent = procs.parley(["--model-script", writeScript(["plain", "with note"]), "-e", HOOKS]);
    const plain = await runPrompt(agent, "same text #noinj");
    await agent.request({ type: "new_session" });
    const run = await runPrompt(agent, "same text #inject");
    const order = run.filter((r) => r.type === "message_end").map((r) => msg(r).role);
    // After the system prompt the run recorded (as pi 1.6).
    expect(order).toEqual(["system", "user", "custom", "assistant"]);
    const custom = msg(run.filter((r) => r.type === "message_end")[2] as Rec);
    expect(custom).toMatchObject({ role: "custom", customType: "hooks-note", content: "note injected by hooks", display: true, details: { from: "hooks" } });
    expect((await messages(agent)).map((m) => m.role)).toEqual(["system", "user", "custom", "assistant"]);
    const input = (records: Rec[]) =>
      (msg(records.find((r) => r.type === "message_end" && msg(r).role === "assistant") as Rec)["usage"] as { input: number }).input;
    expect(input(run)).toBeGreaterThan(input(plain));
  });

  it("before_agent_start: pirate.ts's system prompt reaches the model", async () => {
    const agent = procs.parley(["--model-script", writeScript(["a", "b"]), "-e", ex("pirate.ts")]);
    const input = (records: Rec[]) =>
      (msg(records.find((r) => r.type === "message_end" && msg(r).role === "assistant") as Rec)["usage"] as { input: number }).input;
    // Another process for the plain run: a new session would load pirate.ts again, its mode off (as in pi).
    const plainAgent = procs.parley(["--model-script", writeScript(["a"]), "-e", ex("pirate.ts")]);
    const plain = await runPrompt(plainAgent, "same");
    await agent.request({ type: "prompt", message: "/pirate" });
    const pirate = await runPrompt(agent, "same");
    // The pirate paragraph is ~520 characters: ~130 tokens at the script model's 4 chars/token.
    expect(input(pirate) - input(plain)).toBeGreaterThan(100);
    expect(input(pirate) - input(plain)).toBeLessThan(200);
    expect(notes(agent)).toContain("Arrr! Pirate mode enabled!");
  });

  it("ctx.getSystemPrompt() sees pirate.ts's change in a later before_agent_start handler and during the run", async () => {
    const agent = procs.parley(["--model-script", writeScript(["a"]), "-e", ex("pirate.ts"), "-e", HOOKS]);
    await agent.request({ type: "prompt", message: "/pirate" });
    const from = agent.records.length;
    await runPrompt(agent, "arr");
    expect(notes(agent, from)).toEqual(["before_agent_start pirate: event=true ctx=true", "turn_start pirate: ctx=true"]);
  });

  it("context: the model reads the altered context; the session keeps the real one", async () => {
    const agent = procs.parley(["--model-script", writeScript(["small", "big"]), "-e", HOOKS]);
    const input = (records: Rec[]) =>
      (msg(records.find((r) => r.type === "message_end" && msg(r).role === "assistant") as Rec)["usage"] as { input: number }).input;
    const small = await runPrompt(agent, "q");
    await agent.request({ type: "prompt", message: "/bloat" });
    const big = await runPrompt(agent, "q");
    // 40,000 extra characters ≈ 10,000 tokens (plus the first exchange, a few tokens).
    expect(input(big) - input(small)).toBeGreaterThan(9_900);
    expect(input(big) - input(small)).toBeLessThan(10_200);
    const list = await messages(agent);
    expect(list.map((m) => textOf(m))).toEqual(["", "q", "small", "q", "big"]);
    expect(JSON.stringify(list)).not.toContain("xxxxxxxxxx");
  });

  it("tool_result rewrites a result (events, message and session agree); message_end replaces a message", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "secret.txt"), "the real secret\n");
    writeFileSync(join(cwd, "public.txt"), "public text\n");
    const script = writeScript([
      {
        toolCalls: [
          { name: "read", arguments: { path: "secret.txt" } },
          { name: "read", arguments: { path: "public.txt" } },
        ],
      },
      "please REWRITE-ME now",
    ]);
    const agent = procs.parley(["--model-script", script, "-e", HOOKS], { cwd });
    const run = await runPrompt(agent, "read both");
    // The two reads run in parallel, so their end events may come in either order: match by call id.
    const idOf = (path: string) => run.find((r) => r.type === "tool_execution_start" && (r["args"] as { path?: string }).path === path)?.["toolCallId"];
    const endOf = (path: string) => toolEnds(run).find((r) => r["toolCallId"] === idOf(path));
    expect(endOf("secret.txt")).toMatchObject({
      toolName: "read",
      isError: false,
      result: { content: [{ type: "text", text: "[redacted by hooks]" }], details: { redacted: true } },
    });
    expect(textOf(endOf("public.txt")?.["result"])).toContain("public text");
    const results = run.filter((r) => r.type === "message_end" && msg(r).role === "toolResult").map(msg);
    expect(results.map((m) => textOf(m))).toEqual(["[redacted by hooks]", expect.stringContaining("public text")]);
    expect(JSON.stringify(run)).not.toContain("the real secret");

    const final = run.filter((r) => r.type === "message_end").at(-1) as Rec;
    expect(textOf(msg(final))).toBe("please rewritten by hooks now");
    expect(textOf((run.find((r) => r.type === "turn_end" && (r["toolResults"] as unknown[]).length === 0) as Rec)["message"])).toBe(
      "please rewritten by hooks now",
    );
    expect((await agent.request({ type: "get_last_assistant_text" }))["data"]).toEqual({ text: "please rewritten by hooks now" });
    const list = await messages(agent);
    expect(textOf(list.at(-1))).toBe("please rewritten by hooks now");
    expect(list.filter((m) => m.role === "toolResult").map((m) => textOf(m))[0]).toBe("[redacted by hooks]");
    noErrors(agent);
  });
});

describe("observers: rpc-demo.ts, status-line.ts, titlebar-spinner.ts, model-status.ts", () => {
  it("see agent_start/turn_start/turn_end/agent_end: their setStatus and setTitle records appear in step", async () => {
    const cwd = tempDir();
    const long = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ");
    const script = writeScript([call("bash", { command: "echo hi" }), long]);
    const agent = procs.parley(["--model-script", script, "-e", ex("rpc-demo.ts"), "-e", ex("status-line.ts"), "-e", ex("titlebar-spinner.ts")], {
      cwd,
      env: SLOW,
    });
    await agent.request({ type: "get_state" });
    // Start-up: rpc-demo's title, widget and status; status-line's "Ready".
    expect(uiRequests(agent, "setTitle").map((r) => r["title"])).toEqual(["pi RPC Demo"]);
    expect(uiRequests(agent, "setWidget")).toEqual([
      expect.objectContaining({ widgetKey: "rpc-demo", widgetLines: ["--- RPC Extension UI Demo ---", "Loaded and ready."] }),
    ]);
    const statuses = (key: string, from = 0) =>
      uiRequests(agent, "setStatus", from)
        .filter((r) => r["statusKey"] === key)
        .map((r) => r["statusText"]);
    expect(statuses("rpc-demo")).toEqual(["Turns: 0"]);
    expect(statuses("status-demo")).toEqual(["Ready"]);

    const from = agent.records.length;
    const run = await runPrompt(agent, "go");
    expect(statuses("rpc-demo", from)).toEqual(["Turn 1 running...", "Turn 1 done", "Turn 2 running...", "Turn 2 done"]);
    expect(statuses("status-demo", from)).toEqual(["● Turn 1...", "✓ Turn 1 complete", "● Turn 2...", "✓ Turn 2 complete"]);
    // Each "running" precedes its turn's assistant reply; each "done" follows it.
    const at = (pred: (r: Rec) => boolean, nth: number) => run.filter(pred).map((r) => run.indexOf(r))[nth] as number;
    const isStatus = (text: string) => (r: Rec) => r["method"] === "setStatus" && r["statusText"] === text;
    const assistantStart = (r: Rec) => r.type === "message_start" && msg(r).role === "assistant";
    const assistantEnd = (r: Rec) => r.type === "message_end" && msg(r).role === "assistant";
    for (const n of [1, 2]) {
      expect(at(isStatus(`Turn ${n} running...`), 0)).toBeLessThan(at(assistantStart, n - 1));
      expect(at(isStatus(`Turn ${n} done`), 0)).toBeGreaterThan(at(assistantEnd, n - 1));
      expect(at(isStatus(`Turn ${n} done`), 0)).toBeLessThan(at((r) => r.type === "turn_end", n - 1) + 2);
    }
    // The spinner animates while the agent works and settles on the base title at agent_end.
    const titles = run.filter((r) => r["method"] === "setTitle");
    const base = `π - ${basename(cwd)}`;
    expect(titles.some((r) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] π - /.test(r["title"] as string))).toBe(true);
    const lastTitle = titles.at(-1) as Rec;
    expect(lastTitle["title"]).toBe(base);
    expect(run.indexOf(lastTitle)).toBeLessThan(run.findIndex((r) => r.type === "agent_settled"));
    // No animation frame after agent_end: nothing announces "no more frames", so watch for
    // several of the spinner's intervals (80 ms) and check that none came.
    await quietFor(1000);
    const afterEnd = agent.records.slice(from + run.findIndex((r) => r.type === "agent_end")).filter((r) => r["method"] === "setTitle");
    expect(afterEnd.every((r) => r["title"] === base)).toBe(true);
    noErrors(agent);
  });

  it("model-status.ts: notify and setStatus on model_select, and its console.log stays off stdout", async () => {
    const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", "--model-script", writeScript([]), "-e", ex("model-status.ts")]);
    try {
      const res = await agent.request({ type: "set_model", provider: "parley", modelId: "offline" });
      expect(res["success"]).toBe(true);
      expect(notes(agent)).toEqual(["Model: parley/offline"]);
      expect(uiRequests(agent, "setStatus").map((r) => [r["statusKey"], r["statusText"]])).toEqual([["model", "🤖 offline"]]);
      await agent.request({ type: "get_state" });
      expect(agent.garbage).toEqual([]);
      // stderr is its own pipe: its line may come after the stdout records above.
      await agent.until(() => agent.stderr().includes("[model_select] parley/script → parley/offline (set)"));
    } finally {
      agent.kill();
    }
  });
});

describe("ctx.reload()", () => {
  it("shuts the extensions down, loads the files again as they are now, and starts them with reason reload", async () => {
    const dir = tempDir("parley-reload-");
    const file = join(dir, "versioned.ts");
    const version = (n: number): string => `
      export default function (pi: any) {
        pi.on("session_start", (event: any, ctx: any) => ctx.ui.notify("v${n} start:" + event.reason, "info"));
        pi.on("session_shutdown", (event: any, ctx: any) => ctx.ui.notify("v${n} shutdown:" + event.reason, "info"));
        pi.on("resources_discover", (event: any, ctx: any) => {
          ctx.ui.notify("v${n} discover:" + event.reason, "info");
          return { skillPaths: ["/nowhere/skills"] };
        });
        pi.registerCommand("v${n}-only", { handler: async (_a: string, ctx: any) => ctx.ui.notify("v${n}-only ran", "info") });
        pi.registerCommand("reload-me", {
          handler: async (_a: string, ctx: any) => {
            await ctx.reload();
            ctx.ui.notify("after reload, still v${n}'s handler", "info");
          },
        });
      }`;
    writeFileSync(file, version(1));
    const agent = procs.parley(["-e", file], { cwd: dir });
    await agent.request({ type: "get_state" });
    const from = agent.records.length;
    writeFileSync(file, version(2));
    expect((await agent.request({ type: "prompt", message: "/reload-me" }))["success"]).toBe(true);
    // As in the newest pi, the old instance's ctx is stale once the reload is done: using it throws.
    const stale = await agent.waitFor((r) => r.type === "extension_error" && r["event"] === "command:reload-me");
    expect(stale["error"]).toMatch(/belong to a session that has since been replaced/);
    expect(notes(agent, 0).slice(0, 2)).toEqual(["v1 start:startup", "v1 discover:startup"]);
    expect(notes(agent, from)).toEqual(["v1 shutdown:reload", "v2 start:reload", "v2 discover:reload"]);
    // Skill folders join the skills (this one does not exist, so it adds none), as in pi: no error.
    expect(agent.stderr()).not.toMatch(/which parley ignores/);

    // v1's command is gone, v2's is there.
    const commands = ((await agent.request({ type: "get_commands" }))["data"] as { commands: { name: string }[] }).commands.map((c) => c.name);
    expect(commands).toContain("v2-only");
    expect(commands).not.toContain("v1-only");
    await agent.request({ type: "prompt", message: "/v2-only" });
    await agent.until(() => notes(agent, from).includes("v2-only ran"));
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([stale]);
  });
});
