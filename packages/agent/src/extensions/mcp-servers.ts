/**
 * pi.registerMcpServer's bookkeeping. The newest pi connects registered servers through its
 * built-in MCP extension; parley has none, so it does what pi does when no loaded extension
 * connects MCP servers: it keeps the registration (getMcpServers lists it) and reports, once per
 * server, that nothing connects it.
 */
import type { ExtensionErrorReport } from "./host.js";
import type { RegisteredMcpServer } from "./types.js";

export class McpServerRegistry {
  readonly #servers = new Map<string, RegisteredMcpServer>();
  readonly #reported = new Set<string>();
  readonly #report: (report: ExtensionErrorReport) => void;

  constructor(report: (report: ExtensionErrorReport) => void) {
    this.#report = report;
  }

  register(name: string, config: unknown, extensionPath: string): void {
    if (!name.trim()) throw new TypeError("registerMcpServer: the server needs a name");
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
      throw new TypeError(`Invalid MCP server registered by extension "${extensionPath}": "${name}" needs a config object`);
    }
    const owner = this.#servers.get(name)?.extensionPath;
    if (owner !== undefined && owner !== extensionPath) throw new Error(`MCP server "${name}" is already registered by extension "${owner}"`);
    this.#servers.set(name, { name, config: structuredClone({ ...config }), extensionPath });
    if (this.#reported.has(name)) return;
    this.#reported.add(name);
    this.#report({
      extensionPath,
      event: "register_mcp_server",
      error: `MCP server "${name}" is registered, but no loaded extension connects MCP servers (parley has no built-in MCP support)`,
    });
  }

  /** Only the extension that registered a server can remove it. */
  unregister(name: string, extensionPath: string): void {
    if (this.#servers.get(name)?.extensionPath === extensionPath) this.#servers.delete(name);
  }

  list(): RegisteredMcpServer[] {
    return [...this.#servers.values()].map((s) => ({ ...s, config: structuredClone(s.config) }));
  }
}
