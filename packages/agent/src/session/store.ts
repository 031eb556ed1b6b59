/**
 * Where sessions live and how the CLI gets one: a new session (persisted or, for --no-session,
 * in memory), a given file (--session), or the most recent one for a directory (-c).
 *
 * Layout is pi's: `<agent dir>/sessions/--<cwd slug>--/<time>_<id>.jsonl` (agent dir:
 * PI_CODING_AGENT_DIR, default ~/.pi/agent). Earlier parley versions wrote the same files under
 * `~/.parley/sessions/`; they are still found (see legacySessionDir).
 */
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { agentDir as defaultAgentDir, legacyParleyDir } from "../config/agent-dir.js";
import type { SessionWarningHandler } from "./format.js";
import { Session } from "./session.js";
import { READ_NO_WAIT, sniffFile } from "./sniff.js";

/** pi's directory name for a cwd: drop one leading separator, turn / \ : into -, wrap in --. */
export function cwdSlug(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** pi's `<agent dir>/sessions/<slug>`; not created until a session is written there. */
export function defaultSessionDir(cwd: string, agentDir: string = defaultAgentDir()): string {
  return join(agentDir, "sessions", cwdSlug(cwd));
}

/** Where parley before pi's layout kept a folder's sessions: `~/.parley/sessions/<slug>` (read, never written). */
export function legacySessionDir(cwd: string, home: string = homedir()): string {
  return join(legacyParleyDir(home), "sessions", cwdSlug(cwd));
}

export interface CreateSessionOptions {
  cwd: string;
  /** Default: defaultSessionDir(cwd). Ignored when persist is false. */
  sessionDir?: string;
  /** false: --no-session, the session lives in memory and `file` is undefined. */
  persist: boolean;
  parentSession?: string;
  /** The new session's id (pi's --session-id); default a fresh one. */
  id?: string;
  onWarning?: SessionWarningHandler;
}

export function createSession(options: CreateSessionOptions): Session {
  return new Session(options.cwd, {
    // The file name embeds the header's own timestamp and id, as pi's does.
    ...(options.persist ? { sessionDir: options.sessionDir ?? defaultSessionDir(options.cwd) } : {}),
    ...(options.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
    ...(options.id !== undefined ? { id: options.id } : {}),
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
  /** Take the file's lock (default: true, for a session parley will write); false to only read it. */
  lock?: boolean;
}

/** Loads a session file; see Session.open for what is tolerated and what throws. */
export function openSession(path: string, options: OpenSessionOptions = {}): Session {
  const file = resolve(path);
  const lock = options.lock ?? true;
  if (options.createIfMissing !== undefined && !existsSync(file)) {
    return new Session(options.createIfMissing.cwd, {
      file: danglingLinkTarget(file),
      lock,
      ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}),
    });
  }
  return Session.open(file, { lock, ...(options.onWarning !== undefined ? { onWarning: options.onWarning } : {}) });
}

/**
 * A symlink to a file that does not exist yet stands for its target, as a write through it would
 * (pi writes there). Creating the session file exclusively at the link itself fails (EEXIST): every
 * save failed and the conversation was lost. The target is created instead, exclusively.
 */
function danglingLinkTarget(file: string): string {
  let at = file;
  // Links to links, as the system follows them (at most 40).
  for (let hops = 0; hops < 40; hops++) {
    try {
      if (!lstatSync(at).isSymbolicLink()) return at;
    } catch {
      return at; // nothing there: the last name followed
    }
    at = resolve(dirname(at), readlinkSync(at));
  }
  return file;
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

export interface SessionFileInfo {
  path: string;
  id: string;
  cwd: string;
  mtime: number;
}

/** The session files of a directory, newest first (by mtime, then name). Missing directory: none. */
export function listSessions(dir: string): SessionFileInfo[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: SessionFileInfo[] = [];
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    const path = resolve(dir, name);
    try {
      const stat = statSync(path);
      if (!stat.isFile()) continue;
      const header = readSessionHeader(path);
      if (header) out.push({ path, ...header, mtime: stat.mtimeMs });
    } catch {}
  }
  return out.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? 1 : -1));
}

/** Every session under a sessions root (`<agent dir>/sessions`: one folder per project). */
export function listAllSessions(root: string): SessionFileInfo[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  return names.flatMap((name) => listSessions(join(root, name)));
}

/** A session's id and cwd from its header line, or undefined when the file has no header. */
export function readSessionHeader(path: string): { id: string; cwd: string } | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, READ_NO_WAIT);
    const buffer = Buffer.alloc(64 * 1024);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.toString("utf8", 0, read);
    const newline = text.indexOf("\n");
    if (newline < 0) return undefined;
    const header: unknown = JSON.parse(text.slice(text.charCodeAt(0) === 0xfeff ? 1 : 0, newline));
    if (typeof header !== "object" || header === null) return undefined;
    const { type, id, cwd } = header as Record<string, unknown>;
    return type === "session" && typeof id === "string" ? { id, cwd: typeof cwd === "string" ? cwd : "" } : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Reads only the first line (headers are short; 64 KiB is plenty even for long cwds). */
function hasSessionHeader(path: string): boolean {
  return sniffFile(path).kind === "session";
}
