/**
 * Lifecycle and robustness through the real wire: EOF, shutdown, errors, ordering, scale.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { DEMO, PARLEY_BIN, openDialog, spawnParley, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { quietFor } from "./helpers/waits.js";
import { withoutBuiltins } from "./helpers/builtin-commands.js";

const FIX = join(import.meta.dirname, "fixtures");
const agents = checkedAgents();
function start(args: string[], env?: NodeJS.ProcessEnv): AgentProcess {
  const agent = spawnParley(args, env ? { env } : {});
  agents.push(agent);
  return agent;
}
const tempLog = () => join(mkdtempSync(join(tmpdir(), "parley-log-")), "log");

describe("stdin EOF", () => {
  it("dismisses pending dialogs as cancelled, runs session_shutdown, exits 0 promptly", async () => {
    const log = tempLog();
    const agent = start(["-e", DEMO, "-e", join(FIX, "lifecycle.ts")], { LIFECYCLE_LOG: log });
    const select = await openDialog(agent, "/demo-select", "select");
    const input = await openDialog(agent, "/demo-input", "input");
    const t0 = Date.now();
    agent.closeInput();
    const { code } = await agent.exited;
    expect(code).toBe(0);
    // Dialogs without a timeout would wait forever: any exit is prompt; this bounds it generously.
    expect(Date.now() - t0).toBeLessThan(20_000);
    const dismissed = agent.records.filter((r) => r.type === "extension_ui_dismissed");
    expect(dismissed).toEqual([
      { type: "extension_ui_dismissed", id: select["id"], method: "select", reason: "shutdown" },
      { type: "extension_ui_dismissed", id: input["id"], method: "input", reason: "shutdown" },
    ]);
    // The extensions saw their dialogs resolve (their follow-up notify went out before exit).
    const notes = agent.records.filter((r) => r["method"] === "notify").map((r) => r["message"]);
    expect(notes).toContain("select: cancelled");
    expect(notes).toContain("input: cancelled");
    expect(readFileSync(log, "utf8")).toBe("session_start:startup\nsession_shutdown:quit\n");
  });

  it("a dialog opened during shutdown resolves at once", async () => {
    const log = tempLog();
    const agent = start(["-e", join(FIX, "shutdown-dialog.ts")], { LIFECYCLE_LOG: log });
    await agent.request({ type: "get_state" });
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(readFileSync(log, "utf8")).toBe("shutdown-confirm:false\n");
    expect(agent.records.some((r) => r["method"] === "confirm")).toBe(false);
  });

  it("ctx.shutdown() exits after the command answers", async () => {
    const log = tempLog();
    const agent = start(["-e", join(FIX, "lifecycle.ts")], { LIFECYCLE_LOG: log });
    const res = await agent.request({ type: "prompt", message: "/bye" });
    expect(res["success"]).toBe(true);
    expect((await agent.exited).code).toBe(0);
    expect(readFileSync(log, "utf8")).toContain("session_shutdown:quit");
  });
});

describe("bad input never crashes and always answers", () => {
  it("answers each bad line with a clear error, in arrival order", async () => {
    const agent = start([]);
    agent.sendRaw(
      [
        '{"type":"get_state","id":"a"}',
        "null",
        "not json at all",
        "[1,2]",
        '{"id":"b"}',
        '{"type":"nope","id":"c"}',
        '{"type":"set_thinking_level","level":42,"id":"d"}',
        '{"type":"prompt","id":"e"}',
        '{"type":"get_state","id":7}',
        '{"type":"get_commands","id":"f","__proto__":{"polluted":true}}',
        "",
        "   ",
        '{"type":"get_state","id":"g"}\r',
        "",
      ].join("\n"),
    );
    await agent.response("g");
    const responses = agent.records.filter((r) => r.type === "response");
    expect(responses.map((r) => [r["id"], r["command"], r["success"]])).toEqual([
      ["a", "get_state", true],
      [undefined, "parse", false],
      [undefined, "parse", false],
      [undefined, "parse", false],
      ["b", "parse", false],
      ["c", "nope", false],
      ["d", "set_thinking_level", false],
      ["e", "prompt", false],
      [7, "get_state", true],
      ["f", "get_commands", true],
      ["g", "get_state", true],
    ]);
    expect(responses[1]?.["error"]).toContain("got null");
    expect(responses[2]?.["error"]).toMatch(/^Failed to parse command: /);
    expect(responses[5]?.["error"]).toBe("Unknown command: nope");
    expect(responses[6]?.["error"]).toContain('"level"');
    expect(responses[7]?.["error"]).toContain('"message"');
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    const state = await agent.request({ type: "get_state" });
    expect(state["success"]).toBe(true);
  });

  it("a 64 MiB line in 64 KiB chunks is read whole; an oversized one gets an error and the next line works", async () => {
    const agent = start([]);
    const big = "x".repeat(64 * 1024 * 1024);
    const line = Buffer.from(`{"type":"set_session_name","name":"${big}","id":"big"}\n`);
    for (let i = 0; i < line.length; i += 64 * 1024) {
      if (!agent.child.stdin.write(line.subarray(i, i + 64 * 1024))) await new Promise((r) => agent.child.stdin.once("drain", r));
    }
    expect((await agent.response("big", 60_000))["success"]).toBe(true);
    const state = await agent.request({ type: "get_state" });
    expect(((state["data"] as Rec)["sessionName"] as string).length).toBe(big.length);

    const small = start(["--max-line-bytes", "1048576"]);
    small.sendRaw(`{"type":"get_state","pad":"${"y".repeat(2 * 1024 * 1024)}"}\n{"type":"get_state","id":"after"}\n`);
    await small.response("after", 20_000);
    const overflow = small.records.find((r) => r["command"] === "parse");
    expect(overflow).toMatchObject({ success: false, error: expect.stringContaining("exceeds the maximum of 1048576 bytes") });
  }, 300_000);
});

describe("extension failures are reported, not fatal", () => {
  it("load errors of discovered extensions, handler errors and stray throws become extension_error records", async () => {
    // Discovered extensions that fail are reported and skipped (an -e file that fails stops parley: first-contact test).
    const cwd = mkdtempSync(join(tmpdir(), "parley-discovered-"));
    mkdirSync(join(cwd, ".parley", "extensions"), { recursive: true });
    for (const name of ["throws-on-load.ts", "not-a-function.ts", "syntax-error.ts"]) copyFileSync(join(FIX, name), join(cwd, ".parley", "extensions", name));
    // --approve: a project's own extensions load only in a trusted project, as in pi.
    const agent = spawnParley(["--approve", "-e", join(FIX, "throws-in-handler.ts"), "-e", join(FIX, "lifecycle.ts")], { cwd });
    agents.push(agent);
    await agent.request({ type: "get_state" });
    const errors = agent.records.filter((r) => r.type === "extension_error");
    const byFile = (name: string) => errors.filter((e) => String(e["extensionPath"]).endsWith(name));
    expect(byFile("throws-on-load.ts")[0]).toMatchObject({ event: "load", error: "factory failed on purpose" });
    expect(byFile("throws-in-handler.ts")[0]).toMatchObject({ event: "session_start", error: "session_start handler failed on purpose" });
    expect(byFile("not-a-function.ts")[0]?.["error"]).toContain("must default-export a function");
    expect(byFile("syntax-error.ts")[0]?.["error"]).toContain("Failed to load extension");
    for (const name of ["throws-on-load.ts", "not-a-function.ts", "syntax-error.ts"]) expect(byFile(name)).toHaveLength(1);
    // stderr is another pipe: its lines may reach us after the response on stdout.
    await agent.until(() => agent.stderr().includes("factory failed on purpose") && agent.stderr().includes("must default-export a function"));
    // Reported once on stderr too.
    expect(agent.stderr().split("factory failed on purpose").length - 1).toBe(1);
    expect(agent.stderr().split("must default-export a function").length - 1).toBe(1);

    // What registered before the throw still works; a throwing command is reported.
    const half = await agent.request({ type: "prompt", message: "/half" });
    expect(half["success"]).toBe(true);
    const boom = await agent.request({ type: "prompt", message: "/boom" });
    expect(boom["success"]).toBe(true);
    expect(agent.records.find((r) => r.type === "extension_error" && r["event"] === "command:boom")?.["error"]).toBe("boom from a command");
    await agent.request({ type: "prompt", message: "/late-timer" });
    await agent.waitFor((r) => r.type === "extension_error" && r["event"] === "uncaughtException");
    expect((await agent.request({ type: "get_state" }))["success"]).toBe(true);
  });
});

describe("start-up", () => {
  it("a dialog opened in session_start can be answered while commands wait their turn", async () => {
    const agent = start(["-e", join(FIX, "startup-dialog.ts")]);
    const confirm = await agent.waitFor((r) => r["method"] === "confirm");
    agent.send({ type: "get_ui_state", id: "early" });
    // The command must wait for the answer: watch a while for a premature response.
    await quietFor(1000);
    expect(agent.records.some((r) => r["id"] === "early")).toBe(false);
    agent.send({ type: "extension_ui_response", id: confirm["id"], confirmed: true });
    const early = await agent.response("early");
    // It ran after session_start's handler went on: the status set after the answer is in it.
    expect((early["data"] as { statuses: Record<string, string> }).statuses).toEqual({ trust: "trusted" });
  });

  it("extension flags from the command line; ctx fields; exec", async () => {
    const agent = start(["-e", join(FIX, "lifecycle.ts"), "--greeting", "hi", "--loud"]);
    await agent.request({ type: "get_state" });
    expect(agent.records.find((r) => r["method"] === "notify")?.["message"]).toBe("start:startup:hi:true");
    await agent.request({ type: "prompt", message: "/ctx" });
    expect(JSON.parse(String(agent.records.filter((r) => r["method"] === "notify").at(-1)?.["message"]))).toEqual({
      mode: "rpc",
      hasUI: true,
      cwd: true,
      // The session's start (model, level) and the command's own marker.
      entries: 3,
      idle: true,
    });
    await agent.request({ type: "prompt", message: "/exec" });
    expect(JSON.parse(String(agent.records.filter((r) => r["method"] === "notify").at(-1)?.["message"]))).toEqual({
      stdout: "out\n",
      stderr: "err\n",
      code: 3,
      killed: false,
      // pi 1.6's exec result says whether maxBuffer cut the output.
      truncated: false,
    });
  });
});

describe("sessions and commands", () => {
  it("new_session runs session_start once, and a cancelling session_before_switch keeps the session", async () => {
    const log = tempLog();
    const agent = start(["-e", DEMO, "-e", join(FIX, "lifecycle.ts")], { LIFECYCLE_LOG: log });
    const before = ((await agent.request({ type: "get_state" }))["data"] as Rec)["sessionId"];
    const res = await agent.request({ type: "new_session" });
    expect(res).toMatchObject({ success: true, data: { cancelled: false } });
    const after = ((await agent.request({ type: "get_state" }))["data"] as Rec)["sessionId"];
    expect(after).not.toBe(before);
    expect(readFileSync(log, "utf8")).toBe("session_start:startup\nsession_shutdown:new\nsession_start:new\n");
  });

  it("prompt text goes to the (offline) model; get_commands lists extension commands", async () => {
    const agent = start(["-e", DEMO]);
    const res = await agent.request({ type: "prompt", message: "hello there" });
    expect(res["success"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled");
    const text = ((await agent.request({ type: "get_last_assistant_text" }))["data"] as { text: string }).text;
    expect(text).toContain("offline");
    const cmds = ((await agent.request({ type: "get_commands" }))["data"] as { commands: Rec[] }).commands;
    expect(cmds.map((c) => c["name"])).toContain("demo-select");
    expect(cmds[0]).toMatchObject({ source: "extension", sourceInfo: { path: DEMO } });
  });
});

describe("1,000 concurrent dialogs over the wire", () => {
  it("answered out of order, some timing out: each resolves exactly once with its own answer", async () => {
    const agent = start(["-e", join(FIX, "many-dialogs.ts")]);
    agent.send({ type: "prompt", message: "/many 1000", id: "many" });
    const isInput = (r: Rec) => r.type === "extension_ui_request" && r["method"] === "input";
    await agent.until(() => agent.records.filter(isInput).length === 1000, 20_000);
    const requests = agent.records.filter(isInput);
    const untimed = requests.filter((r) => r["timeout"] === undefined);
    expect(untimed).toHaveLength(900);
    // Answer in a scrambled order, each twice (the second must be refused).
    const order = untimed.map((_, i) => i).sort((a, b) => ((a * 7919) % 900) - ((b * 7919) % 900));
    const lines = order.map((i) => JSON.stringify({ type: "extension_ui_response", id: untimed[i]?.["id"], value: `a:${untimed[i]?.["title"]}` }));
    agent.sendRaw(`${lines.join("\n")}\n${lines.join("\n")}\n`);
    await agent.response("many", 20_000);
    const summary = JSON.parse(String(agent.records.filter((r) => r["method"] === "notify").at(-1)?.["message"])) as {
      answers: string[];
      settledOnce: boolean;
    };
    expect(summary.settledOnce).toBe(true);
    summary.answers.forEach((a, i) => expect(a).toBe(i % 10 === 9 ? "<none>" : `a:q${i}`));
    await agent.until(() => agent.records.filter((r) => r.type === "extension_ui_error").length === 900, 10_000);
    expect(agent.records.filter((r) => r.type === "extension_ui_error").every((e) => e["code"] === "already_resolved")).toBe(true);
    expect(agent.records.filter((r) => r.type === "extension_ui_dismissed" && r["reason"] === "timeout")).toHaveLength(100);
  });
});

describe("CLI", () => {
  const run = (args: string[]) =>
    spawnSync(PARLEY_BIN, args, { encoding: "utf8", input: "", env: { ...process.env, HOME: mkdtempSync(join(tmpdir(), "h-")) } });

  it.each([
    [["--mode", "rpc", "--bogus"], "Unknown option --bogus"],
    [["--mode", "jsno"], "--mode jsno is not a mode parley has"],
    [["--mode", "rpc", "@notes.txt"], "@file arguments are not supported in RPC mode"],
    [["--mode", "rpc", "--tui-mode", "huge"], 'Invalid TUI mode "huge"'],
    [["--mode", "rpc", "-e"], "-e needs a value"],
    [["--mode", "rpc", "-x"], "Unknown option: -x"],
    [["--mode", "rpc", "--max-line-bytes", "0"], "--max-line-bytes 0 must be a positive"],
    [["--mode", "rpc", "--session", "x", "-c"], "cannot be combined"],
    [["--mode", "rpc", "--sesion", "x"], "unknown option --sesion (did you mean --session?)"],
  ])("%j is refused with a clear message and exit 1, as in pi", (args, message) => {
    const result = run(args);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe("");
  });

  it("unknown flags are refused unless an extension registered them", () => {
    const withExt = run(["--mode", "rpc", "--no-session", "-e", join(FIX, "lifecycle.ts"), "--greeting", "x", "--nope"]);
    expect(withExt.status).toBe(1);
    expect(withExt.stderr).toContain("Unknown option --nope (extension flags: --greeting, --loud)");
    const bool = run(["--mode", "rpc", "--no-session", "-e", join(FIX, "lifecycle.ts"), "--loud", "stray"]);
    expect(bool.status).toBe(1);
    expect(bool.stderr).toContain("is a boolean flag");
  });

  it("a plain start loads no ES module, so Node's ES module loader (~13 ms) never starts", () => {
    // NODE_DEBUG=esm makes Node name every ES module it loads on stderr.
    const start = (env: NodeJS.ProcessEnv = {}) =>
      spawnSync(process.execPath, [PARLEY_BIN, "--mode", "rpc", "--no-session"], {
        encoding: "utf8",
        input: '{"type":"get_state","id":"s"}\n',
        env: { PATH: process.env["PATH"], HOME: mkdtempSync(join(tmpdir(), "h-")), NODE_DEBUG: "esm", ...env },
      });
    const provider = (stdout: string) => (JSON.parse(stdout.split("\n")[0] as string) as { data: { model: { provider: string } } }).data.model.provider;
    const plain = start();
    expect(plain.status).toBe(0);
    expect(provider(plain.stdout)).toBe("parley");
    expect(plain.stderr).not.toMatch(/^ESM \d+:/m);
    // The API-key lookup compiled into the bundle is pi-ai's: a key picks that provider, whose
    // model catalogue comes from the code-cached library bundle, not from ES modules.
    const keyed = start({ OPENAI_API_KEY: "sk-test-not-a-real-key" });
    expect(keyed.status).toBe(0);
    expect(provider(keyed.stdout)).toBe("openai");
    expect(keyed.stderr).not.toMatch(/^ESM \d+:/m);
    // The check sees ES modules when they load: the same package imported by plain Node.
    const control = spawnSync(process.execPath, ["--input-type=module", "-e", 'await import("@mariozechner/pi-ai")'], {
      encoding: "utf8",
      cwd: join(PARLEY_BIN, "..", ".."),
      env: { PATH: process.env["PATH"], NODE_DEBUG: "esm" },
      maxBuffer: 256 * 1024 * 1024,
    });
    expect(control.status).toBe(0);
    expect(control.stderr).toMatch(/^ESM \d+:.*pi-ai\/dist\/models\.js/m);
  });

  it("a plain start loads none of the modules only a file write, a !command or an extension needs", () => {
    // NODE_DEBUG=module makes Node name every require() on stderr, built-in modules included.
    const start = (args: string[]) =>
      spawnSync(process.execPath, [PARLEY_BIN, "--mode", "rpc", "--no-session", ...args], {
        encoding: "utf8",
        input: '{"type":"get_state","id":"s"}\n',
        env: { PATH: process.env["PATH"], HOME: mkdtempSync(join(tmpdir(), "h-")), NODE_DEBUG: "module" },
      });
    const requested = (stderr: string) => new Set([...stderr.matchAll(/Module\._load REQUEST (\S+)/g)].map((match) => match[1]));
    const plain = start([]);
    expect(plain.status).toBe(0);
    expect(plain.stdout).toContain('"command":"get_state","success":true');
    const loaded = requested(plain.stderr);
    // Only writing pi's files needs the lock and the atomic replace (graceful-fs, signal-exit,
    // node:assert come with them), only a `!command` value needs child_process, only an
    // extension's loading pauses V8's optimizer through node:v8, and ids (entries, dialogs) are
    // made without node:crypto until a dialog or a tool call needs it; node:fs/promises (which
    // brings Node's readline internals) waits for a tool or an output file.
    for (const name of [
      "proper-lockfile",
      "write-file-atomic",
      "graceful-fs",
      "signal-exit",
      "assert",
      "node:child_process",
      "node:v8",
      "node:crypto",
      "node:fs/promises",
    ]) {
      expect(loaded.has(name), name).toBe(false);
    }
    // The check sees built-in modules when they are required.
    expect(loaded.has("node:fs")).toBe(true);
  });

  it("an unbuilt tree gets a message that says to build, not a stack trace", () => {
    const tree = mkdtempSync(join(tmpdir(), "parley-unbuilt-"));
    mkdirSync(join(tree, "bin"));
    for (const file of ["parley.js", "run-bundle.js", "node-version.js", "package.json"])
      copyFileSync(join(realpathSync(PARLEY_BIN), "..", file), join(tree, "bin", file));
    const result = spawnSync(process.execPath, [join(tree, "bin", "parley.js"), "--version"], { encoding: "utf8" });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/parley is not built\. Run `npm run build`/);
    expect(result.stdout).toBe("");
  });

  it("--help and --version print to stdout and exit 0", () => {
    expect(run(["--help"]).stdout).toContain("Usage: parley --mode rpc");
    expect(run(["--version"]).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(existsSync(PARLEY_BIN)).toBe(true);
  });
});

describe("extension discovery", () => {
  it("loads ~/.parley/extensions and, in a trusted project, ./.parley/extensions (files and folders), unless --no-extensions", async () => {
    const { mkdirSync, writeFileSync } = await import("node:fs");
    const home = mkdtempSync(join(tmpdir(), "parley-home-"));
    const project = mkdtempSync(join(tmpdir(), "parley-project-"));
    const ext = (name: string) => `export default (pi) => pi.registerCommand(${JSON.stringify(name)}, { handler: async () => {} });\n`;
    mkdirSync(join(home, ".parley", "extensions", "folder-ext"), { recursive: true });
    writeFileSync(join(home, ".parley", "extensions", "user-ext.ts"), ext("from-user"));
    writeFileSync(join(home, ".parley", "extensions", "folder-ext", "index.ts"), ext("from-folder"));
    writeFileSync(join(home, ".parley", "extensions", "notes.md"), "not an extension");
    mkdirSync(join(project, ".parley", "extensions"), { recursive: true });
    writeFileSync(join(project, ".parley", "extensions", "project-ext.js"), ext("from-project"));

    const names = async (extra: string[]) => {
      const agent = spawnParley(extra, { cwd: project, env: { HOME: home } });
      agents.push(agent);
      const data = (await agent.request({ type: "get_commands" }))["data"] as { commands: { name: string }[] };
      return withoutBuiltins(data.commands)
        .map((c) => c.name)
        .sort();
    };
    // The project's own extensions load once the project is trusted (here --approve), as in pi.
    expect(await names([])).toEqual(["from-folder", "from-user"]);
    expect(await names(["--approve"])).toEqual(["from-folder", "from-project", "from-user"]);
    expect(await names(["--no-extensions", "-e", join(FIX, "lifecycle.ts")])).toEqual(["boom", "bye", "ctx", "exec", "late-timer"]);
  });
});

describe("extensions need no install of their own", () => {
  it("an extension outside any node_modules imports typebox, pi-ai, pi-tui and pi-coding-agent values", async () => {
    const { writeFileSync } = await import("node:fs");
    const dir = mkdtempSync(join(tmpdir(), "parley-bare-ext-"));
    const file = join(dir, "imports.ts");
    writeFileSync(
      file,
      [
        'import { Type } from "typebox";',
        'import { StringEnum } from "@mariozechner/pi-ai";',
        'import { Text } from "@mariozechner/pi-tui";',
        'import { defineTool, getAgentDir, CustomEditor, type ExtensionAPI } from "@mariozechner/pi-coding-agent";',
        "export default function (pi: ExtensionAPI) {",
        '  const tool = defineTool({ name: "t", label: "T", description: "d", parameters: Type.Object({ mode: StringEnum(["a", "b"]) }), async execute() { return { content: [], details: {} }; } });',
        '  pi.registerCommand("imports", { handler: async (_a, ctx) => ctx.ui.notify(JSON.stringify({ tool: tool.name, dir: typeof getAgentDir(), text: typeof Text, editor: typeof CustomEditor })) });',
        "}",
      ].join("\n"),
    );
    const agent = start(["-e", file]);
    await agent.request({ type: "prompt", message: "/imports" });
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
    expect(JSON.parse(String(agent.records.find((r) => r["method"] === "notify")?.["message"]))).toEqual({
      tool: "t",
      dir: "string",
      text: "function",
      editor: "function",
    });
  });
});

describe("extensions share the agent's libraries, loaded from its code cache", () => {
  it("a TypeScript and a JavaScript ES module extension get one instance of each library, and no ES module loads", async () => {
    const { writeFileSync } = await import("node:fs");
    const dir = mkdtempSync(join(tmpdir(), "parley-libs-"));
    // A "type": "module" folder: jiti would import its .js files natively, resolving packages from
    // the file's own folder (here: none) instead of to parley's copies.
    writeFileSync(join(dir, "package.json"), '{"type":"module"}');
    const imports = [
      'import { Type } from "typebox";',
      'import { StringEnum, getApiProvider } from "@mariozechner/pi-ai";',
      'import { Text } from "@mariozechner/pi-tui";',
      'import { Agent } from "@mariozechner/pi-agent-core";',
      'import { defineTool } from "@mariozechner/pi-coding-agent";',
    ].join("\n");
    // Each stashes what it imported; the TypeScript one reports, per import, whether both got the same object.
    const body = (name: string, ts: boolean) =>
      [
        `export default function (pi${ts ? ": any" : ""}) {`,
        `  const g = globalThis${ts ? " as any" : ""};`,
        `  (g.libs ??= {})[${JSON.stringify(name)}] = { Type, StringEnum, getApiProvider, Text, Agent, defineTool };`,
        `  pi.registerCommand("libs-${name}", {`,
        "    handler: async (_a, ctx) => ctx.ui.notify(JSON.stringify(Object.keys(g.libs.ts).map((k) => [k, typeof g.libs.ts[k], g.libs.ts[k] === g.libs.js[k]]))),",
        "  });",
        "}",
      ].join("\n");
    writeFileSync(join(dir, "ext.ts"), `${imports}\n${body("ts", true)}\n`);
    writeFileSync(join(dir, "ext.js"), `${imports}\n${body("js", false)}\n`);
    const agent = start(["-e", join(dir, "ext.ts"), "-e", join(dir, "ext.js")], { NODE_DEBUG: "esm" });
    await agent.request({ type: "prompt", message: "/libs-ts" });
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
    const report = JSON.parse(String(agent.records.find((r) => r["method"] === "notify")?.["message"])) as [string, string, boolean][];
    expect(report).toEqual([
      ["Type", "object", true],
      ["StringEnum", "function", true],
      ["getApiProvider", "function", true],
      ["Text", "function", true],
      ["Agent", "function", true],
      ["defineTool", "function", true],
    ]);
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    expect(agent.stderr()).not.toMatch(/^ESM \d+:/m);
  });
});
describe("the built-in tools' definitions are created when first asked for", () => {
  it("an extension that does not ask loads no TypeBox; pi.getAllTools() while it loads lists the built-ins with their schemas", async () => {
    const { writeFileSync } = await import("node:fs");
    const dir = mkdtempSync(join(tmpdir(), "parley-all-tools-"));
    const file = join(dir, "tools.ts");
    writeFileSync(
      file,
      [
        'import { createRequire } from "node:module";',
        "// Whether parley's TypeBox bundle is loaded (the tools' schemas are TypeBox schemas).",
        "const typeBox = () => Object.keys(createRequire(`${process.cwd()}/`).cache).some((f) => /lib-typebox\\.js$/.test(f));",
        "export default function (pi: any) {",
        "  const before = typeBox();",
        "  const tools = pi.getAllTools().map((t: any) => [t.name, t.parameters?.type, t.sourceInfo?.source]);",
        '  pi.registerCommand("tools", { handler: async (_a: string, ctx: any) => ctx.ui.notify(JSON.stringify({ before, after: typeBox(), tools })) });',
        "}",
      ].join("\n"),
    );
    const agent = start(["-e", file]);
    await agent.request({ type: "prompt", message: "/tools" });
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
    const report = JSON.parse(String(agent.records.find((r) => r["method"] === "notify")?.["message"])) as {
      before: boolean;
      after: boolean;
      tools: string[][];
    };
    expect(report.before).toBe(false);
    expect(report.after).toBe(true);
    expect(report.tools.map(([name]) => name).sort()).toEqual(["bash", "edit", "find", "grep", "ls", "read", "write"]);
    expect(report.tools.every(([, type, source]) => type === "object" && source === "builtin")).toBe(true);
  });
});

describe("the built-in tools' definitions wait for TypeBox", () => {
  it("an extension that loads no TypeBox (pi's rpc-demo.ts) leaves it unloaded through start-up; its first pi.getAllTools() loads it", async () => {
    const { writeFileSync } = await import("node:fs");
    const dir = mkdtempSync(join(tmpdir(), "parley-no-typebox-"));
    const file = join(dir, "later.ts");
    writeFileSync(
      file,
      [
        'import { createRequire } from "node:module";',
        "const typeBox = () => Object.keys(createRequire(`${process.cwd()}/`).cache).some((f) => /lib-typebox\\.js$/.test(f));",
        "export default function (pi: any) {",
        '  pi.registerCommand("later", {',
        "    handler: async (_a: string, ctx: any) => {",
        "      const afterStartUp = typeBox();",
        "      const tools = pi.getAllTools().length;",
        "      ctx.ui.notify(JSON.stringify({ afterStartUp, tools, afterAsking: typeBox() }));",
        "    },",
        "  });",
        "}",
      ].join("\n"),
    );
    const agent = start(["-e", file]);
    await agent.request({ type: "prompt", message: "/later" });
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
    expect(JSON.parse(String(agent.records.find((r) => r["method"] === "notify")?.["message"]))).toEqual({ afterStartUp: false, tools: 9, afterAsking: true }); // the seven built-ins, codemode and tool_search
  });
});

describe("input that ends during start-up", () => {
  it("is still answered, in order, before parley exits", async () => {
    const agent = start(["-e", join(FIX, "slow-start.ts"), "--max-line-bytes", "1024"]);
    agent.sendRaw(`{"type":"get_state","id":"a"}\n{"type":"get_state","pad":"${"x".repeat(2048)}"}\n{"type":"get_ui_state","id":"b"}\n`);
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
    const responses = agent.records.filter((r) => r.type === "response");
    expect(responses.map((r) => r["id"] ?? r["command"])).toEqual(["a", "parse", "b"]);
    expect((responses[2]?.["data"] as { statuses: Record<string, string> }).statuses).toEqual({ slow: "started" });
  });
});
