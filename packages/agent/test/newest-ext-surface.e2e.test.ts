/**
 * The newest pi's (1.6.0) extension surface, through the spawned CLI: extensions written for it
 * load in parley and get what pi's RPC mode gives them.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AGENT_FIXTURES, notes, processRegistry, runPrompt, tempDir, writeScript } from "./fixtures/agent/harness.js";
import { ROOT, type AgentProcess } from "./helpers/spawn.js";

const procs = processRegistry();
const noErrors = (agent: AgentProcess) => expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);

function start(fixture: string, replies: string[] = ["hi"], options: { cwd?: string; env?: NodeJS.ProcessEnv; args?: string[] } = {}): AgentProcess {
  const args = ["--mode", "rpc", "--no-session", "--model-script", writeScript(replies), "-e", join(AGENT_FIXTURES, fixture), ...(options.args ?? [])];
  return procs.raw(args, { cwd: options.cwd ?? tempDir(), ...(options.env ? { env: options.env } : {}) });
}

describe("pi 1.6.0's package exports", () => {
  it("an extension importing every value export pi 1.6.0 added loads; the helpers work, the stand-ins fail only when called", async () => {
    const agent = start("newest-exports.js");
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/newest-exports" });
    const report = JSON.parse(notes(agent, from)[0] as string) as Record<string, unknown>;
    expect(report).toEqual({
      notFunctions: [],
      configDir: ".pi",
      stateEntry: "pi.virtual-model-state",
      ranges: [":5-14", ":7", "", ""],
      diffChangedLine: 2,
      powershell: [true, false],
      paths: true,
      stubError: "resolveCliModel is not available in parley (pi's SDK internals are not part of parley's extension API)",
    });
    noErrors(agent);
  });
});

describe("VERSION under each package name", () => {
  it("@mariozechner/pi-coding-agent gives 0.73.1, @earendil-works/pi-coding-agent the newest pi's (the installed pi-newest's), the rest one instance", async () => {
    const agent = start("versions.js");
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/versions" });
    const newest = (JSON.parse(readFileSync(join(ROOT, "node_modules/pi-newest/package.json"), "utf8")) as { version: string }).version;
    expect(JSON.parse(notes(agent, from)[0] as string)).toEqual({ old: "0.73.1", newest, sameOtherwise: true, session: 3 });
    noErrors(agent);
  });
});

describe("pi 1.6.0's ExtensionAPI members", () => {
  it("pi.on returns an unsubscribe; registerToolRenderer is accepted; an MCP server is kept, listed, removed, and (with --no-mcp) reported as not connected; a virtual model is registered; before_agent_start says messageType", async () => {
    const agent = start("newest-api.js", ["one", "two"], { args: ["--no-mcp"] });
    await runPrompt(agent, "first");
    await agent.request({ type: "prompt", message: "/unsubscribe-input" });
    await runPrompt(agent, "second");
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/api-report" });
    const report = JSON.parse(notes(agent, from)[0] as string) as Record<string, unknown>;
    const server = { name: "jira", config: { url: "https://mcp.example.invalid/jira" }, extensionPath: join(AGENT_FIXTURES, "newest-api.js") };
    expect(report).toEqual({
      // Commands do not reach input handlers' lists here: they are handled before the input event.
      inputs: ["first"],
      twice: ["first", "second"],
      starts: ["user", "user"],
      servers: [server],
      afterUnregister: [],
    });
    const models = ((await agent.request({ type: "get_available_models" }))["data"] as { models: { provider: string; id: string }[] }).models;
    expect(models).toContainEqual(expect.objectContaining({ provider: "router", id: "auto" }));
    const errors = agent.records.filter((r) => r.type === "extension_error");
    // With the built-in MCP support off, the MCP server is reported once session_start has run and
    // no extension has taken up mcp_servers_change (pi's order). The virtual model is registered
    // (virtual-models.e2e.test.ts).
    expect(errors.map((r) => [r["event"], r["error"]])).toEqual([
      [
        "register_mcp_server",
        'MCP server "jira" is registered, but no loaded extension connects MCP servers (the built-in MCP support is off: --no-mcp, --no-extensions or the settings)',
      ],
    ]);
  });

  it("with the built-in MCP support on, a registered server is connected rather than reported: its failure is told as a notify", async () => {
    const agent = start("newest-api.js", ["one"]);
    await agent.until(() => notes(agent, 0).some((note) => note.startsWith("MCP servers need attention")));
    expect(notes(agent, 0).find((note) => note.startsWith("MCP servers need attention"))).toMatch(/jira: failed: /);
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
  });
});

describe("pi 1.6.0's mcp_servers_change", () => {
  it("announces every change after the extensions are bound; servers registered while loading are read on session_start; a handler means nothing is reported as unconnected", async () => {
    const agent = start("mcp-watcher.js");
    await agent.request({ type: "prompt", message: "/mcp-add" });
    await agent.request({ type: "prompt", message: "/mcp-remove" });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/mcp-report" });
    // The report is the command's JSON notify; a notify about the servers themselves (a connection
    // failing) may come in between on a loaded machine.
    const report = notes(agent, from).find((note) => note.startsWith("{"));
    expect(JSON.parse(report ?? "null")).toEqual({ atStart: ["early"], changes: [["early", "late"], ["early"]] });
    noErrors(agent);
  });
});

describe("pi 1.6.0's ui_prompt_start and ui_prompt_end", () => {
  it("each dialog an extension opens is announced when it opens and when it is answered, with its kind and title", async () => {
    const agent = start("ui-prompt-events.js");
    const from = agent.records.length;
    const done = agent.request({ type: "prompt", message: "/ask" });
    const confirm = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "confirm", 60_000, from);
    agent.send({ type: "extension_ui_response", id: confirm["id"], confirmed: true });
    const select = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "select", 60_000, from);
    agent.send({ type: "extension_ui_response", id: select["id"], value: "b" });
    await done;
    const report = JSON.parse(notes(agent, from)[0] as string) as Record<string, unknown>;
    expect(report).toEqual({
      answer: true,
      picked: "b",
      seen: [
        { type: "ui_prompt_start", reason: "ui_prompt", kind: "confirm", title: "Proceed?" },
        { type: "ui_prompt_end", reason: "ui_prompt", kind: "confirm", title: "Proceed?" },
        // An empty title is left out, as pi does.
        { type: "ui_prompt_start", reason: "ui_prompt", kind: "select" },
        { type: "ui_prompt_end", reason: "ui_prompt", kind: "select" },
      ],
    });
    noErrors(agent);
  });
});

describe("pi.getSettings()", () => {
  it("is a copy of the global and (trusted) project settings.json merged, read when asked", async () => {
    const agentDir = tempDir("parley-agent-dir-");
    const cwd = tempDir("parley-project-");
    writeFileSync(
      join(agentDir, "settings.json"),
      JSON.stringify({ defaultProjectTrust: "always", defaultThinkingLevel: "low", compaction: { enabled: false, reserveTokens: 10 } }),
    );
    mkdirSync(join(cwd, ".pi"));
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ compaction: { reserveTokens: 1234 }, theme: "light" }));
    const agent = start("newest-api.js", ["hi"], { cwd, env: { ...process.env, PI_CODING_AGENT_DIR: agentDir } });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/settings-report" });
    // The project is trusted (defaultProjectTrust), so its file counts; an untrusted one's would not.
    const settings = { defaultProjectTrust: "always", defaultThinkingLevel: "low", compaction: { enabled: false, reserveTokens: 1234 }, theme: "light" };
    expect(JSON.parse(notes(agent, from)[0] as string)).toEqual({ settings: { ...settings, compaction: "changed by the extension" }, again: settings });
  });
});

describe("model_select's source", () => {
  it('is "set" for set_model and "cycle" for cycle_model, as in the newest pi', async () => {
    const trio = join(AGENT_FIXTURES, "..", "pi-dropin", "three-models.ts");
    const args = ["--mode", "rpc", "--no-session", "-e", trio, "-e", join(AGENT_FIXTURES, "model-select-recorder.js"), "--models", "trio/alpha,trio/beta"];
    const agent = procs.raw(args, { cwd: tempDir(), env: { ...process.env, PI_CODING_AGENT_DIR: tempDir("parley-agent-dir-") } });
    expect((await agent.request({ type: "set_model", provider: "trio", modelId: "beta" }))["success"]).toBe(true);
    expect((await agent.request({ type: "cycle_model" }))["success"]).toBe(true);
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/model-report" });
    expect(JSON.parse(notes(agent, from)[0] as string)).toEqual(["alpha->beta:set", "beta->alpha:cycle"]);
    noErrors(agent);
  });

  it('is not fired when a session switch restores the session\'s model: pi 1.6.0 declares "restore" but never emits it', async () => {
    const trio = join(AGENT_FIXTURES, "..", "pi-dropin", "three-models.ts");
    const agentDir = tempDir("parley-agent-dir-");
    // The start-up model from settings: a --model would hold for every session of the process (as in pi).
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ defaultProvider: "trio", defaultModel: "alpha" }));
    const args = ["--mode", "rpc", "-e", trio, "-e", join(AGENT_FIXTURES, "model-select-recorder.js")];
    const agent = procs.raw(args, { cwd: tempDir(), env: { ...process.env, PI_CODING_AGENT_DIR: agentDir } });
    expect((await agent.request({ type: "set_model", provider: "trio", modelId: "beta" }))["success"]).toBe(true);
    await runPrompt(agent, "remember beta", 60_000);
    const first = ((await agent.request({ type: "get_state" }))["data"] as { sessionFile: string }).sessionFile;
    expect((await agent.request({ type: "new_session" }))["success"]).toBe(true);
    expect((await agent.request({ type: "set_model", provider: "trio", modelId: "gamma" }))["success"]).toBe(true);
    // Each session has its own instance of the recorder (extensions load again on a switch, as in pi).
    let from = agent.records.length;
    await agent.request({ type: "prompt", message: "/model-report" });
    // The new session started from settings' model (set_model changes a session only, in the newest pi).
    expect(JSON.parse(notes(agent, from)[0] as string)).toEqual(["alpha->gamma:set"]);
    expect((await agent.request({ type: "switch_session", sessionPath: first }, 60_000))["success"]).toBe(true);
    const model = ((await agent.request({ type: "get_state" }))["data"] as { model: { id: string } }).model;
    expect(model.id).toBe("beta");
    from = agent.records.length;
    await agent.request({ type: "prompt", message: "/model-report" });
    expect(JSON.parse(notes(agent, from)[0] as string)).toEqual([]);
    noErrors(agent);
  });
});
