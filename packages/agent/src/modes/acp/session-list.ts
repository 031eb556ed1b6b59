/**
 * session/list: the session files of a directory, newest first, with what an editor shows in its
 * history (title, last activity). Read-only: listing never writes or repairs a file.
 */
import { readFileSync } from "node:fs";
import { parseSessionFile } from "../../session/format.js";
import { listSessions } from "../../session/store.js";
import { userText } from "../../session/context.js";

export interface ListedSession {
  sessionId: string;
  cwd: string;
  file: string;
  title?: string;
  updatedAt: string;
}

/** Longest title derived from a first message; a session's own name is shown whole. */
const TITLE_CHARS = 80;

export function listSessionFiles(sessionDir: string): ListedSession[] {
  // The store finds the session files, newest first; the title needs the whole file.
  const found: ListedSession[] = [];
  for (const { path, id, cwd, mtime } of listSessions(sessionDir)) {
    try {
      const title = titleOf(parseSessionFile(readFileSync(path, "utf8"), path).entries);
      found.push({ sessionId: id, cwd, file: path, ...(title !== undefined ? { title } : {}), updatedAt: new Date(mtime).toISOString() });
    } catch {
      // A file that vanished (or changed into a non-session) meanwhile is not listed.
    }
  }
  return found;
}

type Entries = ReturnType<typeof parseSessionFile>["entries"];

/** The session's name (latest session_info), else the start of its first user message. */
function titleOf(entries: Entries): string | undefined {
  let name: string | undefined;
  let first: string | undefined;
  for (const entry of entries) {
    if (entry.type === "session_info") name = entry.name?.trim() || undefined;
    else if (first === undefined && entry.type === "message" && entry.message.role === "user") {
      const text = userText(entry.message.content).trim().replace(/\s+/g, " ");
      if (text) first = text.length > TITLE_CHARS ? `${text.slice(0, TITLE_CHARS - 1)}…` : text;
    }
  }
  return name ?? first;
}
