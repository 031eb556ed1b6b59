/**
 * The newest pi's (1.6.0) extension surface, through the spawned CLI: extensions written for it
 * load in parley and get what pi's RPC mode gives them.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AGENT_FIXTURES, notes, processRegistry, runPrompt, tempDir, writeScript } from "./fixtures/agent/harness.js";
import type { AgentProcess } from "./helpers/spawn.js";

const procs = processRegistry();
const noErrors = (agent: AgentProcess) => expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);

function start(fixture: string, replies: string[] = ["hi"]): AgentProcess {
  return procs.raw(["--mode", "rpc", "--no-session", "--model-script", writeScript(replies), "-e", join(AGENT_FIXTURES, fixture)], { cwd: tempDir() });
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

describe("pi 1.6.0's ExtensionAPI members", () => {
  it("pi.on returns an unsubscribe; registerToolRenderer is accepted; an MCP server is kept, listed, removed, and reported as not connected", async () => {
    const agent = start("newest-api.js", ["one", "two"]);
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
      servers: [server],
      afterUnregister: [],
    });
    const errors = agent.records.filter((r) => r.type === "extension_error");
    expect(errors.map((r) => [r["event"], r["error"]])).toEqual([
      ["register_mcp_server", 'MCP server "jira" is registered, but no loaded extension connects MCP servers (parley has no built-in MCP support)'],
    ]);
  });
});
