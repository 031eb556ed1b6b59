/**
 * Your files through the real CLI: --session and switch_session refuse a file that is not a
 * session (exit 1 / an error response) and leave it as it was; export_html refuses to land on a
 * session file (the live one included) or on a file parley did not write.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { execFileSync, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { PARLEY_BIN } from "./helpers/spawn.js";
import { describe, expect, it } from "vitest";
import { idleShare } from "./helpers/cpu.js";
import { call, processRegistry, runPrompt, state, tempDir, writeScript } from "./fixtures/agent/harness.js";

const procs = processRegistry();

const PRETTY_PACKAGE_JSON = `${JSON.stringify({ name: "my-app", version: "1.0.0", dependencies: { left: "^1" } }, null, 2)}\n`;

describe("--session with a file that is not a session", () => {
  it.each([
    ["notes.txt", "Remember the milk\n"],
    ["package.json", PRETTY_PACKAGE_JSON],
    ["wrong-kind.jsonl", '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}\n'],
  ])("%s: exit 1 with a message saying what is wrong and what to do; the file is untouched", async (name, content) => {
    const cwd = tempDir();
    const file = join(cwd, name);
    writeFileSync(file, content);
    const agent = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["reply"])], { cwd });
    const { code } = await agent.exited;
    expect(code).toBe(1);
    expect(agent.stderr()).toContain(`--session ${file}: ${file} is not a session file (`);
    expect(agent.stderr()).toMatch(/parley leaves it untouched\. Give the path of a session file, of an empty file, or of a file that does not exist yet/);
    expect(agent.records).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe(content);
  });

  it("a 0-byte file becomes the session: the conversation is appended to it", async () => {
    const cwd = tempDir();
    const file = join(cwd, "empty.jsonl");
    writeFileSync(file, "");
    const agent = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["reply"])], { cwd });
    await runPrompt(agent, "hello");
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ type: "session", id: (await state(agent))["sessionId"] });
    expect(lines.filter((l) => l["type"] === "message")).toHaveLength(3); // with the recorded system message (pi 1.6)
  });
});

// A symlink to a file that does not exist yet: the link cannot be created exclusively (EEXIST),
// so every save failed while prompts succeeded, and the conversation was lost.
describe("--session through a symlink whose target does not exist yet", () => {
  it("the conversation is saved at the target, readable through the link", async () => {
    const cwd = tempDir();
    const target = join(cwd, "sub", "target.jsonl");
    const link = join(cwd, "link.jsonl");
    symlinkSync("sub/target.jsonl", link);
    const agent = procs.raw(["--mode", "rpc", "--session", link, "--model-script", writeScript(["reply"])], { cwd });
    await runPrompt(agent, "hello");
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(agent.stderr()).not.toContain("could not save");
    const lines = readFileSync(link, "utf8").trim().split("\n");
    // The header, the model and level the session started with, the exchange.
    expect(lines).toHaveLength(6); // with the recorded system message (pi 1.6)
    expect(readFileSync(target, "utf8")).toBe(readFileSync(link, "utf8"));
  });
});

describe("switch_session to a file that is not a session", () => {
  it("answers an error naming the reason, keeps the current session, and never writes the file", async () => {
    const cwd = tempDir();
    const notes = join(cwd, "notes.txt");
    writeFileSync(notes, "line one\nline two\n");
    const pkg = join(cwd, "package.json");
    writeFileSync(pkg, PRETTY_PACKAGE_JSON);
    const agent = procs.raw(["--mode", "rpc", "--session-dir", join(cwd, "sessions"), "--model-script", writeScript(["one", "two"])], { cwd });
    await runPrompt(agent, "first");
    const before = await state(agent);
    for (const [file, reason] of [
      [notes, "its first line is not JSON"],
      [pkg, "its first line is not JSON"],
    ] as const) {
      const res = await agent.request({ type: "switch_session", sessionPath: file });
      expect(res).toMatchObject({ success: false, command: "switch_session" });
      expect(res["error"]).toBe(
        `Cannot switch to session ${file}: ${file} is not a session file (${reason}); parley leaves it untouched. Give the path of a session file, of an empty file, or of a file that does not exist yet`,
      );
    }
    expect((await state(agent))["sessionFile"]).toBe(before["sessionFile"]);
    await runPrompt(agent, "second");
    expect(readFileSync(notes, "utf8")).toBe("line one\nline two\n");
    expect(readFileSync(pkg, "utf8")).toBe(PRETTY_PACKAGE_JSON);
  });
});

describe("export_html", () => {
  it("refuses the live session file, another session and a file parley did not write; the session still loads", async () => {
    const cwd = tempDir();
    const script = writeScript(["one", "two"]);
    const agent = procs.raw(["--mode", "rpc", "--session-dir", join(cwd, "sessions"), "--model-script", script], { cwd });
    await runPrompt(agent, "first");
    const sessionFile = (await state(agent))["sessionFile"] as string;
    const before = readFileSync(sessionFile, "utf8");

    const live = await agent.request({ type: "export_html", outputPath: sessionFile });
    expect(live).toMatchObject({ success: false, command: "export_html" });
    expect(live["error"]).toMatch(/is the current session file; exporting there would destroy the session/);
    expect(readFileSync(sessionFile, "utf8")).toBe(before);

    const other = join(cwd, "other.jsonl");
    writeFileSync(other, before);
    expect((await agent.request({ type: "export_html", outputPath: other }))["error"]).toMatch(/holds a session; parley never writes an export over a session/);
    expect(readFileSync(other, "utf8")).toBe(before);

    const readme = join(cwd, "README.md");
    writeFileSync(readme, "# my project\n");
    expect((await agent.request({ type: "export_html", outputPath: "README.md" }))["error"]).toMatch(
      /not a page parley exported; parley does not overwrite files it did not create/,
    );
    expect(readFileSync(readme, "utf8")).toBe("# my project\n");

    // A fresh path works, and exporting there again replaces parley's own page.
    const page = join(cwd, "page.html");
    expect(await agent.request({ type: "export_html", outputPath: page })).toMatchObject({ success: true, data: { path: page } });
    await runPrompt(agent, "second");
    expect(await agent.request({ type: "export_html", outputPath: page })).toMatchObject({ success: true, data: { path: page } });
    expect(readFileSync(page, "utf8")).toContain("second");

    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    const again = procs.raw(["--mode", "rpc", "--session", sessionFile, "--model-script", script], { cwd });
    expect((await state(again))["messageCount"]).toBe(5); // with the recorded system message (pi 1.6)
  });
});

// Folders parley cannot make. Node's recursive mkdir spun for ever at 100% CPU under /proc (it
// answers ENOENT there though the parent exists): the session was never saved, parley hung.
describe("a folder that cannot be made: the error is said, parley keeps serving and sleeps", () => {
  const unwritable = (cwd: string) =>
    [
      ["under /proc", "/proc/self/parley-sessions"],
      ["under /sys", "/sys/parley-sessions"],
      ["through a regular file", join(cwd, "notes.txt", "sessions")],
    ] as const;

  it("--session-dir: every prompt answered, the save error on stderr, no busy loop, EOF exits 0", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "notes.txt"), "keep\n");
    for (const [, dir] of unwritable(cwd)) {
      const agent = procs.raw(["--mode", "rpc", "--session-dir", dir, "--model-script", writeScript(["one", "two"])], { cwd });
      await runPrompt(agent, "first");
      await runPrompt(agent, "second");
      expect(agent.stderr()).toMatch(/could not save to the session file .*: (ENOENT|EACCES|EPERM|ENOTDIR|EROFS)/);
      // The client hears it too, once for the episode (two prompts, many entries).
      const told = agent.records.filter((r) => r.type === "extension_error" && r["event"] === "session_save");
      expect(told, dir).toHaveLength(1);
      expect(await idleShare(agent.child.pid!), dir).toBeLessThan(0.3);
      agent.closeInput();
      expect((await agent.exited).code, dir).toBe(0);
    }
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("keep\n");
  });

  it("export_html and the write tool: an error each, and the agent goes on", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "notes.txt"), "keep\n");
    const paths = unwritable(cwd).map(([, dir]) => join(dir, "deeper", "page.html"));
    const script = writeScript([...paths.map((path) => call("write", { path, content: "x" })), "done"]);
    const agent = procs.parley(["--model-script", script, "--no-extensions"], { cwd });
    for (const outputPath of paths) {
      const res = await agent.request({ type: "export_html", outputPath });
      expect(res, outputPath).toMatchObject({ success: false, command: "export_html" });
    }
    const run = await runPrompt(agent, "write them", 60_000);
    const results = run.filter((r) => r.type === "tool_execution_end");
    expect(results).toHaveLength(paths.length);
    for (const r of results) expect(r["isError"], JSON.stringify(r)).toBe(true);
    expect(await idleShare(agent.child.pid!)).toBeLessThan(0.3);
    expect((await state(agent))["isStreaming"]).toBe(false);
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("keep\n");
  });
});

// pi resolves a relative output path against the working directory. A loaded session records the
// folder it was made in: another project, or one that is gone (parley made it anew to export).
describe("a relative export path is the user's: against the working directory, not the session's recorded folder", () => {
  const elsewhere = "/nonexistent/parley-recorded-cwd";
  const sessionFrom = (dir: string, recorded: string = elsewhere): string => {
    const file = join(dir, "recorded.jsonl");
    const header = { type: "session", version: 3, id: "0190f0e0-0000-7000-8000-00000000abcd", timestamp: new Date(0).toISOString(), cwd: recorded };
    const entry = {
      type: "message",
      id: "e1",
      parentId: null,
      timestamp: new Date(0).toISOString(),
      message: { role: "user", content: "from elsewhere", timestamp: 0 },
    };
    writeFileSync(file, `${JSON.stringify(header)}\n${JSON.stringify(entry)}\n`);
    return file;
  };

  it("--export FILE out.html", async () => {
    const cwd = tempDir();
    const file = sessionFrom(cwd);
    const stdout = execFileSync(PARLEY_BIN, ["--export", file, "out.html"], { cwd, encoding: "utf8", env: { ...process.env, HOME: cwd } });
    // The path as given, as pi 1.6 prints it; written in the working folder.
    expect(stdout).toBe("Exported to: out.html\n");
    expect(readFileSync(join(cwd, "out.html"), "utf8")).toContain("from elsewhere");
    expect(existsSync(elsewhere)).toBe(false);
  });

  it("export_html after switch_session to it, with a relative path and with none", async () => {
    const cwd = tempDir();
    // A switch needs the recorded folder to exist (pi refuses it otherwise); the agent then works there, but export paths stay the user's.
    const recorded = tempDir();
    const file = sessionFrom(cwd, recorded);
    const agent = procs.raw(["--mode", "rpc", "--session-dir", join(cwd, "sessions"), "--model-script", writeScript(["one"]), "--no-extensions"], { cwd });
    expect(await agent.request({ type: "switch_session", sessionPath: file })).toMatchObject({ success: true });
    // As pi 1.6: a missing folder is an error, and the answer is the path as given.
    expect(await agent.request({ type: "export_html", outputPath: "rel/page.html" })).toMatchObject({ success: false });
    mkdirSync(join(cwd, "rel"));
    expect(await agent.request({ type: "export_html", outputPath: "rel/page.html" })).toMatchObject({ success: true, data: { path: "rel/page.html" } });
    expect(existsSync(join(cwd, "rel", "page.html"))).toBe(true);
    expect(await agent.request({ type: "export_html" })).toMatchObject({ success: true, data: { path: "pi-session-recorded.html" } });
    expect(existsSync(join(cwd, "pi-session-recorded.html"))).toBe(true);
    expect(readdirSync(recorded)).toEqual([]);
  });
});

// A FIFO opened plainly blocks until someone writes to it: parley hung, never answering, never
// exiting. Looked at without waiting, it is refused like any file that is not a session.
describe("a FIFO where a file is expected is refused at once, never waited on", () => {
  const fifo = (dir: string, name: string): string => {
    const path = join(dir, name);
    execFileSync("mkfifo", [path]);
    return path;
  };

  it("--session and --export: exit with the reason", () => {
    const cwd = tempDir();
    const pipe = fifo(cwd, "pipe.jsonl");
    for (const args of [
      ["--mode", "rpc", "--session", pipe],
      ["--export", pipe, "out.html"],
    ]) {
      const result = spawnSync(PARLEY_BIN, args, { cwd, encoding: "utf8", input: "", timeout: 60_000, env: { ...process.env, HOME: cwd } });
      expect(result.signal, args.join(" ")).toBeNull();
      expect(result.status, args.join(" ")).not.toBe(0);
      expect(result.stderr).toContain(`${pipe} is not a session file (it is not a regular file)`);
    }
  });

  it("switch_session and export_html: an error response each; --continue passes over one among the sessions", async () => {
    const cwd = tempDir();
    const pipe = fifo(cwd, "pipe.jsonl");
    const page = fifo(cwd, "page.html");
    const sessions = join(cwd, "sessions");
    const agent = procs.raw(["--mode", "rpc", "--session-dir", sessions, "--model-script", writeScript(["one", "two"])], { cwd });
    await runPrompt(agent, "first");
    expect((await agent.request({ type: "switch_session", sessionPath: pipe }))["error"]).toContain("is not a session file (it is not a regular file)");
    expect((await agent.request({ type: "export_html", outputPath: page }))["error"]).toContain("already exists (it is not a regular file)");
    const sessionFile = (await state(agent))["sessionFile"] as string;
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    // A FIFO named like a newer session file beside the real one.
    fifo(dirname(sessionFile), "9999-12-31T00-00-00-000Z_fifo.jsonl");
    const again = procs.raw(["--mode", "rpc", "--session-dir", sessions, "--continue", "--model-script", writeScript(["again"])], { cwd });
    expect((await state(again))["sessionFile"]).toBe(sessionFile);
  });
});
