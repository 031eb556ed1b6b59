/**
 * `parley mcp list [--json]`, the newest pi's `pi mcp list`: connects every enabled server of
 * `mcp.json` (a project's only when it is trusted in trust.json) and says its state, tools and
 * errors; exit status 1 when an entry is invalid or an enabled server did not connect. `add` and
 * `remove` change `mcp.json` as pi's do (mcp-edit-cli.ts); `login` and `logout` sign in to an
 * OAuth server and out again (mcp-login-cli.ts). No extensions load.
 */
import { existsSync } from "node:fs";
import { storedTrust } from "../config/trust-store.js";
import { loadMcpConfig, type McpServerEntry, toolExposureOf } from "./config.js";
import { commandConnection } from "./connection.js";
import { McpAuthStore } from "./mcp-auth-store.js";
import { MCP_HELP_HINT, type McpCliOptions, noServersConfigured, projectMcpFile, signInCommand } from "./names.js";

const USAGE = "Usage: parley mcp list [--json]";
const HELP = `Usage:
  parley mcp add <server> [options] -- <command> [args...]
  parley mcp add <server> [options] --url <url>
  parley mcp remove <server> [-l]
  parley mcp list [--json]
  parley mcp login <server> [-l] [--timeout <seconds>]
  parley mcp logout <server> [-l]

The MCP servers of ~/.pi/agent/mcp.json and, in a trusted project, .pi/mcp.json, as pi's
\`pi mcp\` sees them. No session starts and no extension loads.

  add <server>     add a server to mcp.json, or replace the one of that name
  remove <server>  take a server out of mcp.json
  list             connect each enabled server, say its state, tools and errors (exit 1 on a failure)
  login <server>   sign in to an OAuth server: open the printed URL in a browser
  logout <server>  delete the server's stored OAuth credentials

  -l, --local      add/remove/login/logout: the project's .pi/mcp.json instead of the user's
  --timeout <s>    login: the time limit for the whole sign-in (default: 300)

Options for add (as pi's): --url <url>, --env KEY=VALUE (repeatable), --cwd <dir>,
--header KEY=VALUE (repeatable), --bearer-token-env-var <NAME>, --oauth-client-id <id>,
--oauth-client-secret <secret>, --oauth-callback-port <port>, --oauth-client-name <name>,
--oauth-client-registration auto|cimd|dcr, --exposure codemode|deferred|direct|hidden,
--description <text>. list takes --json.`;

function transportOf(entry: McpServerEntry): string {
  const { config } = entry;
  return config.kind === "http" ? config.url : [config.command, ...(config.args ?? [])].join(" ");
}

interface Report {
  name: string;
  scope: string;
  source: string;
  override?: string;
  enabled: boolean;
  exposure: string;
  transport: string;
  authProvider?: string;
  state: string;
  tools: string[];
  toolExposure?: Record<string, string>;
  resources?: true;
  error?: string;
}

async function report(entry: McpServerEntry, options: McpCliOptions): Promise<Report> {
  const exposure = entry.config.exposure ?? "codemode";
  const base: Report = {
    name: entry.name,
    scope: entry.scope,
    source: entry.source,
    ...(entry.override ? { override: entry.override } : {}),
    enabled: entry.config.enabled !== false,
    exposure,
    transport: transportOf(entry),
    ...(entry.config.kind === "http" && entry.config.auth ? { authProvider: entry.config.auth.provider } : {}),
    state: "disabled",
    tools: [],
  };
  if (!base.enabled) return base;
  const connection = commandConnection(entry, options.cwd, options.version, new McpAuthStore(options.agentDir));
  try {
    await connection.getClient();
  } catch {
    // The connection keeps the state and the error.
  }
  const overrides = connection.tools.flatMap((tool) => {
    const own = toolExposureOf(entry.config, tool.name);
    return own === exposure ? [] : [[tool.name, own] as const];
  });
  const result: Report = {
    ...base,
    state: connection.state,
    tools: connection.tools.map((tool) => tool.name),
    ...(overrides.length > 0 ? { toolExposure: Object.fromEntries(overrides) } : {}),
    ...(connection.hasResources ? { resources: true as const } : {}),
    // A server waiting for a sign-in is told by its "sign in with" line (pi gives no error then).
    ...(connection.state !== "connected" && connection.state !== "needs-auth" && connection.error ? { error: connection.error } : {}),
  };
  await connection.close();
  return result;
}

export async function runMcpCommand(args: readonly string[], options: McpCliOptions): Promise<number> {
  const [command, ...rest] = args;
  // As pi: a --help anywhere (even among a server's own arguments) prints the help.
  if (command === undefined || command === "help" || args.includes("--help") || args.includes("-h")) {
    options.out(HELP);
    return 0;
  }
  if (command === "add" || command === "remove") {
    const { addServer, removeServer } = await import("./mcp-edit-cli.js");
    return (command === "add" ? addServer : removeServer)(rest, options);
  }
  if (command === "login" || command === "logout") {
    const { runMcpLogin } = await import("./mcp-login-cli.js");
    return runMcpLogin(command, rest, options);
  }
  if (command !== "list") {
    options.err(`Unknown mcp command "${command}".\n${MCP_HELP_HINT}`);
    return 1;
  }
  const json = rest.includes("--json");
  if (rest.some((arg) => arg !== "--json")) {
    options.err(USAGE);
    return 1;
  }
  const projectTrusted = storedTrust(options.agentDir, options.cwd).decision === true;
  const loaded = loadMcpConfig({ agentDir: options.agentDir, cwd: options.cwd, projectTrusted });
  const projectFile = projectMcpFile(options.cwd);
  const untrusted = !projectTrusted && existsSync(projectFile) ? `${projectFile} is ignored because the project is not trusted.` : undefined;
  const reports = await Promise.all(loaded.servers.map((entry) => report(entry, options)));
  const failed = loaded.errors.length > 0 || reports.some((r) => r.enabled && r.state !== "connected");
  if (json) {
    options.out(JSON.stringify({ servers: reports, errors: loaded.errors, ...(untrusted ? { note: untrusted } : {}) }, null, 2));
    return failed ? 1 : 0;
  }
  if (reports.length === 0 && loaded.errors.length === 0) options.out(noServersConfigured(options.agentDir));
  for (const r of reports) {
    const state =
      r.state === "connected" ? `connected, ${r.tools.length} tool${r.tools.length === 1 ? "" : "s"}` : r.state === "needs-auth" ? "needs sign-in" : r.state;
    options.out(`${r.name}: ${state} (${r.exposure}, ${r.scope})`);
    options.out(`  ${r.transport}`);
    if (r.override) options.out(`  project override: ${r.override}`);
    if (r.state === "needs-auth") options.out(`  sign in with: ${r.authProvider ? `/login ${r.authProvider} in parley` : signInCommand(r.name)}`);
    if (r.tools.length > 0) options.out(`  tools: ${r.tools.map((tool) => (r.toolExposure?.[tool] ? `${tool} [${r.toolExposure[tool]}]` : tool)).join(", ")}`);
    if (r.resources) options.out("  offers resources");
    if (r.error) options.out(`  ${r.error.split("\n").join("\n  ")}`);
  }
  for (const error of loaded.errors) options.out(`config error: ${error}`);
  if (untrusted) options.out(untrusted);
  return failed ? 1 : 0;
}
