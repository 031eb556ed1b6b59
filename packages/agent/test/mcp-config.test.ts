/**
 * The MCP pieces on their own: `mcp.json` as pi reads it (files that are not JSON or not files,
 * overrides, clashes, trust), `env`/`headers` values (`$VAR`, `${VAR}`, `$$`, `$!`, `!command`),
 * tool exposure, and how tool_search ranks. (The whole of it, through the spawned CLI, is in
 * mcp.e2e.test.ts.)
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadMcpConfig, toolExposureOf, validateMcpServer } from "../src/mcp/config.js";
import { resolveMcpValue } from "../src/mcp/config-values.js";
import { rankTools } from "../src/mcp/tool-ranker.js";

function places(user?: unknown, project?: unknown): { agentDir: string; cwd: string } {
  const base = mkdtempSync(join(tmpdir(), "parley-mcp-config-"));
  const agentDir = join(base, "agent");
  const cwd = join(base, "proj");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(join(cwd, ".pi"), { recursive: true });
  const write = (path: string, value: unknown) => writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  if (user !== undefined) write(join(agentDir, "mcp.json"), user);
  if (project !== undefined) write(join(cwd, ".pi", "mcp.json"), project);
  return { agentDir, cwd };
}

describe("env and headers values", () => {
  const env = { TOKEN: "t0k", EMPTY: "" };
  it("reads variables, keeps what names none, and escapes $ and !", () => {
    expect(resolveMcpValue("Bearer ${TOKEN}", "v", env)).toBe("Bearer t0k");
    expect(resolveMcpValue("$TOKEN-suffix", "v", env)).toBe("t0k-suffix");
    expect(resolveMcpValue("a$$b $!c", "v", env)).toBe("a$b !c");
    expect(resolveMcpValue("${not a name} $ 5$", "v", env)).toBe("${not a name} $ 5$");
    expect(resolveMcpValue("${unclosed", "v", env)).toBe("${unclosed");
    expect(resolveMcpValue("plain", "v", env)).toBe("plain");
  });

  it("names every unset variable, an empty one included, and a command that fails", () => {
    expect(() => resolveMcpValue("${MISSING_ONE}", 'MCP server "x" env "A"', env)).toThrow(
      'Failed to resolve MCP server "x" env "A" from environment variable: MISSING_ONE',
    );
    expect(() => resolveMcpValue("$EMPTY:$MISSING_TWO", "h", env)).toThrow("Failed to resolve h from environment variables: EMPTY, MISSING_TWO");
    expect(resolveMcpValue("!echo from-a-command", "v", env)).toBe("from-a-command");
    expect(() => resolveMcpValue("!exit 3", "v", env)).toThrow("Failed to resolve v from shell command: exit 3");
  });
});

describe("mcp.json", () => {
  const server = { command: "node", args: ["server.js"] };

  it("reports a file that is not JSON, not an object, or not a file, and goes on with the other", () => {
    const broken = places("{ not json", { mcpServers: { p: server } });
    const loaded = loadMcpConfig({ ...broken, projectTrusted: true });
    expect(loaded.servers.map((s) => s.name)).toEqual(["p"]);
    expect(loaded.errors).toEqual([expect.stringMatching(/agent\/mcp\.json: .*JSON/)]);
    expect(loadMcpConfig({ ...places({ mcpServers: [] }), projectTrusted: false }).errors).toEqual([
      expect.stringContaining('expected an object with an "mcpServers" object'),
    ]);
    const folder = places();
    mkdirSync(join(folder.agentDir, "mcp.json"));
    expect(loadMcpConfig({ ...folder, projectTrusted: false }).errors).toEqual([expect.stringContaining("EISDIR")]);
  });

  it("reads the project's file only when trusted; its entries replace the user's, overrides change only what they may", () => {
    const both = places(
      { mcpServers: { shared: { ...server, env: { KEY: "user" } }, kept: server, over: { ...server, env: { SECRET: "s" } } } },
      { mcpServers: { shared: { url: "https://example.com/mcp" }, over: { enabled: false, exposure: "direct" }, bad: { enabled: false }, wider: { env: {} } } },
    );
    expect(loadMcpConfig({ ...both, projectTrusted: false }).servers.map((s) => s.scope)).toEqual(["global", "global", "global"]);
    const trusted = loadMcpConfig({ ...both, projectTrusted: true });
    const byName = new Map(trusted.servers.map((s) => [s.name, s]));
    expect(byName.get("shared")).toMatchObject({ scope: "project", config: { kind: "http", url: "https://example.com/mcp" } });
    // The override keeps the user's env (a project cannot set credentials this way).
    expect(byName.get("over")).toMatchObject({ scope: "global", config: { enabled: false, exposure: "direct", env: { SECRET: "s" } } });
    expect(byName.get("over")?.override).toMatch(/proj\/\.pi\/mcp\.json$/);
    expect(trusted.errors).toEqual([
      expect.stringContaining('server "bad" needs "command" or "url", or a global server to override'),
      expect.stringContaining('server "wider" needs "command" or "url", or a global server to override'),
    ]);
  });

  it("refuses names that share a namespace, auth in a project, and bad exposures, in pi's words", () => {
    const files = places(
      { mcpServers: { "a-b": server, a_b: server, odd: { ...server, exposure: "sometimes" }, old: { ...server, exposure: "codemode-deferred" } } },
      { mcpServers: { keyed: { url: "https://example.com/mcp", auth: { provider: "openai" } } } },
    );
    const loaded = loadMcpConfig({ ...files, projectTrusted: true });
    expect(loaded.servers.map((s) => [s.name, s.config.exposure])).toEqual([
      ["a-b", undefined],
      ["old", "codemode"],
    ]);
    expect(loaded.errors).toEqual([
      expect.stringContaining('server "a_b" conflicts with "a-b"'),
      expect.stringContaining('server "odd": exposure must be one of "codemode", "deferred", "direct", "hidden"'),
      expect.stringContaining('server "keyed": auth is only allowed in the global mcp.json'),
    ]);
    expect(validateMcpServer("x", { url: "http://example.com/mcp", auth: { provider: "openai" } })).toBe(
      'server "x": auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]',
    );
    expect(validateMcpServer("x", { url: "http://127.0.0.1:9/mcp", auth: { provider: "openai" } })).toMatchObject({ auth: { provider: "openai" } });
  });

  it("gives a tool the exposure of its exact name, else of its first matching pattern, else the server's", () => {
    const config = { exposure: "deferred" as const, toolExposure: { "get_*": "direct" as const, get_secret: "hidden" as const, "*": "codemode" as const } };
    expect(toolExposureOf(config, "get_secret")).toBe("hidden");
    expect(toolExposureOf(config, "get_file")).toBe("direct");
    expect(toolExposureOf(config, "put_file")).toBe("codemode");
    expect(toolExposureOf({}, "anything")).toBe("codemode");
  });
});

describe("tool_search's ranking", () => {
  const tools = [
    { name: "mcp__github__search_code", description: "Search code across repositories" },
    {
      name: "mcp__github__create_issue",
      description: "Open a new issue in a repository",
      parameters: { properties: { title: { description: "Issue title" } } },
    },
    { name: "mcp__weather__forecast", description: "Weather forecast for a city", namespace: { name: "mcp__weather", description: "Weather data" } },
    { name: "mcp__files__readFile", description: "Read a file from disk" },
  ];

  it("puts a tool first when the query is its name or its last part, and finds words in names, descriptions and arguments", () => {
    expect(rankTools("create_issue", tools, 8)[0]?.name).toBe("mcp__github__create_issue");
    expect(rankTools("mcp__github__search_code", tools, 8)[0]?.name).toBe("mcp__github__search_code");
    expect(rankTools("open issues", tools, 8)[0]?.name).toBe("mcp__github__create_issue");
    expect(rankTools("read file", tools, 8)[0]?.name).toBe("mcp__files__readFile");
    expect(rankTools("forecast", tools, 8).map((t) => t.name)).toEqual(["mcp__weather__forecast"]);
  });

  it("honours the limit and finds nothing for stop words alone", () => {
    expect(rankTools("a the of", tools, 8)).toEqual([]);
    expect(rankTools("search issue file forecast", tools, 2)).toHaveLength(2);
  });
});
