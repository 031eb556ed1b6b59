/**
 * The newest pi's MCP configuration: `mcp.json` in the agent directory and, in a trusted project,
 * `.pi/mcp.json`, both in the `mcpServers` shape other MCP clients share (pi-mcp validates the
 * shared fields; pi's `exposure`, `toolExposure` and `auth` are checked here). A project entry
 * replaces the user's entry of the same name; a project entry without `command`, `url` or `type`
 * only overrides `enabled`, `exposure` and `toolExposure` of the user's. Bad entries are reported
 * and skipped; the others still connect. Only `parley mcp add|remove` write them (mcp-config-file.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import {
  isMcpServerOverride,
  type McpHttpServerConfig,
  type McpStdioServerConfig,
  mcpNamespace,
  validateMcpServerConfig as validateSharedFields,
} from "@earendil-works/pi-mcp";
import { errorMessage } from "../error-text.js";
import { projectMcpFile, userMcpFile } from "./names.js";

export type McpExposure = "codemode" | "deferred" | "direct" | "hidden";
const EXPOSURES: readonly McpExposure[] = ["codemode", "deferred", "direct", "hidden"];
/** Older names pi still accepts. */
const EXPOSURE_ALIASES: Record<string, McpExposure> = { "codemode-deferred": "codemode" };
const OVERRIDE_KEYS = ["enabled", "exposure", "toolExposure"];
const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

/** pi's fields on top of the shared shape. */
interface PiFields {
  exposure?: McpExposure;
  toolExposure?: Record<string, McpExposure>;
}
export type McpServerSettings =
  | (McpStdioServerConfig & PiFields & { kind: "stdio" })
  | (McpHttpServerConfig & PiFields & { kind: "http"; auth?: { provider: string } });

export interface McpServerEntry {
  name: string;
  config: McpServerSettings;
  /** The file that defines it, or the extension that registered it. */
  source: string;
  scope: "global" | "project" | "extension";
  /** The project file that overrides a user's entry. */
  override?: string;
}

export interface LoadedMcpConfig {
  servers: McpServerEntry[];
  errors: string[];
  /** `autoEnableCodemode`, the project's over the user's; undefined when neither says. */
  autoEnableCodemode?: boolean;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export function resolveAlias(value: unknown): unknown {
  return typeof value === "string" ? (EXPOSURE_ALIASES[value] ?? value) : value;
}

const isExposure = (value: unknown): value is McpExposure => typeof value === "string" && (EXPOSURES as readonly string[]).includes(value);

/** pi's check of a `cimd` entry's callback: its Client ID Metadata Documents list only `/callback` on localhost or 127.0.0.1. */
function metadataDocumentCallbackError(callbackUrl: string | undefined): string | undefined {
  if (callbackUrl === undefined) return undefined;
  const url = new URL(callbackUrl);
  return url.hostname !== "[::1]" && url.pathname === "/callback"
    ? undefined
    : 'oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback';
}

/**
 * Checks the entry and returns it typed, or why it is invalid. `acceptMetadataDocuments`: a
 * `cimd` registration passes pi's check (for `mcp add`, which writes what pi writes) instead of
 * being refused.
 */
export function validateMcpServer(name: string, raw: unknown, options: { acceptMetadataDocuments?: boolean } = {}): McpServerSettings | string {
  const entry = isRecord(raw)
    ? {
        ...raw,
        ...(raw.exposure !== undefined ? { exposure: resolveAlias(raw.exposure) } : {}),
        ...(isRecord(raw.toolExposure)
          ? { toolExposure: Object.fromEntries(Object.entries(raw.toolExposure).map(([tool, value]) => [tool, resolveAlias(value)])) }
          : {}),
      }
    : raw;
  // Without a check of pi's Client ID Metadata Documents (they are pi's), pi-mcp refuses `clientRegistration: "cimd"`.
  const result = validateSharedFields(name, entry, options.acceptMetadataDocuments ? { checkMetadataDocumentCallback: metadataDocumentCallbackError } : {});
  if (result.kind === "invalid") return result.error;
  const names = EXPOSURES.map((value) => `"${value}"`).join(", ");
  const { exposure, toolExposure } = result.config;
  const fields: PiFields = {};
  if (exposure !== undefined) {
    if (!isExposure(exposure)) return `server "${name}": exposure must be one of ${names}`;
    fields.exposure = exposure;
  }
  if (toolExposure !== undefined) {
    if (!isRecord(toolExposure)) return `server "${name}": toolExposure must map tool names to exposures`;
    const checked: Record<string, McpExposure> = {};
    for (const [tool, value] of Object.entries(toolExposure)) {
      if (!isExposure(value)) return `server "${name}": toolExposure "${tool}" must be one of ${names}`;
      checked[tool] = value;
    }
    fields.toolExposure = checked;
  }
  if (result.kind === "stdio") return { ...result.config, ...fields, kind: "stdio" };
  const auth = result.config.auth;
  if (auth === undefined) return { ...result.config, ...fields, auth: undefined, kind: "http" };
  if (!isRecord(auth) || typeof auth.provider !== "string" || !auth.provider) return `server "${name}": auth.provider must be a provider name`;
  const url = new URL(result.config.url);
  if (url.protocol !== "https:" && !LOOPBACK_HOSTS.includes(url.hostname)) {
    return `server "${name}": auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]`;
  }
  return { ...result.config, ...fields, auth: { provider: auth.provider }, kind: "http" };
}

/** The exposure of one tool: its `toolExposure` entry (exact name first, then the first matching pattern), else the server's. */
export function toolExposureOf(config: PiFields, tool: string): McpExposure {
  const overrides = config.toolExposure ?? {};
  const exact = overrides[tool];
  if (exact !== undefined) return exact;
  for (const [pattern, exposure] of Object.entries(overrides)) {
    if (pattern.includes("*") && matchesPattern(pattern, tool)) return exposure;
  }
  return config.exposure ?? "codemode";
}

/** `*` matches any characters (as `toolExposure`, `--tools` and `--exclude-tools` read it). */
export function matchesPattern(pattern: string, name: string): boolean {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`).test(name);
}

/** Every exposure a server's tools can have, known before it connects. */
export function configuredExposures(config: PiFields): Set<McpExposure> {
  return new Set([config.exposure ?? "codemode", ...Object.values(config.toolExposure ?? {})]);
}

function readFile(path: string, scope: "global" | "project", servers: Map<string, McpServerEntry>, out: LoadedMcpConfig): void {
  if (!existsSync(path)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    out.errors.push(`${path}: ${errorMessage(error)}`);
    return;
  }
  if (!isRecord(parsed) || (parsed.mcpServers !== undefined && !isRecord(parsed.mcpServers))) {
    out.errors.push(`${path}: expected an object with an "mcpServers" object`);
    return;
  }
  if (typeof parsed.autoEnableCodemode === "boolean") out.autoEnableCodemode = parsed.autoEnableCodemode;
  else if (parsed.autoEnableCodemode !== undefined) out.errors.push(`${path}: autoEnableCodemode must be a boolean`);
  const entries = isRecord(parsed.mcpServers) ? parsed.mcpServers : {};
  for (const [name, value] of Object.entries(entries)) {
    if (scope === "project" && isRecord(value) && isMcpServerOverride(value)) {
      const base = servers.get(name);
      const extra = Object.keys(value).filter((key) => !OVERRIDE_KEYS.includes(key));
      if (!base) out.errors.push(`${path}: server "${name}" needs "command" or "url", or a global server to override`);
      else if (extra.length > 0) out.errors.push(`${path}: server "${name}": an override can only set ${OVERRIDE_KEYS.join(", ")}`);
      else {
        const { kind: _kind, ...baseConfig } = base.config;
        const config = validateMcpServer(name, { ...baseConfig, ...value });
        if (typeof config === "string") out.errors.push(`${path}: ${config}`);
        else servers.set(name, { ...base, config, override: path });
      }
      continue;
    }
    const config = validateMcpServer(name, value);
    if (typeof config === "string") {
      out.errors.push(`${path}: ${config}`);
      continue;
    }
    const clash = [...servers.keys()].find((other) => other !== name && mcpNamespace(other) === mcpNamespace(name));
    if (clash) {
      out.errors.push(`${path}: server "${name}" conflicts with "${clash}"`);
      continue;
    }
    if (scope === "project" && config.kind === "http" && config.auth) {
      out.errors.push(`${path}: server "${name}": auth is only allowed in the global mcp.json`);
      continue;
    }
    servers.set(name, { name, config, source: path, scope });
  }
}

/** The user's servers, then (when the project is trusted) the project's over them. */
export function loadMcpConfig(options: { agentDir: string; cwd: string; projectTrusted: boolean }): LoadedMcpConfig {
  const out: LoadedMcpConfig = { servers: [], errors: [] };
  const servers = new Map<string, McpServerEntry>();
  readFile(userMcpFile(options.agentDir), "global", servers, out);
  if (options.projectTrusted) readFile(projectMcpFile(options.cwd), "project", servers, out);
  out.servers = [...servers.values()];
  return out;
}
