/**
 * How parley writes a file pi also writes (`auth.json`, `mcp-auth.json`, `trust.json`,
 * `settings.json`, `mcp.json`, `models-store.json` under auth.json's scheme, as pi stores it): under the lock pi takes on that file and by atomic replacement.
 * Every write parley makes to pi's files goes through here (a test scans the source for others).
 *
 * pi guards each file with proper-lockfile (a `<file>.lock` folder), each with its own options:
 * which path is locked, after how long a lock is stale (its holder died), how often to retry.
 * parley takes the same lock with the same options through the same library, so a pi and a parley
 * never interleave a read-modify-write. The new text goes through write-file-atomic (a temporary
 * file beside the target, fsync, rename): a reader sees the old or the new file, never half.
 */
import { lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createRequire } from "node:module";
import { setTimeout as sleep } from "node:timers/promises";
import type lockfileModule from "proper-lockfile";
import type writeFileAtomicModule from "write-file-atomic";

// Both are required on the first lock or write: they pull in graceful-fs (which patches node:fs),
// signal-exit, node:assert, node:crypto and node:worker_threads, which a run that writes none of
// pi's files never needs.
let lockfileLoaded: typeof lockfileModule | undefined;
let writeFileAtomicLoaded: typeof writeFileAtomicModule | undefined;
const lockfile = (): typeof lockfileModule => (lockfileLoaded ??= createRequire(import.meta.url)("proper-lockfile") as typeof lockfileModule);
const writeFileAtomic = (): typeof writeFileAtomicModule =>
  (writeFileAtomicLoaded ??= createRequire(import.meta.url)("write-file-atomic") as typeof writeFileAtomicModule);

/** One of pi's locking schemes, read from pi 1.6's compiled source. */
export interface PiLockScheme {
  /** What proper-lockfile is given to lock, and the lock folder, for the file. */
  target(file: string): { path: string; realpath: boolean; lockfilePath?: string };
  /** When a lock no longer counts (proper-lockfile's `stale`). */
  staleMs: number;
  /** How long to wait before retry number `retry` (0-based), or undefined to give up. */
  wait(retry: number, startedAt: number): number | undefined;
}

/** pi's synchronous retry for settings.json and trust.json: 10 attempts, 20 ms apart. */
const tenTimes20ms = (retry: number): number | undefined => (retry < 9 ? 20 : undefined);

/** settings.json (global or project): `lockSync(file, { realpath: false })`, proper-lockfile's 10 s stale. */
export const SETTINGS_LOCK: PiLockScheme = {
  target: (file) => ({ path: file, realpath: false }),
  staleMs: 10_000,
  wait: tenTimes20ms,
};

/** trust.json: its folder locked through the lock folder `trust.json.lock`, proper-lockfile's 10 s stale. */
export const TRUST_LOCK: PiLockScheme = {
  target: (file) => ({ path: dirname(file), realpath: false, lockfilePath: `${file}.lock` }),
  staleMs: 10_000,
  wait: tenTimes20ms,
};

/**
 * mcp.json (the user's or a project's): pi 1.6's `mcp add|remove` take no lock, so none of pi's
 * is there to share; parley takes settings.json's scheme on `mcp.json.lock` so two parleys never
 * interleave, and a pi, which does not look at it, is not held up.
 */
export const MCP_CONFIG_LOCK: PiLockScheme = SETTINGS_LOCK;

/** auth.json: the real path locked, 30 s stale, a jittered exponential wait (at most 2 s) for up to 30 s. */
export const AUTH_LOCK: PiLockScheme = {
  target: (file) => ({ path: file, realpath: true }),
  staleMs: 30_000,
  wait: (retry, startedAt) => {
    const remaining = startedAt + 30_000 - Date.now();
    if (remaining <= 0) return undefined;
    const base = Math.min(10 * 2 ** retry, 1_000);
    return Math.min(Math.round(base * (1 + Math.random())), remaining);
  },
};

/**
 * mcp-auth.json: pi's `FileAuthStorageBackend.withLock`, a synchronous `lockSync` on the real
 * path with proper-lockfile's 10 s stale, 10 attempts 20 ms apart.
 */
export const MCP_AUTH_LOCK: PiLockScheme = {
  target: (file) => ({ path: file, realpath: true }),
  staleMs: 10_000,
  wait: tenTimes20ms,
};

/**
 * An MCP server's refresh lock (`<agent dir>/mcp-auth-refresh-<hash>`, no file of its own):
 * held from reading a server's tokens to saving the refreshed ones, 20 s stale, retried every
 * 100 ms for 25 s (longer than a stale lock lives), as pi's MCP OAuth store takes it.
 */
export const MCP_REFRESH_LOCK: PiLockScheme = {
  target: (file) => ({ path: file, realpath: false }),
  staleMs: 20_000,
  wait: (retry) => (retry < 250 ? 100 : undefined),
};

export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && "code" in error && typeof error.code === "string" ? error.code : undefined;
}

/**
 * Takes pi's lock on the file; resolves to its release. `onCompromised` hears of the lock being
 * taken over while held (it must not throw: proper-lockfile calls it from a timer).
 */
export async function lockPiFile(
  file: string,
  scheme: PiLockScheme,
  options: { signal?: AbortSignal | undefined; onCompromised?: (error: Error) => void } = {},
): Promise<() => Promise<void>> {
  const { path, realpath, lockfilePath } = scheme.target(file);
  const startedAt = Date.now();
  for (let retry = 0; ; retry++) {
    options.signal?.throwIfAborted();
    try {
      return await lockfile().lock(path, {
        retries: 0,
        stale: scheme.staleMs,
        realpath,
        ...(lockfilePath === undefined ? {} : { lockfilePath }),
        onCompromised: options.onCompromised ?? (() => undefined),
      });
    } catch (error) {
      const wait = errorCode(error) === "ELOCKED" ? scheme.wait(retry, startedAt) : undefined;
      if (wait === undefined) throw error;
      await sleep(wait, undefined, options.signal ? { signal: options.signal } : {});
    }
  }
}

/**
 * Runs `change` under the file's lock, its folder made first (`dirMode` for a new folder);
 * `change` reads the file itself and may replace it, calling `held()` just before it writes:
 * that throws, so nothing is written, when the lock was taken over meanwhile (as stale).
 */
export async function withPiFileLock<T>(
  file: string,
  scheme: PiLockScheme,
  change: (held: () => void) => T | Promise<T>,
  options: { signal?: AbortSignal | undefined; dirMode?: number } = {},
): Promise<T> {
  mkdirSync(dirname(file), { recursive: true, ...(options.dirMode === undefined ? {} : { mode: options.dirMode }) });
  let compromised: Error | undefined;
  const release = await lockPiFile(file, scheme, {
    signal: options.signal,
    onCompromised: (error) => {
      compromised = error;
    },
  });
  const held = (): void => {
    if (compromised) throw compromised;
  };
  try {
    held();
    const result = await change(held);
    held();
    return result;
  } finally {
    await release().catch(() => undefined);
  }
}

/** What a change to a JSON file returns: its result, and the data to replace the file with (none: the file stays). */
export interface PiJsonChange<D, T> {
  result: T;
  next?: D | undefined;
}

/**
 * One read-modify-write of a JSON file pi keeps under auth.json's scheme (auth.json, models-store.json):
 * the file made first as pi makes it (`{}`, 0600, its folder 0700: the real path must exist to
 * be locked), pi's lock taken, the text parsed with `parse` and handed to `change`; a `next` it
 * returns replaces the file whole (pretty-printed, its mode kept). A parse error rejects with
 * nothing written; so does a lock taken over before the write.
 */
export function withPiJsonFile<D, T>(
  file: string,
  parse: (text: string) => D,
  change: (data: D) => PiJsonChange<D, T> | Promise<PiJsonChange<D, T>>,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<T> {
  options.signal?.throwIfAborted();
  ensurePiFile(file, "{}", 0o600, 0o700);
  return withPiFileLock(
    file,
    AUTH_LOCK,
    async (held) => {
      const { result, next } = await change(parse(readFileSync(file, "utf8")));
      if (next !== undefined) {
        held();
        await replacePiFile(file, JSON.stringify(next, null, 2), 0o600);
      }
      return result;
    },
    { signal: options.signal },
  );
}

/**
 * Holds the lock `scheme` names on `file` while `fn` runs (a lock with no file to write, such as
 * an MCP server's refresh lock); the lock's folder is made first with `dirMode`. `busy` is what
 * is thrown when another holder kept the lock for the whole wait.
 */
export async function holdPiLock<T>(
  file: string,
  scheme: PiLockScheme,
  fn: () => Promise<T>,
  options: { dirMode?: number; busy?: () => Error } = {},
): Promise<T> {
  mkdirSync(dirname(file), { recursive: true, ...(options.dirMode === undefined ? {} : { mode: options.dirMode }) });
  const release = await lockPiFile(file, scheme).catch((error: unknown) => {
    throw errorCode(error) === "ELOCKED" && options.busy ? options.busy() : error;
  });
  try {
    return await fn();
  } finally {
    await release().catch(() => undefined);
  }
}

/**
 * Creates the file with `text` unless it exists (never replacing one), its folder with
 * `dirMode`: pi makes `auth.json` and `mcp-auth.json` (`{}`, 0600) before locking their real path.
 */
export function ensurePiFile(file: string, text: string, mode: number, dirMode?: number): void {
  mkdirSync(dirname(file), { recursive: true, ...(dirMode === undefined ? {} : { mode: dirMode }) });
  try {
    writeFileSync(file, text, { encoding: "utf8", mode, flag: "wx" });
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
  }
}

/**
 * Where the text goes: a symlinked file (a dotfiles repository's `settings.json`) is written at
 * its target, as pi's in-place write writes through the link; the link itself stays.
 * write-file-atomic follows a link itself; a link to a file not made yet is followed here.
 */
function writeTarget(file: string): string {
  try {
    if (!lstatSync(file).isSymbolicLink()) return file;
    statSync(file);
    return file;
  } catch (error) {
    if (errorCode(error) !== "ENOENT") return file;
    try {
      return resolve(dirname(file), readlinkSync(file));
    } catch {
      return file;
    }
  }
}

/**
 * Replaces the file whole by atomic rename. An existing file keeps its mode; a new one gets
 * `mode` (the usual 0666 less the umask unless given, as pi's writeFileSync gives it).
 */
export async function replacePiFile(file: string, text: string, mode?: number): Promise<void> {
  const target = writeTarget(file);
  let kept: number | undefined;
  try {
    kept = statSync(target).mode & 0o777;
  } catch {
    kept = mode;
  }
  await writeFileAtomic()(target, text, { encoding: "utf8", ...(kept === undefined ? {} : { mode: kept }) });
}
