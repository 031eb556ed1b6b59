/**
 * Your files through the real CLI: --session and switch_session refuse a file that is not a
 * session (exit 2 / an error response) and leave it as it was; export_html refuses to land on a
 * session file (the live one included) or on a file parley did not write.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processRegistry, runPrompt, state, tempDir, writeScript } from "./fixtures/agent/harness.js";

const procs = processRegistry();

const PRETTY_PACKAGE_JSON = `${JSON.stringify({ name: "my-app", version: "1.0.0", dependencies: { left: "^1" } }, null, 2)}\n`;

describe("--session with a file that is not a session", () => {
  it.each([
    ["notes.txt", "Remember the milk\n"],
    ["package.json", PRETTY_PACKAGE_JSON],
    ["wrong-kind.jsonl", '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}\n'],
  ])("%s: exit 2 with a message saying what is wrong and what to do; the file is untouched", async (name, content) => {
    const cwd = tempDir();
    const file = join(cwd, name);
    writeFileSync(file, content);
    const agent = procs.raw(["--mode", "rpc", "--session", file, "--model-script", writeScript(["reply"])], { cwd });
    const { code } = await agent.exited;
    expect(code).toBe(2);
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
    expect(lines.filter((l) => l["type"] === "message")).toHaveLength(2);
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
    expect((await state(again))["messageCount"]).toBe(4);
  });
});
