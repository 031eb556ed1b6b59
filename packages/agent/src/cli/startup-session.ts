/**
 * The session parley starts with, from pi's flags: --no-session, --fork, --session <path|id>,
 * --session-id, --continue/--resume, else a new one. Session files live where pi puts them
 * (--session-dir, PI_CODING_AGENT_SESSION_DIR, settings' sessionDir, else
 * `<agent dir>/sessions/<cwd slug>`); with the default directory, the sessions earlier parley
 * versions wrote under `~/.parley/sessions/` are found too (they are in pi's format).
 */
import { join, resolve } from "node:path";
import { memorySessions, type SessionFactory } from "../session/session-factory.js";
import type { SessionWarning } from "../session/format.js";
import type { Session } from "../session/session.js";
import { createSession, listAllSessions, listSessions, openSession, type SessionFileInfo } from "../session/store.js";
import { errorMessage } from "../error-text.js";
import { UsageError, type CliOptions } from "./args.js";

export interface SessionPlaces {
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
  sessions: SessionFactory;
  /** Things to say on stderr (a session found in another project, a new session for an id). */
  notes: string[];
}

/** A path (has a separator or ends in .jsonl), else a session id or the start of one (pi's rule). */
function looksLikePath(arg: string): boolean {
  return arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl");
}

function findById(arg: string, candidates: SessionFileInfo[]): SessionFileInfo | undefined {
  return candidates.find((s) => s.id === arg) ?? candidates.find((s) => s.id.startsWith(arg));
}

export function openStartupSession(options: CliOptions, places: SessionPlaces, onWarning: (w: SessionWarning) => void): StartupSession {
  const { cwd, sessionDir } = places;
  const notes: string[] = [];
  if (options.noSession) {
    const sessions = memorySessions(cwd);
    return { session: sessions.create({}), sessions, notes };
  }
  const sessions: SessionFactory = {
    create: ({ parentSession }) => createSession({ cwd, sessionDir, persist: true, onWarning, ...(parentSession !== undefined ? { parentSession } : {}) }),
    // As pi's SessionManager.open: a path with no file yet starts a session to be written there.
    open: (path) => openSession(path, { onWarning, createIfMissing: { cwd } }),
  };
  const local = (): SessionFileInfo[] => [sessionDir, ...places.readOnlyDirs].flatMap((dir) => listSessions(dir)).sort((a, b) => b.mtime - a.mtime);

  /** A --session/--fork argument: the file, or this project's session with that id, or another project's. */
  const locate = (flag: string, arg: string): { path: string; elsewhere?: string } => {
    if (looksLikePath(arg)) return { path: resolve(cwd, arg) };
    const here = findById(arg, local());
    if (here) return { path: here.path };
    const anywhere = places.allSessionsRoot !== undefined ? findById(arg, listAllSessions(places.allSessionsRoot)) : undefined;
    if (anywhere) return { path: anywhere.path, elsewhere: anywhere.cwd };
    throw new UsageError(`${flag} ${arg}: no session found matching '${arg}'`);
  };
  const open = (flag: string, path: string, createIfMissing: boolean): Session => {
    try {
      return openSession(path, { onWarning, ...(createIfMissing ? { createIfMissing: { cwd } } : {}) });
    } catch (error) {
      throw new UsageError(`${flag} ${path}: ${errorMessage(error)}`);
    }
  };

  if (options.fork !== undefined) {
    if (options.sessionId !== undefined && findById(options.sessionId, local())?.id === options.sessionId) {
      throw new UsageError(`--session-id ${options.sessionId}: a session with that id already exists`);
    }
    const source = open("--fork", locate("--fork", options.fork).path, false);
    try {
      const session = source.clone({ cwd, sessionDir, ...(options.sessionId !== undefined ? { id: options.sessionId } : {}) });
      return { session, sessions, notes };
    } catch (error) {
      throw new UsageError(`--fork ${options.fork}: ${errorMessage(error)}`);
    }
  }
  if (options.session !== undefined) {
    const found = locate("--session", options.session);
    if (found.elsewhere !== undefined) {
      // pi asks in its terminal whether to fork; RPC mode has no one to ask, so it forks (nothing is lost).
      notes.push(`--session ${options.session}: the session belongs to ${found.elsewhere}; continuing in a fork of it in this folder`);
      const source = open("--session", found.path, false);
      return { session: source.clone({ cwd, sessionDir }), sessions, notes };
    }
    return { session: open("--session", found.path, true), sessions, notes };
  }
  if (options.sessionId !== undefined) {
    const existing = local().find((s) => s.id === options.sessionId);
    if (existing) return { session: open("--session-id", existing.path, false), sessions, notes };
    notes.push(`No project session found with id '${options.sessionId}'; creating a new session with that id.`);
    return { session: createSession({ cwd, sessionDir, persist: true, onWarning, id: options.sessionId }), sessions, notes };
  }
  if (options.continue || options.resume) {
    const latest = local()[0];
    if (latest) return { session: open(options.continue ? "--continue" : "--resume", latest.path, false), sessions, notes };
  }
  return { session: sessions.create({}), sessions, notes };
}

export function sessionsRoot(agentDir: string): string {
  return join(agentDir, "sessions");
}
