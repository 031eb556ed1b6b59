/** pi's agent folder and how pi reads a path given by the user (`~` expanded, relative to cwd). */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** `PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
export function piAgentDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const fromEnv = env["PI_CODING_AGENT_DIR"]?.trim();
  return fromEnv ? resolve(expandHome(fromEnv, home)) : join(home, ".pi", "agent");
}

export function expandHome(path: string, home: string = homedir()): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return path;
}

/** A user-given path: trimmed, `~` expanded, relative to `cwd`. */
export function userPath(path: string, cwd: string, home: string = homedir()): string {
  return resolve(cwd, expandHome(path.trim(), home));
}

/**
 * A path a client sends over the wire (switch_session, export_html), as the newest pi reads it:
 * `~` expanded, a `file://` URL turned into its path, relative to `cwd`. Not trimmed: spaces may
 * be part of a file name.
 */
export function wirePath(path: string, cwd: string, home: string = homedir()): string {
  const expanded = expandHome(path, home);
  return resolve(cwd, /^file:\/\//.test(expanded) ? (fromFileUrl(expanded) ?? expanded) : expanded);
}

/** The path of a file URL; undefined for one that names no local path (`file://host/…`, a bad %-escape). */
export function fromFileUrl(url: string): string | undefined {
  try {
    return fileURLToPath(url);
  } catch {
    return undefined;
  }
}
