/**
 * Session persistence through the real CLI: --session-dir, -c, --session PATH, a crash mid-turn,
 * and --no-session leaving no trace.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnAgent } from "./helpers/spawn.js";
import { SLOW, call, isDelta, messages, processRegistry, runPrompt, state, tempDir, textOf, writeScript } from "./fixtures/agent/harness.js";

const procs = processRegistry();

/** Every file (not directory) under `dir`, relative. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p, join(rel, name));
      else out.push(join(rel, name));
    }
  };
  walk(dir, "");
  return out;
}

const jsonl = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".jsonl"));

describe("--session-dir, exit, -c", () => {
  it("a restarted agent with -c has the same messages and continues the conversation", async () => {
    const dir = tempDir("parley-sessions-");
    const cwd = tempDir();
    const script = writeScript([call("bash", { command: "echo from-tool" }), "first answer", "answer after restart"]);
    const args = ["--mode", "rpc", "--session-dir", dir, "--model-script", script];

    const one = procs.raw(args, { cwd });
    await runPrompt(one, "hello");
    await one.request({ type: "set_session_name", name: "persisted name" });
    const before = await messages(one);
    const s1 = await state(one);
    // The first run recorded the system prompt first, as pi 1.6 does.
    expect(before.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    one.closeInput();
    expect((await one.exited).code).toBe(0);
    expect(jsonl(dir)).toHaveLength(1);
    expect(join(dir, jsonl(dir)[0] as string)).toBe(s1["sessionFile"]);

    // The script restarts with the new process: make it answer the next prompt with its last turn.
    const script2 = writeScript(["answer after restart"]);
    const two = procs.raw(["--mode", "rpc", "--session-dir", dir, "--model-script", script2, "-c"], { cwd });
    expect(await messages(two)).toEqual(before);
    const s2 = await state(two);
    expect(s2).toMatchObject({ sessionFile: s1["sessionFile"], sessionId: s1["sessionId"], sessionName: "persisted name", messageCount: 5 });
    await runPrompt(two, "and again");
    const after = await messages(two);
    // The same prompt after the restart: no new system message.
    expect(after.slice(0, 5)).toEqual(before);
    expect(after.slice(5).map((m) => [m.role, textOf(m)])).toEqual([
      ["user", "and again"],
      ["assistant", "answer after restart"],
    ]);
    two.closeInput();
    expect((await two.exited).code).toBe(0);
    // Still one file, now holding all seven messages (the recorded system message too).
    expect(jsonl(dir)).toHaveLength(1);
    const lines = readFileSync(s1["sessionFile"] as string, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: "session", id: s1["sessionId"], cwd });
    expect(lines.filter((l) => l["type"] === "message")).toHaveLength(7);
  });

  it("-c picks the most recent session of the directory", async () => {
    const dir = tempDir("parley-sessions-");
    const cwd = tempDir();
    const a = procs.raw(["--mode", "rpc", "--session-dir", dir, "--model-script", writeScript(["old reply"])], { cwd });
    await runPrompt(a, "old session");
    const oldest = String((await state(a))["sessionFile"]);
    a.closeInput();
    await a.exited;
    // -c goes by modification time: the older session is made clearly older instead of waiting
    // for the clock to move between the two runs.
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(oldest, hourAgo, hourAgo);
    const b = procs.raw(["--mode", "rpc", "--session-dir", dir, "--model-script", writeScript(["new reply"])], { cwd });
    await runPrompt(b, "new session");
    const newest = (await state(b))["sessionFile"];
    b.closeInput();
    await b.exited;
    const c = procs.raw(["--mode", "rpc", "--session-dir", dir, "-c"], { cwd });
    expect((await state(c))["sessionFile"]).toBe(newest);
    expect((await messages(c)).map((m) => textOf(m))).toEqual(["", "new session", "new reply"]);
  });
});

describe("--session PATH", () => {
  it("opens the given file; a path that does not exist yet starts a session saved there", async () => {
    const dir = tempDir("parley-sessions-");
    const file = join(dir, "chosen.jsonl");
    const one = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["stored reply"])], { cwd: tempDir() });
    expect((await state(one))["sessionFile"]).toBe(file);
    await runPrompt(one, "store me");
    one.closeInput();
    await one.exited;
    expect(existsSync(file)).toBe(true);

    const two = procs.raw(["--mode", "rpc", "--session", file], { cwd: tempDir() });
    expect((await state(two))["sessionFile"]).toBe(file);
    expect((await messages(two)).map((m) => [m.role, textOf(m)])).toEqual([
      ["system", ""],
      ["user", "store me"],
      ["assistant", "stored reply"],
    ]);
  });
});

describe("a crash mid-turn", () => {
  it("kill -9 while the reply streams: the file loads afterwards, at most the last entry lost", async () => {
    const dir = tempDir("parley-sessions-");
    const cwd = tempDir();
    const long = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    const one = procs.raw(["--mode", "rpc", "--session-dir", dir, "--model-script", writeScript(["complete reply", long])], { cwd, env: SLOW });
    await runPrompt(one, "first prompt");
    const file = (await state(one))["sessionFile"] as string;
    const before = await messages(one);
    const from = one.records.length;
    await one.request({ type: "prompt", message: "second prompt" });
    await one.until(() => one.records.slice(from).filter(isDelta("text_delta")).length >= 3);
    one.kill();
    expect((await one.exited).signal).toBe("SIGKILL");

    const two = procs.raw(["--mode", "rpc", "--session", file], { cwd });
    const after = await messages(two);
    expect(two.records.some((r) => r.type === "extension_error")).toBe(false);
    // What was complete is there; the interrupted reply is not (it never ended); the prompt may be.
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.length - before.length).toBeLessThanOrEqual(1);
    if (after.length > before.length) expect(textOf(after.at(-1))).toBe("second prompt");
    // And the conversation goes on in the reopened file.
    const three = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["resumed"])], { cwd });
    two.closeInput();
    await two.exited;
    await runPrompt(three, "resume");
    expect((await messages(three)).map((m) => textOf(m)).slice(-2)).toEqual(["resume", "resumed"]);
  });

  it("a torn last line (a write cut short) loses only that entry; the agent appends after it cleanly", async () => {
    const dir = tempDir("parley-sessions-");
    const cwd = tempDir();
    const one = procs.raw(["--mode", "rpc", "--session-dir", dir, "--model-script", writeScript(["reply one", "reply two"])], { cwd });
    await runPrompt(one, "q1");
    await runPrompt(one, "q2");
    const file = (await state(one))["sessionFile"] as string;
    one.closeInput();
    await one.exited;
    // Cut the last line in half, without its newline: what a crash in mid-write leaves.
    const text = readFileSync(file, "utf8");
    const lines = text.trimEnd().split("\n");
    const last = lines.pop() as string;
    writeFileSync(file, `${lines.join("\n")}\n${last.slice(0, Math.floor(last.length / 2))}`);

    const two = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["reply three"])], { cwd });
    expect((await messages(two)).map((m) => textOf(m))).toEqual(["", "q1", "reply one", "q2"]);
    await runPrompt(two, "q3");
    two.closeInput();
    await two.exited;
    // Reopened once more: the new entries were written on lines of their own and load.
    const three = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--session", file], { cwd });
    try {
      const got = (await messages(three)).map((m) => textOf(m));
      expect(got.slice(0, 4)).toEqual(["", "q1", "reply one", "q2"]);
      expect(got.slice(-2)).toEqual(["q3", "reply three"]);
      expect(three.garbage).toEqual([]);
    } finally {
      three.kill();
    }
  });
});

describe("--no-session", () => {
  it("writes nothing under HOME (nor in the working directory)", async () => {
    const home = tempDir("parley-home-");
    const cwd = tempDir();
    mkdirSync(join(home, ".pi", "agent"), { recursive: true });
    const agent = procs.parley(["--model-script", writeScript([call("write", { path: "made-by-tool.txt", content: "x" }), "done"])], {
      cwd,
      env: { HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
    });
    await runPrompt(agent, "write a file");
    await agent.request({ type: "set_session_name", name: "ephemeral" });
    await agent.request({ type: "new_session" });
    await runPrompt(agent, "again");
    expect(await state(agent)).not.toHaveProperty("sessionFile");
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(filesUnder(home)).toEqual([]);
    // Only the file the tool wrote.
    expect(filesUnder(cwd)).toEqual(["made-by-tool.txt"]);
    // And a sanity check that our HOME override is honoured: with sessions, the file lands under it.
    const withSession = procs.raw(["--mode", "rpc", "--model-script", writeScript(["saved"])], {
      cwd,
      env: { HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") },
    });
    await runPrompt(withSession, "save me");
    withSession.closeInput();
    await withSession.exited;
    expect(filesUnder(home).some((f) => f.endsWith(".jsonl"))).toBe(true);
    expect(filesUnder(cwd)).toEqual(["made-by-tool.txt"]);
  });
});
