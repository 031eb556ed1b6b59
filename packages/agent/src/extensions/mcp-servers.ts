/**
 * pi.registerMcpServer's bookkeeping. Registered servers are connected by the built-in MCP
 * extension (mcp/), or by any extension that handles `mcp_servers_change`, as in the newest pi.
 * As in pi: registrations made while extensions load are read on session_start
 * (getMcpServers); once the extensions are bound, every change is announced (mcp_servers_change),
 * and when no extension handles that event, each server is reported once as not connected.
 */
import type { ExtensionErrorReport } from "./host.js";
import type { RegisteredMcpServer } from "./types.js";

export class McpServerRegistry {
  readonly #servers = new Map<string, RegisteredMcpServer>();
  readonly #reported = new Set<string>();
  readonly #report: (report: ExtensionErrorReport) => void;
  /** Set once the extensions are bound (after session_start). */
  #onChange: (() => void) | undefined;

  constructor(report: (report: ExtensionErrorReport) => void) {
    this.#report = report;
  }

  /**
   * Checks what can be checked without the MCP client, in pi's words (the rest of the entry is
   * checked when the server connects, and reported then).
   */
  register(name: string, config: unknown, extensionPath: string): void {
    const invalid = (why: string) => new TypeError(`Invalid MCP server registered by extension "${extensionPath}": ${why}`);
    if (!/^[A-Za-z0-9_-]+$/.test(name)) throw invalid(`invalid server name "${name}" (use letters, digits, "_" and "-")`);
    if (typeof config !== "object" || config === null || Array.isArray(config)) throw invalid(`server "${name}" must be an object`);
    if (!("command" in config) && !("url" in config)) throw invalid(`server "${name}" needs either "command" (stdio) or "url" (streamable HTTP)`);
    const owner = this.#servers.get(name)?.extensionPath;
    if (owner !== undefined && owner !== extensionPath) throw new Error(`MCP server "${name}" is already registered by extension "${owner}"`);
    // Names that differ only in "-" and "_" would share a namespace (mcp__<name>).
    const namespace = (server: string) => server.replaceAll("-", "_");
    const clash = [...this.#servers.keys()].find((other) => other !== name && namespace(other) === namespace(name));
    if (clash !== undefined) throw new Error(`MCP server "${name}" conflicts with registered server "${clash}"`);
    this.#servers.set(name, { name, config: structuredClone({ ...config }), extensionPath });
    this.#onChange?.();
  }

  /** Only the extension that registered a server can remove it. */
  unregister(name: string, extensionPath: string): void {
    if (this.#servers.get(name)?.extensionPath !== extensionPath) return;
    this.#servers.delete(name);
    this.#onChange?.();
  }

  list(): RegisteredMcpServer[] {
    return [...this.#servers.values()].map((s) => ({ ...s, config: structuredClone(s.config) }));
  }

  /** From now on each change calls `onChange` (the runtime announces it). */
  bind(onChange: () => void): void {
    this.#onChange = onChange;
  }

  /** Reports, once per server, that nothing connects it, unless an extension handles mcp_servers_change. */
  reportUnconnected(handled: boolean): void {
    if (handled) return;
    for (const server of this.#servers.values()) {
      if (this.#reported.has(server.name)) continue;
      this.#reported.add(server.name);
      this.#report({
        extensionPath: server.extensionPath,
        event: "register_mcp_server",
        error: `MCP server "${server.name}" is registered, but no loaded extension connects MCP servers (the built-in MCP support is off: --no-mcp, --no-extensions or the settings)`,
      });
    }
  }
}
