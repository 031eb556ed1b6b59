/**
 * pi's `trust.json` in the agent directory: `{ "<canonical folder>": true | false | null }`,
 * keys sorted, two-space JSON and a final newline, as the newest pi writes it. A folder's
 * decision is its own entry or its nearest ancestor's.
 *
 * pi guards the file with proper-lockfile's lock, a directory `trust.json.lock` made with
 * mkdir (stale after 10 s); parley takes the same lock, so the two never write over each other.
 * Saving is read-merge-write: every other entry stays as it was, the new text goes to a temporary
 * file in the same folder that is then renamed over the old one, and a file that cannot be read
 * as pi's format is never written (the caller is told why instead).
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { errorMessage } from "../error-text.js";

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

/** proper-lockfile's default: a lock not touched for this long was left by a process that died. */
const STALE_MS = 10_000;
const LOCK_ATTEMPTS = 50;

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** Takes pi's lock (`trust.json.lock`, a directory); resolves to its release. */
async function lock(file: string): Promise<() => void> {
  const path = `${file}.lock`;
  for (let attempt = 1; ; attempt++) {
    try {
      mkdirSync(path);
      return () => {
        try {
          rmdirSync(path);
        } catch {
          // Already gone (taken over as stale): nothing of ours to remove.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (attempt >= LOCK_ATTEMPTS) throw new Error(`another process (pi?) holds its lock ${path}`);
      try {
        if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmdirSync(path);
      } catch {
        // Released meanwhile: try again at once.
      }
      await sleep(20);
    }
  }
}

/** Writes the text beside the file, then renames it over the file: a reader sees the old or the new file, never half of one. */
function replaceFile(file: string, text: string): void {
  const temp = join(dirname(file), `.${TRUST_FILE}.${process.pid}.${Date.now()}.tmp`);
  // The file keeps its permissions; a new one gets the usual ones (as pi's writeFileSync gives it).
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o666;
  const fd = openSync(temp, "wx", mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, file);
  } catch (error) {
    unlinkSync(temp);
    throw error;
  }
}

/**
 * Saves a decision for the folder as pi does (a handler's `remember: true`). Returns a warning
 * instead of writing when the file cannot be used or the lock cannot be had.
 */
export async function rememberTrust(agentDir: string, cwd: string, trusted: boolean): Promise<string | undefined> {
  const file = join(agentDir, TRUST_FILE);
  try {
    mkdirSync(agentDir, { recursive: true });
    const release = await lock(file);
    try {
      const current = read(file);
      if ("error" in current)
        return `${current.error}; the decision to ${trusted ? "trust" : "not trust"} ${trustKey(cwd)} was not saved, and the file was left as it is`;
      const entries: Record<string, Decision> = { ...current.entries, [trustKey(cwd)]: trusted };
      const sorted: Record<string, Decision> = {};
      for (const key of Object.keys(entries).sort()) sorted[key] = entries[key] ?? null;
      replaceFile(file, `${JSON.stringify(sorted, null, 2)}\n`);
      return undefined;
    } finally {
      release();
    }
  } catch (error) {
    return `${file}: ${errorMessage(error)}; the project trust decision was not saved`;
  }
}
