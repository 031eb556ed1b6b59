/**
 * MCP servers (the newest pi's built-in MCP support) through the spawned CLI, against servers made
 * with the official MCP SDK (fixtures/mcp/probe-server.mjs): mcp.json's servers connect, their
 * tools are declared or found with tool_search by exposure, calls and resources reach the server,
 * problems are told once, the command line and settings turn it off, and no server outlives parley.
 * The model is fixtures/mcp/mcp-model.ts: it calls what the prompt says and lists what it is offered.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { McpServer } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { agentText, startAcp } from "./helpers/acp-client.js";
import { lastAssistantText, notices } from "./helpers/agent-records.js";
import { checkedAgents } from "./helpers/checked-agents.js";
import { type AgentProcess, PARLEY_BIN, ROOT, spawnAgent } from "./helpers/spawn.js";
import { alive } from "./helpers/marker.js";
import { poll } from "./helpers/waits.js";

type Rec = Record<string, unknown>;

const SERVER = join(ROOT, "packages/agent/test/fixtures/mcp/probe-server.mjs");
const MODEL = join(ROOT, "packages/agent/test/fixtures/mcp/mcp-model.ts");
const agents = checkedAgents();

interface World {
  home: string;
  agentDir: string;
  cwd: string;
  base: string;
}

function world(servers: Record<string, unknown>, extra: Rec = {}): World {
  const base = mkdtempSync(join(tmpdir(), "parley-mcp-"));
  const home = join(base, "home");
  const agentDir = join(home, ".pi", "agent");
  const cwd = join(base, "proj");
  for (const dir of [agentDir, cwd]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers, ...extra }, null, 2));
  return { home, agentDir, cwd, base };
}

const stdio = (env: Record<string, string> = {}, more: Rec = {}): Rec => ({ command: process.execPath, args: [SERVER], env, ...more });

/** A world whose one server, `calc` (direct tools), writes its pid to the returned file when it starts. */
function pidWorld(): { w: World; pidFile: string } {
  const w = world({});
  const pidFile = join(w.base, "server.pid");
  writeFileSync(join(w.agentDir, "mcp.json"), JSON.stringify({ mcpServers: { calc: stdio({ PROBE_PID_FILE: pidFile }, { exposure: "direct" }) } }));
  return { w, pidFile };
}

/** An extension file that registers the probe server as `name` (direct tools); returns its path. */
function registeringExtension(w: World, name: string): string {
  const file = join(w.base, `registers-${name}.ts`);
  const config = { command: process.execPath, args: [SERVER], exposure: "direct" };
  writeFileSync(file, `export default function (pi: any) { pi.registerMcpServer(${JSON.stringify(name)}, ${JSON.stringify(config)}); }\n`);
  return file;
}

function start(w: World, args: string[] = [], env: NodeJS.ProcessEnv = {}): AgentProcess {
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", "-e", MODEL, "--model", "mcptest/m1", ...args], {
    cwd: w.cwd,
    env: { HOME: w.home, PI_CODING_AGENT_DIR: w.agentDir, ...env },
  });
  agents.push(agent);
  return agent;
}

/** Sends a prompt, waits for its run to end, and returns the last assistant text of it. */
async function ask(agent: AgentProcess, message: string): Promise<string> {
  const from = agent.records.length;
  const response = await agent.request({ type: "prompt", message });
  expect(response["success"], JSON.stringify(response)).toBe(true);
  await agent.waitFor(
    (r) => r.type === "agent_settled" || (r.type === "response" && r["command"] === "prompt" && (r["data"] as Rec | undefined)?.["disposition"] === "handled"),
    undefined,
    from,
  );
  return lastAssistantText(agent, from);
}

/** The /mcp status text. */
async function status(agent: AgentProcess): Promise<string> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "/mcp" });
  await agent.until(() => notices(agent, from).length > 0);
  return notices(agent, from)[0] ?? "";
}

describe("MCP servers from mcp.json", () => {
  it("declares a direct server's tools in the first request, calls them, and resolves ${VAR} in env", async () => {
    const w = world({ calc: stdio({ PROBE_SECRET: "${MCP_TEST_SECRET}" }, { exposure: "direct" }) });
    const agent = start(w, [], { MCP_TEST_SECRET: "s3cr3t" });
    const tools = (await ask(agent, "list tools")).split(",");
    expect(tools).toEqual(expect.arrayContaining(["mcp__calc__add", "mcp__calc__secret", "read_mcp_resource", "list_mcp_resources"]));
    expect(tools).not.toContain("tool_search");
    expect(await ask(agent, 'call mcp__calc__add {"a":2,"b":40}')).toBe("tool said: 42");
    expect(await ask(agent, "call mcp__calc__secret")).toBe("tool said: secret=s3cr3t");
    // The call went through parley's tool pipeline: the wire shows it as any tool call.
    expect(agent.records.some((r) => r.type === "tool_execution_end" && r["toolName"] === "mcp__calc__add")).toBe(true);
  });

  it("keeps a codemode or deferred server's tools undeclared until tool_search loads them (codemode is activated for the codemode server)", async () => {
    const w = world({ weather: stdio({ PROBE_NAME: "weather" }, { description: "Weather forecasts for cities" }), calc: stdio({}, { exposure: "deferred" }) });
    const agent = start(w);
    const first = (await ask(agent, "list tools")).split(",");
    expect(first).toContain("tool_search");
    expect(first).toContain("codemode");
    expect(first.filter((name) => name.startsWith("mcp__"))).toEqual([]);
    // The servers are named to the model, with how to reach them.
    const system = await ask(agent, "show system");
    expect(system).toContain("- mcp__weather (codemode): Weather forecasts for cities");
    expect(system).toContain("- mcp__calc (tool_search)");
    const found = await ask(agent, 'call tool_search {"query":"forecast the weather of a city"}');
    expect(found).toMatch(/^tool said: Loaded \d+ tools?/);
    expect(found.split("\n")[1]).toBe("- mcp__weather__weather_forecast: Forecast the weather of a city");
    expect((await ask(agent, "list tools")).split(",")).toContain("mcp__weather__weather_forecast");
    expect(await ask(agent, 'call mcp__weather__weather_forecast {"city":"Oslo"}')).toBe("tool said: sunny in Oslo");
  });

  it("reads resources, reports a server's isError as a failed call, and cuts long output keeping the whole in a file", async () => {
    const w = world({ calc: stdio({}, { exposure: "direct" }) });
    const agent = start(w);
    const listing = await ask(agent, "call list_mcp_resources");
    expect(JSON.parse(listing.replace(/^tool said: /, ""))).toEqual({
      resources: [{ server: "calc", uri: "file:///readme.txt", name: "readme", mimeType: "text/plain", description: "The read-me" }],
    });
    expect(await ask(agent, 'call read_mcp_resource {"server":"calc","uri":"file:///readme.txt"}')).toBe("tool said: hello from the resource");
    expect(await ask(agent, "call mcp__calc__broken")).toBe("tool failed: it broke");
    const big = await ask(agent, "call mcp__calc__big");
    expect(big.length).toBeLessThan(25_000);
    expect(big).toMatch(/truncated/);
    const saved = /(\/\S+parley-mcp-[0-9a-f]+\.txt)/.exec(big)?.[1];
    expect(saved, big.slice(-300)).toBeDefined();
    expect(readFileSync(saved as string, "utf8")).toBe(`${"x".repeat(30_000)}END`);
    // Private, as every full output parley keeps (README, Reliability).
    expect(statSync(saved as string).mode & 0o777).toBe(0o600);
  });

  it("tells bad entries and failed servers once, and /mcp shows each server's state", async () => {
    const w = world({
      calc: stdio({}, { exposure: "direct" }),
      crashing: stdio({ PROBE_FAIL_START: "1" }, { exposure: "direct" }),
      "bad name!": stdio(),
      unset: stdio({ PROBE_SECRET: "${MCP_TEST_NEVER_SET}" }),
    });
    const agent = start(w);
    await agent.until(() => notices(agent).some((n) => n.startsWith("MCP servers need attention")));
    const told = notices(agent).filter((n) => n.startsWith("MCP servers need attention"));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain("bad name!");
    expect(told[0]).toMatch(/crashing: failed: /);
    expect(told[0]).toMatch(/unset: failed: Failed to resolve MCP server "unset" env "PROBE_SECRET" from environment variable: MCP_TEST_NEVER_SET/);
    const shown = await status(agent);
    expect(shown).toMatch(/^calc: connected, 8 tools, resources \(direct\)$/m);
    expect(shown).toContain("probe: refusing to start (PROBE_FAIL_START)");
    expect(shown).toMatch(/^config error: .*bad name!/m);
    // The good server works regardless.
    expect(await ask(agent, 'call mcp__calc__add {"a":1,"b":1}')).toBe("tool said: 2");
  });

  it("reads a project's .pi/mcp.json only in a trusted project, where it can turn a user's server off", async () => {
    const w = world({ calc: stdio({}, { exposure: "direct" }) });
    mkdirSync(join(w.cwd, ".pi"), { recursive: true });
    writeFileSync(
      join(w.cwd, ".pi", "mcp.json"),
      JSON.stringify({ mcpServers: { calc: { enabled: false }, extra: stdio({ PROBE_NAME: "extra" }, { exposure: "direct" }) } }),
    );
    const untrusted = start(w, ["--no-approve"]);
    const plain = (await ask(untrusted, "list tools")).split(",");
    expect(plain).toContain("mcp__calc__add");
    expect(plain.some((name) => name.startsWith("mcp__extra__"))).toBe(false);
    const trusted = start(w, ["--approve"]);
    const project = (await ask(trusted, "list tools")).split(",");
    expect(project).toContain("mcp__extra__add");
    expect(project.some((name) => name.startsWith("mcp__calc__"))).toBe(false);
    expect(await status(trusted)).toMatch(/^calc: disabled/m);
  });

  it("reaches a Streamable HTTP server with a header from the environment or a provider's key (auth.provider), and says what to do when one needs sign-in", async () => {
    const portFile = join(mkdtempSync(join(tmpdir(), "parley-mcp-port-")), "port");
    // It accepts the header's token and the mcptest provider's API key (the model fixture's).
    const server = spawnAgent(process.execPath, [SERVER, "--http", portFile], { env: { PROBE_TOKEN: "tok-1,mcptest-key" }, checkSchema: false });
    agents.push(server);
    await poll(() => existsSync(portFile) && readFileSync(portFile, "utf8").length > 0, "the HTTP server's port");
    const url = `http://127.0.0.1:${readFileSync(portFile, "utf8")}/mcp`;
    const w = world({
      remote: { url, headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}" }, exposure: "direct" },
      keyed: { url, auth: { provider: "mcptest" }, exposure: "direct" },
      locked: { url, exposure: "direct" },
    });
    const agent = start(w, [], { MCP_TEST_TOKEN: "tok-1" });
    expect(await ask(agent, 'call mcp__remote__add {"a":20,"b":22}')).toBe("tool said: 42");
    expect(await ask(agent, 'call mcp__keyed__add {"a":1,"b":1}')).toBe("tool said: 2");
    const shown = await status(agent);
    expect(shown).toMatch(/^remote: connected, 8 tools/m);
    expect(shown).toMatch(/^locked: needs sign-in/m);
    expect(shown).toContain('MCP server "locked" requires sign-in. Run "parley mcp login locked" to sign in.');
  });
});

describe("MCP servers that misbehave", () => {
  it("an abort during a call the server never answers ends the run at once, and the server stays usable", async () => {
    const agent = start(world({ calc: stdio({}, { exposure: "direct" }) }));
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "call mcp__calc__hang" });
    await agent.waitFor((r) => r.type === "tool_execution_start" && r["toolName"] === "mcp__calc__hang", undefined, from);
    expect((await agent.request({ type: "abort" }))["success"]).toBe(true);
    const end = await agent.waitFor((r) => r.type === "tool_execution_end", undefined, from);
    expect(end["isError"]).toBe(true);
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    expect(await ask(agent, 'call mcp__calc__add {"a":2,"b":2}')).toBe("tool said: 4");
  });

  it("a server that dies is shown disconnected, and the next call starts it again", async () => {
    const agent = start(world({ calc: stdio({}, { exposure: "direct" }) }));
    expect(await ask(agent, "call mcp__calc__crash")).toMatch(/^tool failed: /);
    expect(await status(agent)).toMatch(/^calc: disconnected, reconnects on the next call \(direct\)$/m);
    expect(await ask(agent, 'call mcp__calc__add {"a":3,"b":3}')).toBe("tool said: 6");
  });

  it("/mcp reconnect starts a dead server again at once; a name that is not configured is said", async () => {
    const agent = start(world({ calc: stdio({}, { exposure: "direct" }) }));
    expect(await ask(agent, "call mcp__calc__crash")).toMatch(/^tool failed: /);
    let from = agent.records.length;
    await agent.request({ type: "prompt", message: "/mcp reconnect" });
    await agent.until(() => notices(agent, from).length > 0);
    expect(notices(agent, from)[0]).toBe('Reconnected to MCP server "calc" (connected, 8 tools, resources).');
    expect(await status(agent)).toMatch(/^calc: connected, 8 tools, resources \(direct\)$/m);
    from = agent.records.length;
    await agent.request({ type: "prompt", message: "/mcp reconnect nope" });
    await agent.until(() => notices(agent, from).length > 0);
    expect(notices(agent, from)[0]).toBe('No enabled MCP server named "nope".');
  });

  it("a new session connects its servers again and ends the previous session's", async () => {
    const { w, pidFile } = pidWorld();
    const agent = start(w);
    expect(await ask(agent, 'call mcp__calc__add {"a":1,"b":1}')).toBe("tool said: 2");
    const first = Number(readFileSync(pidFile, "utf8"));
    expect((await agent.request({ type: "new_session" }))["success"]).toBe(true);
    expect(await ask(agent, 'call mcp__calc__add {"a":2,"b":2}')).toBe("tool said: 4");
    const second = Number(readFileSync(pidFile, "utf8"));
    expect(second).not.toBe(first);
    await poll(() => !alive(first), `the first session's MCP server (pid ${first}) to end`);
    expect(alive(second)).toBe(true);
  });
});

describe("a server that asks its user (MCP elicitation)", () => {
  it("each field is a dialog of the extension UI, and the answers go back to the server", async () => {
    const agent = start(world({ calc: stdio({}, { exposure: "direct" }) }));
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "call mcp__calc__ask" });
    const dialog = (method: string) => agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === method, undefined, from);
    const select = await dialog("select");
    expect(select).toMatchObject({ title: "calc: Deploy? (Environment)", options: ["staging", "prod"] });
    agent.send({ type: "extension_ui_response", id: select["id"], value: "prod" });
    const count = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "input", undefined, from);
    expect(count["title"]).toBe("calc: Deploy? (Replicas)");
    agent.send({ type: "extension_ui_response", id: count["id"], value: "three" });
    // Not a number: asked again.
    const again = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "input" && r["id"] !== count["id"], undefined, from);
    agent.send({ type: "extension_ui_response", id: again["id"], value: "3" });
    const sure = await dialog("confirm");
    agent.send({ type: "extension_ui_response", id: sure["id"], confirmed: true });
    const note = await agent.waitFor(
      (r) => r.type === "extension_ui_request" && r["method"] === "input" && r["id"] !== count["id"] && r["id"] !== again["id"],
      undefined,
      from,
    );
    agent.send({ type: "extension_ui_response", id: note["id"], value: "" });
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    const said = agent.records
      .slice(from)
      .filter((r) => r.type === "message_end" && (r["message"] as Rec)["role"] === "assistant")
      .at(-1);
    const text = ((said?.["message"] as Rec)["content"] as Rec[])[0]?.["text"];
    expect(JSON.parse(String(text).replace(/^tool said: /, ""))).toEqual({ action: "accept", content: { env: "prod", replicas: 3, sure: true } });
  });

  it("a dismissed dialog cancels the request", async () => {
    const agent = start(world({ calc: stdio({}, { exposure: "direct" }) }));
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "call mcp__calc__ask" });
    const select = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "select", undefined, from);
    agent.send({ type: "extension_ui_response", id: select["id"], cancelled: true });
    await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
    expect(await ask(agent, 'call mcp__calc__add {"a":1,"b":1}')).toBe("tool said: 2");
    const results = agent.records.filter((r) => r.type === "tool_execution_end" && r["toolName"] === "mcp__calc__ask");
    expect(((results[0]?.["result"] as Rec)["content"] as Rec[])[0]?.["text"]).toBe('{"action":"cancel"}');
  });
});

describe("MCP servers from extensions", () => {
  it("a registration pi would refuse throws to the extension, in pi's words", async () => {
    const w = world({});
    const extension = join(w.base, "bad-registration.ts");
    writeFileSync(
      extension,
      [
        "export default function (pi: any) {",
        "  const said: string[] = [];",
        '  for (const [name, config] of [["bad name", { command: "x" }], ["nothing", {}], ["a-b", { command: "x" }], ["a_b", { command: "x" }]] as const) {',
        "    try { pi.registerMcpServer(name, config); said.push(`${name}: ok`); } catch (error) { said.push(`${name}: ${(error as Error).message}`); }",
        "  }",
        '  pi.registerCommand("said", { handler: async (_a: string, ctx: any) => ctx.ui.notify(said.join("\\n")) });',
        "}",
      ].join("\n"),
    );
    const agent = start(w, ["-e", extension, "--no-mcp"]);
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "/said" });
    await agent.until(() => notices(agent, from).length > 0);
    expect(notices(agent, from)[0]?.split("\n")).toEqual([
      `bad name: Invalid MCP server registered by extension "${extension}": invalid server name "bad name" (use letters, digits, "_" and "-")`,
      `nothing: Invalid MCP server registered by extension "${extension}": server "nothing" needs either "command" (stdio) or "url" (streamable HTTP)`,
      "a-b: ok",
      'a_b: MCP server "a_b" conflicts with registered server "a-b"',
    ]);
  });

  it("connects a server an extension registers with pi.registerMcpServer, with no error about it", async () => {
    const w = world({});
    const agent = start(w, ["-e", registeringExtension(w, "fromext")]);
    expect(await ask(agent, 'call mcp__fromext__add {"a":3,"b":4}')).toBe("tool said: 7");
    expect(agent.records.filter((r) => r.type === "extension_error")).toEqual([]);
  });
});

describe("turning MCP off", () => {
  const calc = () => world({ calc: stdio({}, { exposure: "direct" }) });
  const mcpTools = async (agent: AgentProcess) =>
    (await ask(agent, "list tools")).split(",").filter((name) => name.startsWith("mcp__") || name === "tool_search");

  it("--no-mcp, -ne and the settings' -builtin:mcp keep servers unconnected; -ne -e builtin:mcp connects them", async () => {
    expect(await mcpTools(start(calc(), ["--no-mcp"]))).toEqual([]);
    expect(await mcpTools(start(calc(), ["-ne"]))).toEqual([]);
    const off = calc();
    writeFileSync(join(off.agentDir, "settings.json"), JSON.stringify({ extensions: ["-builtin:mcp"] }));
    expect(await mcpTools(start(off))).toEqual([]);
    expect(await mcpTools(start(calc(), ["-ne", "-e", "builtin:mcp"]))).toContain("mcp__calc__add");
  });

  it("--no-mcp leaves /mcp to the model, and get_commands lists /mcp only when MCP is on", async () => {
    const on = start(calc());
    const commands = (await on.request({ type: "get_commands" }))["data"] as { commands: Rec[] };
    expect(commands.commands.find((c) => c["name"] === "mcp")).toMatchObject({ source: "extension", sourceInfo: { path: "builtin:mcp", source: "builtin" } });
    const off = start(calc(), ["--no-mcp"]);
    const none = (await off.request({ type: "get_commands" }))["data"] as { commands: Rec[] };
    expect(none.commands.some((c) => c["name"] === "mcp")).toBe(false);
  });
});

describe("--tools and MCP tools", () => {
  it("an allowlist without mcp__ entries declares no MCP tool, but tool_search it names still loads them", async () => {
    const direct = world({ calc: stdio({}, { exposure: "direct" }) });
    expect(await ask(start(direct, ["--tools", "read,bash"]), "list tools")).toBe("bash,read");
    const deferred = world({ calc: stdio({}, { exposure: "deferred" }) });
    const agent = start(deferred, ["--tools", "read,tool_search"]);
    expect(await ask(agent, "list tools")).toBe("read,tool_search");
    expect(await ask(agent, 'call tool_search {"query":"add two numbers"}')).toMatch(/^tool said: Loaded \d+ tools?.*\n- mcp__calc__add: /s);
    expect((await ask(agent, "list tools")).split(",")).toContain("mcp__calc__add");
  });

  it("an allowlist with mcp__ patterns keeps only the MCP tools it matches", async () => {
    const w = world({ calc: stdio({}, { exposure: "direct" }) });
    const agent = start(w, ["--tools", "read,mcp__calc__ad*"]);
    expect(await ask(agent, "list tools")).toBe("mcp__calc__add,read");
    expect(await ask(agent, 'call mcp__calc__add {"a":5,"b":5}')).toBe("tool said: 10");
  });
});

describe("MCP servers an ACP client offers", () => {
  it("initialize offers stdio and HTTP; session/new's stdio server connects with the client's env taken literally, for that session only", async () => {
    const w = world({});
    const h = await startAcp(["--session-dir", join(w.base, "sessions"), "-e", MODEL, "--model", "mcptest/m1"], { cwd: w.cwd, home: w.home });
    try {
      const offered: McpServer = {
        name: "editor tools",
        command: process.execPath,
        args: [SERVER],
        env: [
          { name: "PROBE_SECRET", value: "$HOME and !not-a-command" },
          { name: "PROBE_NAME", value: "editor" },
        ],
      };
      const { sessionId } = await h.agent.request("session/new", { cwd: w.cwd, mcpServers: [offered] });
      await h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "call mcp__editor_tools__secret" }] });
      expect(agentText(h, sessionId)).toContain("tool said: secret=$HOME and !not-a-command");
      // Another session, offered nothing, has none of them.
      const { sessionId: otherId } = await h.agent.request("session/new", { cwd: w.cwd, mcpServers: [] });
      await h.agent.request("session/prompt", { sessionId: otherId, prompt: [{ type: "text", text: "list tools" }] });
      expect(agentText(h, otherId)).not.toContain("mcp__");
      const { agentCapabilities } = await h.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      expect(agentCapabilities?.mcpCapabilities).toEqual({ http: true, sse: false });
    } finally {
      await h.close();
    }
  });
});

describe("parley mcp (the newest pi's `pi mcp`)", () => {
  const run = (w: World, args: string[]) =>
    spawnSync(process.execPath, [join(ROOT, "packages/agent/bin/parley.js"), "mcp", ...args], {
      cwd: w.cwd,
      env: { ...process.env, HOME: w.home, PI_CODING_AGENT_DIR: w.agentDir },
      encoding: "utf8",
      timeout: 60_000,
    });

  it("list connects each enabled server and says its state, tools and errors; exit 1 when one fails or an entry is invalid", () => {
    const w = world({ calc: stdio({}, { exposure: "direct", toolExposure: { big: "hidden" } }), off: stdio({}, { enabled: false }) });
    const good = run(w, ["list"]);
    expect(good.status, good.stderr).toBe(0);
    expect(good.stdout).toContain("calc: connected, 8 tools (direct, global)\n");
    expect(good.stdout).toMatch(/^ {2}tools: add, secret, big \[hidden\], broken, weather_forecast, hang, ask, crash$/m);
    expect(good.stdout).toContain("  offers resources\n");
    expect(good.stdout).toContain("off: disabled (codemode, global)\n");
    const json = JSON.parse(run(w, ["list", "--json"]).stdout) as { servers: Rec[]; errors: string[] };
    expect(json.servers.map((server) => [server["name"], server["state"]])).toEqual([
      ["calc", "connected"],
      ["off", "disabled"],
    ]);
    const bad = world({ calc: stdio({}, { exposure: "direct" }), crashing: stdio({ PROBE_FAIL_START: "1" }), "no good": stdio() });
    const failed = run(bad, ["list"]);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toContain("crashing: failed (codemode, global)");
    expect(failed.stdout).toContain("probe: refusing to start (PROBE_FAIL_START)");
    expect(failed.stdout).toMatch(/^config error: .*no good/m);
  });

  it("login and logout of a server that does not use OAuth say so (as pi), and change nothing", () => {
    const w = world({ calc: stdio() });
    const before = readFileSync(join(w.agentDir, "mcp.json"), "utf8");
    for (const command of ["login", "logout"]) {
      const result = run(w, [command, "calc"]);
      expect(result.status).toBe(1);
      expect(result.stderr).toBe('MCP server "calc" does not use OAuth. Only HTTP servers without an Authorization header do.\n');
    }
    expect(readFileSync(join(w.agentDir, "mcp.json"), "utf8")).toBe(before);
    expect(existsSync(join(w.agentDir, "mcp-auth.json"))).toBe(false);
  });
});

describe("start-up without MCP servers", () => {
  it("loads no MCP client (its transports load once a server is configured)", async () => {
    const watch = join(ROOT, "packages/agent/test/fixtures/mcp/module-watch.cjs");
    const env = { NODE_OPTIONS: `--require ${watch}` };
    const bare = world({});
    rmSync(join(bare.agentDir, "mcp.json"));
    const none = start(bare, [], env);
    expect(await ask(none, "list tools")).not.toContain("mcp__");
    expect(none.stderr()).not.toContain("module-watch: cross-spawn");
    const some = start(world({ calc: stdio({}, { exposure: "direct" }) }), [], env);
    expect(await ask(some, "list tools")).toContain("mcp__calc__add");
    expect(some.stderr()).toContain("module-watch: cross-spawn");
  });
});

describe("MCP servers an ACP client offers, beside an extension's", () => {
  it("a client's server whose name an extension took is reported, and the session opens with the extension's", async () => {
    const w = world({});
    const extension = registeringExtension(w, "dup");
    const h = await startAcp(["--session-dir", join(w.base, "sessions"), "-e", MODEL, "-e", extension, "--model", "mcptest/m1"], { cwd: w.cwd, home: w.home });
    try {
      const offered: McpServer = { name: "dup", command: process.execPath, args: [SERVER], env: [] };
      const { sessionId } = await h.agent.request("session/new", { cwd: w.cwd, mcpServers: [offered] });
      await h.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: 'call mcp__dup__add {"a":4,"b":4}' }] });
      expect(agentText(h, sessionId)).toContain("tool said: 8");
      expect(h.stderr()).toContain('MCP server "dup" is already registered by extension');
    } finally {
      await h.close();
    }
  });
});

describe("MCP server processes", () => {
  it("ends a stdio server with parley, also when parley is killed", async () => {
    for (const signal of ["stdin closed", "SIGKILL"] as const) {
      const { w, pidFile } = pidWorld();
      const agent = start(w);
      expect(await ask(agent, 'call mcp__calc__add {"a":1,"b":2}')).toBe("tool said: 3");
      const pid = Number(readFileSync(pidFile, "utf8"));
      expect(alive(pid)).toBe(true);
      if (signal === "SIGKILL") agent.child.kill("SIGKILL");
      else agent.closeInput();
      await agent.exited;
      await poll(() => !alive(pid), `the MCP server (pid ${pid}) to end after ${signal}`);
    }
  });
});

// Issue 34, item 11: servers that break the protocol get a clear answer at once.
describe("MCP servers that misbehave", () => {
  it("a result over the 16 MB stdio limit fails the call at once, saying so (not a timeout); the next call reconnects", async () => {
    const w = world({ calc: stdio({ PROBE_MISBEHAVE: "1" }, { exposure: "direct", timeout: 600 }) });
    const agent = start(w);
    const started = Date.now();
    expect(await ask(agent, "call mcp__calc__huge")).toMatch(/^tool failed: MCP server "calc": it sent a message larger than MCP's stdio limit of 16 MB/);
    // Far below the server's 600 s timeout.
    expect(Date.now() - started).toBeLessThan(120_000);
    expect(await ask(agent, 'call mcp__calc__add {"a":1,"b":2}')).toBe("tool said: 3");
  });

  it("a server flooding its stdout with garbage is cut off at once: the call fails saying so, and the server process is gone", async () => {
    const { w, pidFile } = pidWorld();
    writeFileSync(
      join(w.agentDir, "mcp.json"),
      JSON.stringify({ mcpServers: { calc: stdio({ PROBE_PID_FILE: pidFile, PROBE_MISBEHAVE: "1" }, { exposure: "direct", timeout: 600 }) } }),
    );
    const agent = start(w);
    expect(await ask(agent, "call mcp__calc__flood")).toMatch(/^tool failed: MCP server "calc": it flooded its stdout with output that is not JSON-RPC/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    await poll(() => !alive(pid), "the flooding server ended");
  });

  it("malformed tools/list entries are skipped and named; the server's good tools work", async () => {
    const w = world({ calc: stdio({ PROBE_BAD_TOOLS: "1" }, { exposure: "direct" }) });
    const agent = start(w);
    const tools = (await ask(agent, "list tools")).split(",");
    expect(tools).toContain("mcp__calc__add");
    expect(tools.filter((name) => name.startsWith("mcp__calc__"))).toEqual(["mcp__calc__add"]);
    expect(await ask(agent, 'call mcp__calc__add {"a":2,"b":3}')).toBe("tool said: 5");
    const told = notices(agent).join("\n");
    expect(told).toContain('calc: malformed tools/list entries skipped: tool "no_schema" (no inputSchema), tool #3 (no name), tool #4 (not an object)');
    expect(await status(agent)).toMatch(/calc: connected.*\n\s+skipped \(malformed\): tool "no_schema" \(no inputSchema\)/);
  });
});
