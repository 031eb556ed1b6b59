/**
 * pi's `trust.json` in the agent directory: `{ "<canonical folder>": true | false | null }`,
 * keys sorted, two-space JSON and a final newline, as the newest pi writes it. A folder's
 * decision is its own entry or its nearest ancestor's.
 *
 * Saving is read-merge-write under pi's lock, by atomic replacement (pi-file-lock.ts): every other
 * entry stays as it was, and a file that cannot be read as pi's format is never written (the
 * caller is told why instead).
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { errorMessage } from "../error-text.js";
import { replacePiFile, TRUST_LOCK, withPiFileLock } from "./pi-file-lock.js";

export const TRUST_FILE = "trust.json";
type Decision = boolean | null;

/** The folder as pi keys it: absolute and with links resolved (as given when it does not exist). */
export function trustKey(path: string): string {
  try {
    return realpathSync(resolve(path));
  } catch {
    return resolve(path);
  }
}

/** The file's entries, or why they cannot be used (not JSON, not an object, a value pi would refuse). */
function parse(file: string, text: string): { entries: Record<string, Decision> } | { error: string } {
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    return { error: `${file}: ${errorMessage(error)}` };
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) return { error: `${file}: expected an object` };
  const entries: Record<string, Decision> = {};
  for (const [key, value] of Object.entries(data)) {
    if (value !== true && value !== false && value !== null) return { error: `${file}: the value for ${JSON.stringify(key)} must be true, false or null` };
    entries[key] = value;
  }
  return { entries };
}

function read(file: string): { entries: Record<string, Decision> } | { error: string } {
  if (!existsSync(file)) return { entries: {} };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return { error: `${file}: ${errorMessage(error)}` };
  }
  return parse(file, text);
}

/** The stored decision for the folder (its entry or its nearest ancestor's); a file that cannot be used is said and ignored. */
export function storedTrust(agentDir: string, cwd: string): { decision: boolean | undefined; warning?: string } {
  const result = read(join(agentDir, TRUST_FILE));
  if ("error" in result) return { decision: undefined, warning: `${result.error}; ignored` };
  for (let dir = trustKey(cwd); ; dir = dirname(dir)) {
    const value = result.entries[dir];
    if (value === true || value === false) return { decision: value };
    if (dirname(dir) === dir) return { decision: undefined };
  }
}

/**
 * Saves a decision for the folder as pi does (a handler's `remember: true`). Returns a warning
 * instead of writing when the file cannot be used or the lock cannot be had.
 */
export async function rememberTrust(agentDir: string, cwd: string, trusted: boolean): Promise<string | undefined> {
  const file = join(agentDir, TRUST_FILE);
  try {
    return await withPiFileLock(file, TRUST_LOCK, async (held) => {
      const current = read(file);
      if ("error" in current)
        return `${current.error}; the decision to ${trusted ? "trust" : "not trust"} ${trustKey(cwd)} was not saved, and the file was left as it is`;
      const entries: Record<string, Decision> = { ...current.entries, [trustKey(cwd)]: trusted };
      const sorted: Record<string, Decision> = {};
      for (const key of Object.keys(entries).sort()) sorted[key] = entries[key] ?? null;
      held();
      await replacePiFile(file, `${JSON.stringify(sorted, null, 2)}\n`);
      return undefined;
    });
  } catch (error) {
    return `${file}: ${errorMessage(error)}; the project trust decision was not saved`;
  }
}
