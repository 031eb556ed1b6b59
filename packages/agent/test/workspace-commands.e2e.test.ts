/**
 * parley's commands for any client, through the spawned CLI: list_sessions (this folder's and
 * every project's), reload (as ctx.reload()), refresh_models (models.json again) and list_files
 * (bounded, inside the working folder).
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, processRegistry, runPrompt, SLOW, tempDir, writeScript } from "./fixtures/agent/harness.js";

const procs = processRegistry();

type Listed = { id: string; path: string; cwd: string; name?: string; firstMessage?: string; updated: string; messageCount: number };

async function list(agent: ReturnType<typeof procs.raw>, scope?: "folder" | "all"): Promise<Listed[]> {
  const res = await agent.request({ type: "list_sessions", ...(scope ? { scope } : {}) });
  expect(res["success"], JSON.stringify(res)).toBe(true);
  return (res["data"] as { sessions: Listed[] }).sessions;
}

describe("list_sessions", () => {
  it("lists this folder's sessions newest first with name, first message, time and count; all lists every project's", async () => {
    const agentDir = tempDir("parley-agentdir-");
    const env = { PI_CODING_AGENT_DIR: agentDir };
    const elsewhere = tempDir("parley-other-project-");
    const other = procs.raw(["--mode", "rpc", "--model-script", writeScript(["elsewhere answer"])], { cwd: elsewhere, env });
    await runPrompt(other, "a question in another project");
    other.closeInput();
    await other.exited;

    const cwd = tempDir("parley-project-");
    const agent = procs.raw(["--mode", "rpc", "--model-script", writeScript(["one", "two"])], { cwd, env });
    await runPrompt(agent, "first   question\nwith lines");
    await agent.request({ type: "set_session_name", name: "named one" });
    const first = (await agent.request({ type: "get_state" }))["data"] as { sessionFile: string; sessionId: string };
    expect((await agent.request({ type: "new_session" }))["success"]).toBe(true);
    await runPrompt(agent, "second question");
    const second = (await agent.request({ type: "get_state" }))["data"] as { sessionFile: string; sessionId: string };

    const here = await list(agent);
    expect(here.map((s) => s.path)).toEqual([second.sessionFile, first.sessionFile]);
    // Every message entry counts, the system message the first run recorded too (as pi 1.6 counts them).
    expect(here[0]).toMatchObject({ id: second.sessionId, cwd, firstMessage: "second question", messageCount: 3 });
    expect(here[0]?.name).toBeUndefined();
    expect(here[1]).toMatchObject({ id: first.sessionId, name: "named one", firstMessage: "first question with lines", messageCount: 3 });
    expect(Date.parse(here[0]?.updated ?? "")).toBeGreaterThanOrEqual(Date.parse(here[1]?.updated ?? ""));

    const all = await list(agent, "all");
    expect(all.map((s) => s.path)).toEqual(expect.arrayContaining([first.sessionFile, second.sessionFile]));
    expect(all.find((s) => s.cwd === elsewhere)).toMatchObject({ firstMessage: "a question in another project", messageCount: 3 });
    expect(all).toHaveLength(3);

    // A listed path is what switch_session takes.
    expect((await agent.request({ type: "switch_session", sessionPath: here[1]?.path }))["success"]).toBe(true);
    expect(((await agent.request({ type: "get_state" }))["data"] as { sessionId: string }).sessionId).toBe(first.sessionId);
    // Listed again after it grew: the new count, not a remembered one.
    await runPrompt(agent, "one more");
    expect((await list(agent)).find((s) => s.id === first.sessionId)?.messageCount).toBe(5);
  });

  it("lists nothing (not an error) where no session was ever stored", async () => {
    const agent = procs.raw(["--mode", "rpc", "--no-session"], { cwd: tempDir() });
    expect(await list(agent)).toEqual([]);
    expect(await list(agent, "all")).toEqual([]);
  });
});

describe("reload", () => {
  it("runs session_shutdown and session_start with reason reload and reads prompt templates again; refused while a reply runs", async () => {
    const agentDir = tempDir("parley-agentdir-");
    const ext = join(tempDir(), "reload-ext.ts");
    writeFileSync(
      ext,
      `export default function (pi) {
  pi.on("session_shutdown", (e) => { if (e.reason === "reload") console.error("EXT shutdown reload"); });
  pi.on("session_start", (e, ctx) => ctx.ui.notify("started: " + e.reason, "info"));
}`,
    );
    const agent = procs.raw(["--mode", "rpc", "--no-session", "-e", ext, "--model-script", writeScript(["x ".repeat(400)])], {
      env: { PI_CODING_AGENT_DIR: agentDir, ...SLOW },
    });
    await agent.waitFor((r) => r["method"] === "notify" && r["message"] === "started: startup");
    const names = async (): Promise<string[]> =>
      ((await agent.request({ type: "get_commands" }))["data"] as { commands: { name: string }[] }).commands.map((c) => c.name);
    expect(await names()).not.toContain("greet");
    mkdirSync(join(agentDir, "prompts"), { recursive: true });
    writeFileSync(join(agentDir, "prompts", "greet.md"), "---\ndescription: say hello\n---\nSay hello\n");

    const from = agent.records.length;
    const res = await agent.request({ type: "reload" });
    expect(res, JSON.stringify(res)).toMatchObject({ type: "response", command: "reload", success: true });
    expect(res["data"]).toBeUndefined();
    await agent.waitFor((r) => r["method"] === "notify" && r["message"] === "started: reload", undefined, from);
    expect(agent.stderr()).toContain("EXT shutdown reload");
    expect(await names()).toContain("greet");

    // As the newest pi: not while a reply is being written.
    await agent.request({ type: "prompt", message: "long one" });
    await agent.waitFor((r) => r.type === "message_update");
    const refused = await agent.request({ type: "reload" });
    expect(refused).toMatchObject({ success: false, error: "Wait for the current response to finish before reloading." });
    await agent.request({ type: "abort" });
  });
});

describe("refresh_models", () => {
  it("reads models.json again: a provider added is available and selectable, one removed is gone", async () => {
    const agentDir = tempDir("parley-agentdir-");
    const agent = procs.raw(["--mode", "rpc", "--no-session"], { env: { PI_CODING_AGENT_DIR: agentDir } });
    const ids = (data: unknown): string[] => (data as { models: { provider: string; id: string }[] }).models.map((m) => `${m.provider}/${m.id}`);
    const before = await agent.request({ type: "refresh_models" });
    expect(before["success"], JSON.stringify(before)).toBe(true);
    expect(ids(before["data"])).not.toContain("lab/tiny-1");

    const models = { providers: { lab: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "k", models: [{ id: "tiny-1" }] } } };
    writeFileSync(join(agentDir, "models.json"), JSON.stringify(models));
    const after = await agent.request({ type: "refresh_models" });
    expect(ids(after["data"])).toContain("lab/tiny-1");
    expect((await agent.request({ type: "set_model", provider: "lab", modelId: "tiny-1" }))["success"]).toBe(true);

    writeFileSync(join(agentDir, "models.json"), JSON.stringify({ providers: {} }));
    const removed = await agent.request({ type: "refresh_models" });
    expect(ids(removed["data"])).not.toContain("lab/tiny-1");
  });
});

describe("list_files", () => {
  it("lists files under the working folder only: dot folders, node_modules, ignored paths and symlinked folders left out; a query ranks names first", async () => {
    const cwd = tempDir("parley-files-");
    const outside = tempDir("parley-outside-");
    writeFileSync(join(outside, "secret.txt"), "no");
    writeFileSync(join(cwd, "a.txt"), "a");
    writeFileSync(join(cwd, ".gitignore"), "build/\n");
    for (const dir of ["src/deep", "node_modules/pkg", ".git", "build"]) mkdirSync(join(cwd, dir), { recursive: true });
    writeFileSync(join(cwd, "src/main.ts"), "");
    writeFileSync(join(cwd, "src/deep/domain.ts"), "");
    writeFileSync(join(cwd, "node_modules/pkg/index.js"), "");
    writeFileSync(join(cwd, ".git/config"), "");
    writeFileSync(join(cwd, "build/out.js"), "");
    symlinkSync(outside, join(cwd, "linked"));
    const agent = procs.parley(["--model-script", writeScript([call("ls", {})])], { cwd });

    const all = (await agent.request({ type: "list_files" }))["data"] as { files: string[]; truncated: boolean };
    expect(all.truncated).toBe(false);
    expect(all.files).toEqual(expect.arrayContaining(["a.txt", "src/", "src/main.ts", "src/deep/", "src/deep/domain.ts"]));
    for (const hidden of ["node_modules/", ".git/", "build/", "build/out.js", "linked/secret.txt", ".gitignore"]) expect(all.files).not.toContain(hidden);

    const main = (await agent.request({ type: "list_files", query: "MAIN" }))["data"] as { files: string[] };
    expect(main.files[0]).toBe("src/main.ts");
    const spread = (await agent.request({ type: "list_files", query: "sdm", limit: 1 }))["data"] as { files: string[] };
    expect(spread.files).toHaveLength(1);
    const bad = await agent.request({ type: "list_files", limit: 0 });
    expect(bad["success"]).toBe(false);
  });
});
