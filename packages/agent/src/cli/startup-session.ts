/**
 * The session parley starts with, from pi's flags: --no-session, --fork, --session <path|id>,
 * --session-id, --continue/--resume, else a new one. Session files live where pi puts them
 * (--session-dir, PI_CODING_AGENT_SESSION_DIR, settings' sessionDir, else
 * `<agent dir>/sessions/<cwd slug>`); with the default directory, the sessions earlier parley
 * versions wrote under `~/.parley/sessions/` are found too (they are in pi's format).
 *
 * As in pi, a session opened as it is (--session, an existing --session-id, --resume) runs in the
 * folder its header records; --continue, --fork, a fork of another project's session and a new
 * session run in the folder parley was started in.
 */
import { join, resolve } from "node:path";
import { memorySessions, type SessionFactory } from "../session/session-factory.js";
import type { SessionWarning } from "../session/format.js";
import type { Session } from "../session/session.js";
import { sessionFolder } from "../session/session-cwd.js";
import { createSession, listAllSessions, listSessions, openSession, type SessionFileInfo } from "../session/store.js";
import { errorMessage } from "../error-text.js";
import { UsageError, type CliOptions } from "./args.js";

export interface SessionPlaces {
  /** The folder parley was started in: relative paths, this project's sessions, new sessions. */
  cwd: string;
  /** Where new sessions go. */
  sessionDir: string;
  /** Other folders whose sessions -c and ids also find (the legacy ~/.parley one), read only. */
  readOnlyDirs: string[];
  /** The sessions root searched for an id from another project (`<agent dir>/sessions`). */
  allSessionsRoot?: string | undefined;
}

export interface StartupSession {
  session: Session;
  /** The run's folder: the session's recorded one when it was opened as it is, else the start folder. */
  cwd: string;
  /** Things to say on stderr (a session found in another project, a new session for an id). */
  notes: string[];
}

/** A path (has a separator or ends in .jsonl), else a session id or the start of one (pi's rule). */
function looksLikePath(arg: string): boolean {
  return arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl");
}

/**
 * The session `arg` names among `candidates`: its exact id, else the one session whose id starts
 * with it. Several such sessions are an error (as in the newest pi): ids are time-ordered, so a
 * short prefix easily matches sessions made close together, and opening one of them would resume
 * or fork a conversation the user did not mean.
 */
function findById(flag: string, arg: string, candidates: SessionFileInfo[]): SessionFileInfo | undefined {
  const exact = candidates.find((s) => s.id === arg);
  if (exact) return exact;
  const matches = [...new Map(candidates.filter((s) => s.id.startsWith(arg)).map((s) => [s.path, s])).values()];
  if (matches.length <= 1) return matches[0];
  const list = matches.map((s) => `  ${s.id}  ${s.path}`).join("\n");
  throw new UsageError(`${flag} ${arg}: the id is ambiguous, ${matches.length} sessions start with it:\n${list}\nGive more of the id, or the file's path.`);
}

export function openStartupSession(options: CliOptions, places: SessionPlaces, onWarning: (w: SessionWarning) => void): StartupSession {
  const { cwd, sessionDir } = places;
  const notes: string[] = [];
  const here = (session: Session): StartupSession => ({ session, cwd, notes });
  // pi's SessionManager.open: the header's folder (a file without one: the start folder).
  const asRecorded = (session: Session): StartupSession => ({ session, cwd: sessionFolder(session, cwd), notes });
  if (options.noSession) return here(memorySessions(cwd).create({}));
  const create = (id?: string): Session => createSession({ cwd, sessionDir, persist: true, onWarning, ...(id !== undefined ? { id } : {}) });
  const local = (): SessionFileInfo[] => [sessionDir, ...places.readOnlyDirs].flatMap((dir) => listSessions(dir)).sort((a, b) => b.mtime - a.mtime);

  /** A --session/--fork argument: the file, or this project's session with that id, or another project's. */
  const locate = (flag: string, arg: string): { path: string; elsewhere?: string } => {
    if (looksLikePath(arg)) return { path: resolve(cwd, arg) };
    const here = findById(flag, arg, local());
    if (here) return { path: here.path };
    const anywhere = places.allSessionsRoot !== undefined ? findById(flag, arg, listAllSessions(places.allSessionsRoot)) : undefined;
    if (anywhere) return { path: anywhere.path, elsewhere: anywhere.cwd };
    throw new UsageError(`${flag} ${arg}: no session found matching '${arg}'`);
  };
  /** `lock` false: a source to copy from, which another process may be writing. */
  const open = (flag: string, path: string, createIfMissing: boolean, lock = true): Session => {
    try {
      return openSession(path, { onWarning, lock, ...(createIfMissing ? { createIfMissing: { cwd } } : {}) });
    } catch (error) {
      throw new UsageError(`${flag} ${path}: ${errorMessage(error)}`);
    }
  };

  if (options.fork !== undefined) {
    if (options.sessionId !== undefined && local().some((s) => s.id === options.sessionId)) {
      throw new UsageError(`--session-id ${options.sessionId}: a session with that id already exists`);
    }
    const source = open("--fork", locate("--fork", options.fork).path, false, false);
    try {
      return here(source.clone({ cwd, sessionDir, ...(options.sessionId !== undefined ? { id: options.sessionId } : {}) }));
    } catch (error) {
      throw new UsageError(`--fork ${options.fork}: ${errorMessage(error)}`);
    }
  }
  if (options.session !== undefined) {
    const found = locate("--session", options.session);
    if (found.elsewhere !== undefined) {
      // pi asks in its terminal whether to fork; RPC mode has no one to ask, so it forks (nothing is lost).
      notes.push(`--session ${options.session}: the session belongs to ${found.elsewhere}; continuing in a fork of it in this folder`);
      const source = open("--session", found.path, false, false);
      return here(source.clone({ cwd, sessionDir }));
    }
    return asRecorded(open("--session", found.path, true));
  }
  if (options.sessionId !== undefined) {
    const existing = local().find((s) => s.id === options.sessionId);
    if (existing) return asRecorded(open("--session-id", existing.path, false));
    notes.push(`No project session found with id '${options.sessionId}'; creating a new session with that id.`);
    return here(create(options.sessionId));
  }
  if (options.continue || options.resume) {
    const latest = local()[0];
    // pi's --continue stays in the current folder whatever the file records; --resume opens the session as it is.
    if (latest) return options.continue ? here(open("--continue", latest.path, false)) : asRecorded(open("--resume", latest.path, false));
  }
  return here(create());
}

/**
 * How the run makes and opens sessions: files in `sessionDir` recording the run's folder, or
 * memory with --no-session. `cwd()` is asked each time: the run's folder follows the session.
 */
export function sessionFactory(
  noSession: boolean,
  cwd: () => string,
  sessionDir: () => string,
  onWarning: (w: SessionWarning) => void,
  currentFile: () => string | undefined,
): SessionFactory {
  const files: SessionFactory = {
    create: ({ parentSession }) =>
      createSession({ cwd: cwd(), sessionDir: sessionDir(), persist: true, onWarning, ...(parentSession !== undefined ? { parentSession } : {}) }),
    // As pi's SessionManager.open: a path with no file yet starts a session to be written there.
    open: (path) => openSession(path, { onWarning, createIfMissing: { cwd: cwd() } }),
    sessionDir,
  };
  if (!noSession) return files;
  // With --no-session pi 1.6 still opens the file switch_session names, and that session is a
  // file like any other: the new sessions and forks after it are files beside it. Until then
  // everything stays in memory.
  return {
    create: (options) => (currentFile() === undefined ? memorySessions(cwd()) : files).create(options),
    open: files.open,
    sessionDir: () => (currentFile() === undefined ? undefined : sessionDir()),
  };
}

export function sessionsRoot(agentDir: string): string {
  return join(agentDir, "sessions");
}
