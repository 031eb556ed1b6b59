/**
 * Where sessions live and how the CLI gets one: a new session (persisted or, for --no-session,
 * in memory), a given file (--session), or the most recent one for a directory (-c).
 *
 * Layout follows pi with parley's home: `~/.parley/sessions/--<cwd slug>--/<time>_<id>.jsonl`.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import type { SessionWarningHandler } from "./format.js";
import { Session } from "./session.js";
import { sniffFile } from "./sniff.js";

/** pi's directory name for a cwd: drop one leading separator, turn / \ : into -, wrap in --. */
export function cwdSlug(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** `~/.parley/sessions/<slug>`; not created until a session is written there. */
export function defaultSessionDir(cwd: string, home: string = homedir()): string {
  return join(home, ".parley", "sessions", cwdSlug(cwd));
}

export interface CreateSessionOptions {
  cwd: string;
  /** Default: defaultSessionDir(cwd). Ignored when persist is false. */
  sessionDir?: string;
  /** false: --no-session, the session lives in memory and `file` is undefined. */
  persist: boolean;
  parentSession?: string;
  onWarning?: SessionWarningHandler;
}

export function createSession(options: CreateSessionOptions): Session {
  return new Session(options.cwd, {
    // The file name embeds the header's own timestamp and id, as pi's does.
    ...(options.persist ? { sessionDir: options.sessionDir ?? defaultSessionDir(options.cwd) } : {}),
    ...(options.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
    ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}),
  });
}

export interface OpenSessionOptions {
  onWarning?: SessionWarningHandler;
  /**
   * When the file does not exist: start a new session that will be written at that path
   * (pi's `--session <new path>`), with this cwd. Without it, a missing file throws.
   */
  createIfMissing?: { cwd: string };
}

/** Loads a session file; see Session.open for what is tolerated and what throws. */
export function openSession(path: string, options: OpenSessionOptions = {}): Session {
  const file = resolve(path);
  if (options.createIfMissing !== undefined && !existsSync(file)) {
    return new Session(options.createIfMissing.cwd, {
      file,
      ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}),
    });
  }
  return Session.open(file, options.onWarning !== undefined ? { onWarning: options.onWarning } : {});
}

/**
 * The most recently modified session file in `sessionDir` (what `-c` continues), or undefined.
 * Only `.jsonl` files whose first line is a session header count. Equal mtimes (coarse
 * filesystems) fall back to the name, which starts with the creation time.
 */
export function latestSession(sessionDir: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(sessionDir);
  } catch {
    return undefined;
  }
  let best: { path: string; mtime: number; name: string } | undefined;
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    const path = resolve(sessionDir, name);
    let mtime: number;
    try {
      const stat = statSync(path);
      if (!stat.isFile()) continue;
      mtime = stat.mtimeMs;
    } catch {
      continue;
    }
    if (best !== undefined && (mtime < best.mtime || (mtime === best.mtime && name < best.name))) continue;
    if (!hasSessionHeader(path)) continue;
    best = { path, mtime, name };
  }
  return best?.path;
}

/** `-c`: the latest session of the directory, or a new persisted one when there is none. */
export function continueSession(options: Omit<CreateSessionOptions, "persist" | "parentSession">): Session {
  const dir = options.sessionDir ?? defaultSessionDir(options.cwd);
  const latest = latestSession(dir);
  if (latest !== undefined) return openSession(latest, options.onWarning !== undefined ? { onWarning: options.onWarning } : {});
  return createSession({ ...options, sessionDir: dir, persist: true });
}

function hasSessionHeader(path: string): boolean {
  return sniffFile(path).kind === "session";
}
