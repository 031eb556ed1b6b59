/**
 * `parley mcp add` and `parley mcp remove`, pi 1.6's `pi mcp add|remove`: the same options, the
 * same entry written to the same file (the user's `mcp.json`, or with `-l`/`--local` the
 * project's `.pi/mcp.json`), the same lines on stdout and stderr and the same exit status.
 */
import { storedTrust } from "../config/trust-store.js";
import { errorMessage } from "../error-text.js";
import { loadMcpConfig, resolveAlias, validateMcpServer } from "./config.js";
import { addMcpServerConfig, removeMcpServerConfig } from "./mcp-config-file.js";
import { MCP_HELP_HINT, type McpCliOptions, projectMcpFile, userMcpFile } from "./names.js";

/** `add` and `remove` need no version: they connect to nothing. */
export type McpEditOptions = Omit<McpCliOptions, "version">;

const APP = "parley";

type OptionKind = "flag" | "value" | "list";
interface Parsed {
  positional: string[];
  values: Map<string, string | true>;
  lists: Map<string, string[]>;
}

/**
 * `--name value` options as pi reads them: `-l` is `--local`; `--` ends the options, as does the
 * `maxPositionals`-th positional argument (a server command's own options pass through).
 */
export function parseOptions(
  args: readonly string[],
  known: Record<string, OptionKind>,
  err: (line: string) => void,
  maxPositionals = Number.POSITIVE_INFINITY,
): Parsed | undefined {
  const positional: string[] = [];
  const values = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
  for (let index = 0; index < args.length; index++) {
    const typed = args[index] ?? "";
    const arg = typed === "-l" ? "--local" : typed;
    if (arg === "--" || positional.length >= maxPositionals) {
      positional.push(...args.slice(arg === "--" ? index + 1 : index));
      break;
    }
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    const kind = known[name];
    if (!kind) {
      err(`Unknown option ${typed}.\n${MCP_HELP_HINT}`);
      return undefined;
    }
    if (kind === "flag") {
      values.set(name, true);
      continue;
    }
    const value = args[++index];
    if (value === undefined) {
      err(`${arg} needs a value.`);
      return undefined;
    }
    if (kind === "list") lists.set(name, [...(lists.get(name) ?? []), value]);
    else values.set(name, value);
  }
  return { positional, values, lists };
}

/** `KEY=VALUE` pairs of a repeatable option. */
function parsePairs(option: string, pairs: readonly string[] | undefined, err: (line: string) => void): Record<string, string> | undefined {
  const record: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const separator = pair.indexOf("=");
    if (separator <= 0) {
      err(`--${option} expects KEY=VALUE, got "${pair}".`);
      return undefined;
    }
    record[pair.slice(0, separator)] = pair.slice(separator + 1);
  }
  return record;
}

const ADD_OPTIONS: Record<string, OptionKind> = {
  local: "flag",
  url: "value",
  env: "list",
  cwd: "value",
  header: "list",
  "bearer-token-env-var": "value",
  "oauth-client-id": "value",
  "oauth-client-secret": "value",
  "oauth-callback-port": "value",
  "oauth-client-name": "value",
  "oauth-client-registration": "value",
  exposure: "value",
  description: "value",
};
const HTTP_ONLY = [
  "header",
  "bearer-token-env-var",
  "oauth-client-id",
  "oauth-client-secret",
  "oauth-callback-port",
  "oauth-client-name",
  "oauth-client-registration",
];
const STDIO_ONLY = ["env", "cwd"];

const isProjectTrusted = (options: McpEditOptions): boolean => storedTrust(options.agentDir, options.cwd).decision === true;

export async function addServer(args: readonly string[], options: McpEditOptions): Promise<number> {
  const { out, err } = options;
  const parsed = parseOptions(args, ADD_OPTIONS, err, 2);
  if (!parsed) return 1;
  const { positional, values, lists } = parsed;
  const [name, ...command] = positional;
  const value = (option: string): string | undefined => {
    const found = values.get(option);
    return typeof found === "string" ? found : undefined;
  };
  const url = value("url");
  if (!name || (url === undefined) === (command.length === 0)) {
    err(`Usage: ${APP} mcp add <server> [options] (--url <url> | -- <command> [args...])\n${MCP_HELP_HINT}`);
    return 1;
  }
  const misplaced = (url === undefined ? HTTP_ONLY : STDIO_ONLY).find((option) => values.has(option) || lists.has(option));
  if (misplaced) {
    err(`--${misplaced} only applies to ${url === undefined ? "HTTP servers (--url)" : "stdio servers"}.`);
    return 1;
  }
  // The entry as pi builds it, key by key in pi's order: what is written is this object.
  const optional = (key: string, found: unknown): Record<string, unknown> => (found === undefined ? {} : { [key]: found });
  let config: Record<string, unknown>;
  if (url !== undefined) {
    const headers = parsePairs("header", lists.get("header"), err);
    if (!headers) return 1;
    const bearer = value("bearer-token-env-var");
    if (bearer !== undefined) headers["Authorization"] = `Bearer \${${bearer}}`;
    const port = value("oauth-callback-port");
    const oauth = {
      ...optional("clientId", value("oauth-client-id")),
      ...optional("clientSecret", value("oauth-client-secret")),
      ...optional("callbackPort", port === undefined ? undefined : Number(port)),
      ...optional("clientName", value("oauth-client-name")),
      ...optional("clientRegistration", value("oauth-client-registration")),
    };
    config = { url, ...(Object.keys(headers).length > 0 ? { headers } : {}), ...(Object.keys(oauth).length > 0 ? { oauth } : {}) };
  } else {
    const env = parsePairs("env", lists.get("env"), err);
    if (!env) return 1;
    const [executable, ...commandArgs] = command;
    config = {
      command: executable,
      ...(commandArgs.length > 0 ? { args: commandArgs } : {}),
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...optional("cwd", value("cwd")),
    };
  }
  const exposure = value("exposure");
  if (exposure !== undefined) config["exposure"] = resolveAlias(exposure);
  const description = value("description");
  if (description !== undefined) config["description"] = description;
  const validated = validateMcpServer(name, config, { acceptMetadataDocuments: true });
  if (typeof validated === "string") {
    err(validated);
    return 1;
  }
  const project = values.has("local");
  const path = project ? projectMcpFile(options.cwd) : userMcpFile(options.agentDir);
  let replaced: boolean;
  try {
    replaced = await addMcpServerConfig(path, name, config);
  } catch (error) {
    err(`Could not update ${path}: ${errorMessage(error)}`);
    return 1;
  }
  out(`${replaced ? "Replaced" : "Added"} ${project ? "project" : "global"} MCP server "${name}" in ${path}.`);
  if (project && !isProjectTrusted(options)) {
    out(`The project is not trusted, so ${path} is ignored until you start ${APP} in the project and trust it.`);
  }
  // An HTTP server without an Authorization header may use OAuth.
  const headers = validated.kind === "http" ? Object.keys(validated.headers ?? {}) : undefined;
  const mayNeedSignIn = headers !== undefined && !headers.some((header) => header.toLowerCase() === "authorization");
  out(`Check it with: ${APP} mcp list${mayNeedSignIn ? `. If it requires sign-in: ${APP} mcp login ${name}` : ""}`);
  return 0;
}

export async function removeServer(args: readonly string[], options: McpEditOptions): Promise<number> {
  const { out, err } = options;
  const parsed = parseOptions(args, { local: "flag" }, err);
  if (!parsed) return 1;
  const [name, ...extra] = parsed.positional;
  if (!name || extra.length > 0) {
    err(`Usage: ${APP} mcp remove <server> [-l]\n${MCP_HELP_HINT}`);
    return 1;
  }
  const project = parsed.values.has("local");
  const scope = project ? "project" : "global";
  const path = project ? projectMcpFile(options.cwd) : userMcpFile(options.agentDir);
  let removed: boolean;
  try {
    removed = await removeMcpServerConfig(path, name);
  } catch (error) {
    err(`Could not update ${path}: ${errorMessage(error)}`);
    return 1;
  }
  if (removed) {
    out(`Removed ${scope} MCP server "${name}" from ${path}.`);
    return 0;
  }
  const other = loadMcpConfig({ agentDir: options.agentDir, cwd: options.cwd, projectTrusted: true }).servers.find(
    (server) => server.name === name && server.scope !== scope,
  );
  const hint = other ? ` It is defined in ${other.source}${other.scope === "project" ? "; use --local" : "; omit --local"}.` : "";
  err(`No ${scope} MCP server named "${name}" in ${path}.${hint}`);
  return 1;
}
