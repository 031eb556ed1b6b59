/**
 * Your files when things go wrong, through the real CLI (issue 34, items 6–10): a kill in the
 * middle of a write or edit leaves the old content or the new, never a torn file.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, rmSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentProcess } from "./helpers/spawn.js";
import { poll } from "./helpers/waits.js";
import { AGENT_FIXTURES, call, messages, processRegistry, runPrompt, textOf, state, tempDir, writeScript } from "./fixtures/agent/harness.js";

const procs = processRegistry();

describe("write and edit killed mid-write", () => {
  // Big enough that the write takes many steps.
  const size = 64 * 1024 * 1024;

  it.each(["write", "edit"] as const)("%s: a SIGKILL during the write leaves the old or the new content, the mode, and the link", async (tool) => {
    const cwd = tempDir();
    const target = join(cwd, "big.txt");
    const link = join(cwd, "link.txt");
    const old = `${"o".repeat(size - 4)}END\n`;
    writeFileSync(target, old);
    chmodSync(target, 0o640);
    symlinkSync("big.txt", link);
    const script = writeScript([call("big_write", { tool, path: "link.txt", size }), "done"]);
    const agent = procs.raw(["--mode", "rpc", "--no-session", "-e", join(AGENT_FIXTURES, "big-write.js"), "--model-script", script], { cwd });
    agent.send({ type: "prompt", message: "go" });
    // The tool kills parley at the first sign of the write on disk (fixtures/agent/big-write.js).
    expect((await agent.exited).signal).toBe("SIGKILL");
    // The kill may cut the record being written (the 64 MB arguments): only a last, torn line.
    expect(agent.garbage.length).toBeLessThanOrEqual(1);
    agent.garbage.length = 0;
    const after = readFileSync(target, "utf8");
    const expected = tool === "write" ? `${"n".repeat(size - 4)}NEW\n` : `${"o".repeat(size - 4)}NEW\n`;
    expect(after.length).toBe(size);
    expect(after === old || after === expected).toBe(true);
    expect(statSync(target).mode & 0o777).toBe(0o640);
    // Still a link to it: the new content went to the target, not over the link.
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});

describe("full tool outputs", () => {
  const bashCall = call("bash", { command: "seq 1 200000" });
  const fullOutput = async (agent: AgentProcess): Promise<string> => {
    const end = await agent.waitFor((r) => r.type === "tool_execution_end" && r["toolName"] === "bash");
    const path = (end["result"] as { details?: { fullOutputPath?: string } }).details?.fullOutputPath;
    expect(path).toBeTypeOf("string");
    return path as string;
  };
  const start = (env: NodeJS.ProcessEnv = {}) => {
    const cwd = tempDir();
    const tmp = join(cwd, "tmp");
    mkdirSync(tmp);
    const agent = procs.raw(["--mode", "rpc", "--no-session", "--model-script", writeScript([bashCall, "done"])], {
      cwd,
      env: { ...process.env, TMPDIR: tmp, ...env },
    });
    agent.send({ type: "prompt", message: "go" });
    return { agent, tmp };
  };

  it("are private (0600 in a 0700 folder of parley's own) and removed when parley exits", async () => {
    const { agent, tmp } = start();
    const path = await fullOutput(agent);
    expect(dirname(path)).not.toBe(tmp);
    expect(dirname(dirname(path))).toBe(tmp);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, "utf8")).toContain("\n200000\n");
    await agent.waitFor((r) => r.type === "agent_end");
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("are removed after a SIGKILL too (by the child watchdog)", async () => {
    const { agent, tmp } = start();
    await fullOutput(agent);
    // After the run's last record: a SIGKILL in the middle of writing one would tear it.
    await agent.waitFor((r) => r.type === "agent_end");
    agent.child.kill("SIGKILL");
    await agent.exited;
    await poll(() => readdirSync(tmp).length === 0, "the output folder removed");
  });

  it("stay when PARLEY_KEEP_OUTPUT_FILES=1", async () => {
    const { agent } = start({ PARLEY_KEEP_OUTPUT_FILES: "1" });
    const path = await fullOutput(agent);
    await agent.waitFor((r) => r.type === "agent_end");
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(readFileSync(path, "utf8")).toContain("\n200000\n");
  });
});

describe("two parleys on one session file", () => {
  it("--session at one new path: the second is refused at once (exit 1, what to do), the first keeps its whole conversation; once it ends the file opens", async () => {
    const cwd = tempDir();
    const file = join(cwd, "shared.jsonl");
    const first = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["one", "two"])], { cwd });
    await runPrompt(first, "first");
    const second = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["other"])], { cwd });
    expect((await second.exited).code).toBe(1);
    expect(second.stderr()).toMatch(
      /the session file .*shared\.jsonl is open in another process \(pid \d+\).*End the other one first, or continue in a copy of the session \(--fork/,
    );
    await runPrompt(first, "second");
    first.closeInput();
    expect((await first.exited).code).toBe(0);
    const texts = readFileSync(file, "utf8");
    for (const t of ["first", "one", "second", "two"]) expect(texts).toContain(`"${t}"`);
    expect(readdirSync(cwd).filter((n) => n.endsWith(".lock"))).toEqual([]);
    const third = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["three"])], { cwd });
    await runPrompt(third, "third");
    expect((await state(third))["messageCount"]).toBe(7); // with the recorded system message (pi 1.6)
  });

  it("switch_session to a file another parley writes answers an error and keeps the current session", async () => {
    const cwd = tempDir();
    const file = join(cwd, "held.jsonl");
    const holder = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["held"])], { cwd });
    await runPrompt(holder, "mine");
    const other = procs.raw(["--mode", "rpc", "--session-dir", join(cwd, "sessions"), "--model-script", writeScript(["x"])], { cwd });
    const before = await state(other);
    const answer = await other.request({ type: "switch_session", sessionPath: file });
    expect(answer["success"]).toBe(false);
    expect(String(answer["error"])).toMatch(/is open in another process/);
    expect((await state(other))["sessionId"]).toBe(before["sessionId"]);
  });

  it("a kill -9 leaves a lock that the next parley takes over", async () => {
    const cwd = tempDir();
    const file = join(cwd, "killed.jsonl");
    const first = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["one"])], { cwd });
    await runPrompt(first, "first");
    first.child.kill("SIGKILL");
    await first.exited;
    expect(readdirSync(cwd)).toContain("killed.jsonl.lock");
    const next = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["two"])], { cwd });
    await runPrompt(next, "again");
    expect((await state(next))["messageCount"]).toBe(5); // with the recorded system message (pi 1.6)
  });
});

describe("a session file replaced while parley runs", () => {
  it.each([
    ["swapped for a symlink to another file", (file: string, other: string) => (rmSync(file), symlinkSync(other, file))],
    ["deleted", (file: string) => rmSync(file)],
  ])("%s: nothing is written there; the client is told at once, stderr again at exit", async (_what, replace) => {
    const cwd = tempDir();
    const file = join(cwd, "live.jsonl");
    const other = join(cwd, "other.txt");
    writeFileSync(other, "someone's notes\n");
    const agent = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["one", "two"])], { cwd });
    await runPrompt(agent, "first");
    replace(file, other);
    await runPrompt(agent, "second");
    const told = await agent.waitFor((r) => r.type === "extension_error" && r["event"] === "session_save");
    expect(String(told["error"])).toMatch(
      /parley will not write to the session file .*live\.jsonl any more: .*The conversation goes on in memory only .*clone/,
    );
    agent.closeInput();
    await agent.exited;
    expect(agent.records.filter((r) => r.type === "extension_error" && r["event"] === "session_save")).toHaveLength(1);
    expect(agent.stderr()).toMatch(/parley: 2 entries of session .* were never written to .*live\.jsonl/);
    expect(readFileSync(other, "utf8")).toBe("someone's notes\n");
    if (!existsSync(file)) expect(readdirSync(cwd).filter((n) => n.startsWith("live"))).toEqual([]);
  });
});

describe("a session resumed after a kill -9 in the middle of a tool call", () => {
  it("ends the call with an error result saying it was interrupted, seen by the client and in the model's context, and recorded once", async () => {
    const cwd = tempDir();
    const file = join(cwd, "killed.jsonl");
    const first = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript([call("bash", { command: "sleep 60" }), "never"])], { cwd });
    first.send({ type: "prompt", message: "run it" });
    const started = await first.waitFor((r) => r.type === "tool_execution_start");
    first.child.kill("SIGKILL");
    await first.exited;
    const resumed = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["after"])], { cwd });
    const seen = await messages(resumed);
    const last = seen.at(-1)!;
    expect(last).toMatchObject({ role: "toolResult", toolCallId: started["toolCallId"], toolName: "bash", isError: true });
    expect(textOf(last)).toMatch(/^No result provided: the tool call was interrupted/);
    await runPrompt(resumed, "go on");
    // The next turn follows the result: user, assistant (call), result, user, assistant.
    expect((await messages(resumed)).map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "user", "assistant"]);
    resumed.closeInput();
    await resumed.exited;
    const again = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["x"])], { cwd });
    expect((await messages(again)).filter((m) => m.role === "toolResult")).toHaveLength(1);
  });
});
