/**
 * `parley mcp login <server> [-l] [--timeout <seconds>]` and `parley mcp logout <server> [-l]`,
 * pi 1.6's `pi mcp login|logout`: the same checks, lines and exit status. Login connects first
 * (a server that accepts the stored tokens is already signed in), then signs in: the stored
 * refresh token when it works, else the authorization URL printed on stdout and the answer awaited
 * on a loopback callback (in a terminal, a pasted redirect URL also does), for up to 300 seconds.
 * No browser is started (parley starts no process that could outlive it): the user opens the URL.
 * Logout deletes the server's credentials from pi's mcp-auth.json.
 */
import { existsSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { McpSignInCancelledError } from "@earendil-works/pi-mcp/oauth";
import { distance } from "fastest-levenshtein";
import { storedTrust } from "../config/trust-store.js";
import { errorMessage } from "../error-text.js";
import { loadMcpConfig, type McpServerEntry } from "./config.js";
import { commandConnection, type McpServerConnection } from "./connection.js";
import { McpAuthStore } from "./mcp-auth-store.js";
import { parseOptions } from "./mcp-edit-cli.js";
import { MCP_HELP_HINT, type McpCliOptions, projectMcpFile } from "./names.js";

const DEFAULT_TIMEOUT_SECONDS = 300;

/** A pasted redirect URL, asked on stderr in a terminal; elsewhere only the loopback callback finishes the sign-in. */
async function waitForRedirectUrl(signal: AbortSignal): Promise<string | undefined> {
  if (process.stdin.isTTY !== true) {
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    return undefined;
  }
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await terminal.question("If the browser cannot reach this machine, paste the URL it was redirected to: ", { signal });
  } catch {
    return undefined;
  } finally {
    terminal.close();
  }
}

export async function runMcpLogin(command: "login" | "logout", args: readonly string[], options: McpCliOptions): Promise<number> {
  const { out, err } = options;
  const parsed = parseOptions(args, command === "login" ? { local: "flag", timeout: "value" } : { local: "flag" }, err);
  if (!parsed) return 1;
  const [name, ...extra] = parsed.positional;
  if (!name || extra.length > 0) {
    err(`Usage: parley mcp ${command} <server> [-l]\n${MCP_HELP_HINT}`);
    return 1;
  }
  const projectTrusted = storedTrust(options.agentDir, options.cwd).decision === true;
  const loaded = loadMcpConfig({ agentDir: options.agentDir, cwd: options.cwd, projectTrusted });
  const entry = loaded.servers.find((server) => server.name === name);
  if (!entry) {
    const names = loaded.servers.map((server) => server.name);
    const suggestion = names.find((candidate) => distance(candidate, name) <= 2);
    const projectFile = projectMcpFile(options.cwd);
    const untrusted =
      !projectTrusted && existsSync(projectFile)
        ? ` ${projectFile} is ignored because the project is not trusted. Start parley in the project to trust it.`
        : "";
    err(`No MCP server named "${name}".${suggestion ? ` Did you mean "${suggestion}"?` : ""}${untrusted} Configured: ${names.join(", ") || "none"}.`);
    return 1;
  }
  if (parsed.values.has("local") && entry.scope !== "project") {
    err(`MCP server "${name}" is defined in ${entry.source}, not in the project; omit --local.`);
    return 1;
  }
  const provider = entry.config.kind === "http" ? entry.config.auth?.provider : undefined;
  if (provider) {
    err(`MCP server "${name}" uses the credentials of provider "${provider}". Run "parley auth ${command} ${provider}".`);
    return 1;
  }
  const credentials = new McpAuthStore(options.agentDir);
  const connection = commandConnection(entry, options.cwd, options.version, credentials);
  try {
    const url = connection.oauthUrl;
    if (url === undefined) {
      err(`MCP server "${name}" does not use OAuth. Only HTTP servers without an Authorization header do.`);
      return 1;
    }
    if (command === "logout") {
      const removed = await credentials.remove(name, url);
      out(removed ? `Signed out of MCP server "${name}".` : `No stored credentials for MCP server "${name}".`);
      return 0;
    }
    const timeout = Number(parsed.values.get("timeout") ?? DEFAULT_TIMEOUT_SECONDS);
    if (!Number.isFinite(timeout) || timeout <= 0) {
      err("--timeout must be a positive number of seconds.");
      return 1;
    }
    return await login(entry, connection, timeout * 1000, options);
  } finally {
    await connection.close();
  }
}

async function login(entry: McpServerEntry, connection: McpServerConnection, timeoutMs: number, { out, err }: McpCliOptions): Promise<number> {
  const { name } = entry;
  // Connecting first tells whether a sign-in is needed, and keeps the server's challenge for it.
  try {
    await connection.getClient();
    out(`Already signed in to MCP server "${name}" (${connection.tools.length} tools).`);
    return 0;
  } catch {
    if (connection.state !== "needs-auth") {
      err(`MCP server "${name}" failed to connect: ${connection.error ?? "unknown error"}`);
      return 1;
    }
  }
  try {
    await connection.signIn(
      {
        showAuthorizationUrl: (authorizationUrl) => out(`Sign in to MCP server "${name}" in your browser:\n${authorizationUrl.href}`),
        promptForRedirectUrl: waitForRedirectUrl,
      },
      AbortSignal.timeout(timeoutMs),
    );
  } catch (error) {
    err(
      error instanceof McpSignInCancelledError
        ? `Sign-in to MCP server "${name}" was cancelled or not completed within ${Math.round(timeoutMs / 1000)} seconds.`
        : `Sign-in to MCP server "${name}" failed: ${errorMessage(error)}`,
    );
    return 1;
  }
  try {
    await connection.reconnect();
  } catch (error) {
    err(`Signed in, but ${errorMessage(error)}`);
    return 1;
  }
  out(`Signed in to MCP server "${name}" (${connection.tools.length} tools).`);
  return 0;
}
