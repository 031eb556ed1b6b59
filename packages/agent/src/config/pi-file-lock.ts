/**
 * How parley writes a file pi also writes (`trust.json`, `settings.json`): under pi's own lock
 * and by atomic replacement.
 *
 * pi guards these files with proper-lockfile's lock: a directory `<file>.lock` made with mkdir,
 * taken over when it is older than 10 s (a process that died holding it). parley takes the same
 * lock, so the two never write over each other. The new text goes to a temporary file in the
 * same folder that is then renamed over the old one: a reader sees the old or the new file, never
 * half of one.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";

/** proper-lockfile's default: a lock not touched for this long was left by a process that died. */
const STALE_MS = 10_000;
const LOCK_ATTEMPTS = 50;

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** Takes pi's lock on the file (`<file>.lock`); resolves to its release. */
export async function lockPiFile(file: string): Promise<() => void> {
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

/**
 * Where the text goes: a symlinked file (a dotfiles repository's `settings.json`) is written at
 * its target, as pi's in-place write writes through the link; the link itself stays.
 */
function writeTarget(file: string): string {
  try {
    if (!lstatSync(file).isSymbolicLink()) return file;
  } catch {
    return file;
  }
  try {
    return realpathSync(file);
  } catch {
    // A link to a file not made yet: made where the link points.
    return resolve(dirname(file), readlinkSync(file));
  }
}

/** Writes the text beside the file, then renames it over the file. The file keeps its permissions. */
export function replaceFile(path: string, text: string): void {
  const file = writeTarget(path);
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.tmp`);
  // A new file gets the usual permissions (as pi's writeFileSync gives it).
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

/** Runs `change` under the file's lock, its folder made first; `change` reads the file itself and may replace it. */
export async function withPiFileLock<T>(file: string, change: () => T): Promise<T> {
  mkdirSync(dirname(file), { recursive: true });
  const release = await lockPiFile(file);
  try {
    return change();
  } finally {
    release();
  }
}
