/**
 * Adding a server to an `mcp.json` and removing one, as pi 1.6's `mcp add|remove` change the file:
 * the `mcpServers` object edited in place, every other key kept in its order, the file's own
 * indentation (its first indented line's; two spaces for a new file) and a final newline. The file
 * is replaced atomically under a lock (pi-file-lock.ts); a file that is not an object with an
 * `mcpServers` object is never written: the caller hears why.
 */
import { existsSync, readFileSync } from "node:fs";
import { MCP_CONFIG_LOCK, replacePiFile, withPiFileLock } from "../config/pi-file-lock.js";

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** Lets `edit` change the file's `mcpServers` (undefined when it has none); writes the file when `edit` returns true. */
async function editMcpServers(path: string, edit: (servers: Json | undefined, parsed: Json) => boolean): Promise<void> {
  await withPiFileLock(path, MCP_CONFIG_LOCK, async (held) => {
    const text = existsSync(path) ? readFileSync(path, "utf8").replace(/^\uFEFF/, "") : undefined;
    const parsed: unknown = text === undefined ? {} : JSON.parse(text);
    if (!isRecord(parsed) || (parsed["mcpServers"] !== undefined && !isRecord(parsed["mcpServers"]))) {
      throw new Error(`${path}: expected an object with an "mcpServers" object`);
    }
    const servers = parsed["mcpServers"];
    if (!edit(isRecord(servers) ? servers : undefined, parsed)) return;
    const indent = (text && /^([ \t]+)\S/m.exec(text)?.[1]) || "  ";
    held();
    await replacePiFile(path, `${JSON.stringify(parsed, null, indent)}\n`);
  });
}

/** Adds the server (replacing one of the same name), making the file when missing; true when one was replaced. */
export async function addMcpServerConfig(path: string, name: string, config: Json): Promise<boolean> {
  let replaced = false;
  await editMcpServers(path, (servers, parsed) => {
    const target = servers ?? {};
    replaced = target[name] !== undefined;
    target[name] = config;
    parsed["mcpServers"] = target;
    return true;
  });
  return replaced;
}

/** Removes the server; false (and nothing written) when the file does not define it. */
export async function removeMcpServerConfig(path: string, name: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  let removed = false;
  await editMcpServers(path, (servers) => {
    if (servers?.[name] === undefined) return false;
    delete servers[name];
    removed = true;
    return true;
  });
  return removed;
}
