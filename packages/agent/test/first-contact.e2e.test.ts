/**
 * What a newcomer meets first, through the spawned CLI: an -e file that is missing or does not
 * load stops parley with exit 1 and one message; discovered extensions that fail are reported once;
 * stack traces point at the extension's own lines; the offline model's replies match what it does.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcClient, spawnTransport } from "@parley/client";
import { afterEach, describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnParley, type AgentProcess } from "./helpers/spawn.js";
import { deadline } from "./helpers/deadline.js";

const FIX = join(import.meta.dirname, "fixtures");
/** Per-test ceilings, scaled by PARLEY_TEST_DEADLINE_SCALE like every wait. */
const MINUTE = deadline(60_000);
const agents: AgentProcess[] = [];
afterEach(() => {
  for (const a of agents.splice(0)) a.kill();
});

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "parley-first-"));
}

/** Runs parley to its exit with stdin closed at once. */
function runToExit(args: string[], cwd: string) {
  const result = spawnSync(PARLEY_BIN, ["--mode", "rpc", "--no-session", ...args], {
    cwd,
    input: '{"type":"get_state","id":"1"}\n',
    encoding: "utf8",
    timeout: MINUTE,
    env: { ...process.env, HOME: cwd },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const stderrLines = (stderr: string): string[] => stderr.split("\n").filter((l) => l.startsWith("parley:"));

describe("-e files that cannot be loaded stop parley", () => {
  it("a missing file: exit 1, one message naming it, nothing on stdout, no banner", { timeout: 2 * MINUTE }, () => {
    const cwd = tempDir();
    const { code, stdout, stderr } = runToExit(["-e", "missing.ts"], cwd);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderrLines(stderr)).toEqual([`parley: Extension file not found: ${join(cwd, "missing.ts")}`]);
  });

  it("a factory that throws: exit 1, one message whose stack points at the extension's line", { timeout: 2 * MINUTE }, () => {
    const { code, stdout, stderr } = runToExit(["-e", join(FIX, "throws-on-load.ts")], tempDir());
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderrLines(stderr)).toHaveLength(1);
    expect(stderr).toContain("factory failed on purpose");
    expect(stderr).toContain(`${join(FIX, "throws-on-load.ts")}:5:`);
    expect(stderr).not.toContain("parley-cli.js");
  });

  it("a syntax error and a module without a default function: exit 1, one message each", { timeout: 2 * MINUTE }, () => {
    for (const name of ["syntax-error.ts", "not-a-function.ts"]) {
      const { code, stderr } = runToExit(["-e", join(FIX, name)], tempDir());
      expect(code).toBe(1);
      expect(stderrLines(stderr)).toHaveLength(1);
      expect(stderr).toContain(join(FIX, name));
    }
  });

  it("a discovered extension that fails is reported once and parley carries on", { timeout: 2 * MINUTE }, async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, ".parley", "extensions"), { recursive: true });
    writeFileSync(join(cwd, ".parley", "extensions", "broken.ts"), "export default function () {\n  throw new Error('broken on purpose');\n}\n");
    // --approve: a project's own extensions load only in a trusted project, as in pi.
    const agent = spawnParley(["--approve"], { cwd });
    agents.push(agent);
    expect((await agent.request({ type: "get_state" }))["success"]).toBe(true);
    expect(agent.records.filter((r) => r.type === "extension_error")).toHaveLength(1);
    expect(agent.stderr().split("broken on purpose").length - 1).toBe(1);
    expect(agent.stderr()).toContain(`${join(cwd, ".parley", "extensions", "broken.ts")}:2:`);
  });
});

describe("stack traces of extension errors", () => {
  it("point at the extension's file and line, not at parley's bundle", { timeout: 2 * MINUTE }, async () => {
    const dir = tempDir();
    const file = join(dir, "thrower.ts");
    writeFileSync(
      file,
      [
        'import type { ExtensionAPI } from "@parley/agent";',
        "",
        "interface Shape { a: number }",
        "",
        "export default function (pi: ExtensionAPI) {",
        '  pi.registerCommand("boom", {',
        "    handler: async () => {",
        "      const shape: Shape = { a: 1 };",
        "      throw new Error(`boom ${shape.a}`);",
        "    },",
        "  });",
        "}",
        "",
      ].join("\n"),
    );
    const agent = spawnParley(["-e", file], { cwd: dir });
    agents.push(agent);
    await agent.request({ type: "prompt", message: "/boom" });
    await agent.until(() => agent.stderr().includes("boom 1"), MINUTE);
    const report = agent.stderr().slice(agent.stderr().indexOf("extension error (command:boom)"));
    expect(report).toContain(`${file}:9:13`);
    expect(report).not.toContain("parley-cli.js");
    expect(report).not.toContain("node:internal");
  });
});

describe("the offline model", () => {
  it("does what it says: reads, lists (through bash when ls is off), says not found, and how to configure a real model", { timeout: 2 * MINUTE }, async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "demo-app", version: "1.0.0" }));
    mkdirSync(join(cwd, "src"));
    const client = new RpcClient(spawnTransport(PARLEY_BIN, ["--mode", "rpc", "--no-session"], { cwd, env: { ...process.env, HOME: cwd } }));
    try {
      const read = await client.run("what's in package.json?");
      // The first run records the system prompt first, as pi 1.6 does.
      expect(read.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
      expect(read.text).toContain("demo-app@1.0.0");

      const listed = await client.run("list files");
      expect(JSON.stringify(listed.messages)).not.toContain("not enabled in this session, so I looked");
      expect(listed.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
      expect(listed.text).toContain("The working directory has 1 directory (`src/`) and 1 file (`package.json`)");

      const missing = await client.run("read nonexistent.txt");
      expect(missing.text).toContain("I couldn't find `nonexistent.txt`");
      expect(missing.messages.map((m) => m.role)).toEqual(["user", "assistant"]);

      const other = await client.run("write me a sorting function");
      expect(other.text).toMatch(/^I can't answer that: I'm parley's built-in \*\*offline demo model\*\*/);
      for (const hint of ["--provider", "--model", "--api-key", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"]) expect(other.text).toContain(hint);
    } finally {
      await client.close();
    }
  });
});
