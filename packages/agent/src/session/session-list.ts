/**
 * `list_sessions` (a parley addition): the stored sessions of some session directories, newest
 * first, each with what a picker shows (name, first message, when, how many messages). Read-only:
 * listing never writes or repairs a file; one that cannot be read is left out.
 */
import type { ListedSession, ListSessionsData } from "@parley/protocol";
import { readSessionFile } from "./format.js";
import { userText } from "./context.js";
import { listSessions, type SessionFileInfo } from "./store.js";

/** Longest first message listed (the name is listed whole). */
const FIRST_MESSAGE_CHARS = 200;
/** Most sessions listed: each is read whole for its count and first message. */
export const MAX_LISTED_SESSIONS = 1000;

/** The sessions of `dirs` (duplicates by path once), newest first, at most MAX_LISTED_SESSIONS read. */
export function listSessionSummaries(dirs: readonly string[]): ListSessionsData {
  const byPath = new Map<string, SessionFileInfo>();
  for (const dir of new Set(dirs)) for (const info of listSessions(dir)) byPath.set(info.path, info);
  const found = [...byPath.values()].sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? 1 : -1));
  const sessions: ListedSession[] = [];
  const seen = new Set<string>();
  for (const info of found.slice(0, MAX_LISTED_SESSIONS)) {
    seen.add(info.path);
    // A file is read again only when it changed since it was last listed (a client lists often).
    const known = summaries.get(info.path);
    const summary = known !== undefined && known.mtime === info.mtime ? known.summary : summarise(info);
    if (summary) {
      summaries.set(info.path, { mtime: info.mtime, summary });
      sessions.push(summary);
    }
  }
  // Bounded: only the files of the latest listing are remembered.
  for (const path of summaries.keys()) if (!seen.has(path)) summaries.delete(path);
  return found.length > MAX_LISTED_SESSIONS ? { sessions, truncated: true } : { sessions };
}

const summaries = new Map<string, { mtime: number; summary: ListedSession }>();

function summarise(info: SessionFileInfo): ListedSession | undefined {
  let entries: ReturnType<typeof readSessionFile>["entries"];
  try {
    entries = readSessionFile(info.path).entries;
  } catch {
    // Vanished or no longer a session meanwhile: not listed.
    return undefined;
  }
  let name: string | undefined;
  let firstMessage: string | undefined;
  let messageCount = 0;
  for (const entry of entries) {
    if (entry.type === "session_info") name = entry.name?.trim() || undefined;
    else if (entry.type === "message") {
      messageCount++;
      if (firstMessage === undefined && entry.message.role === "user") {
        const text = userText(entry.message.content).trim().replace(/\s+/g, " ");
        if (text) firstMessage = text.length > FIRST_MESSAGE_CHARS ? `${text.slice(0, FIRST_MESSAGE_CHARS - 1)}…` : text;
      }
    }
  }
  return {
    id: info.id,
    path: info.path,
    cwd: info.cwd,
    ...(name !== undefined ? { name } : {}),
    ...(firstMessage !== undefined ? { firstMessage } : {}),
    updated: new Date(info.mtime).toISOString(),
    messageCount,
  };
}
