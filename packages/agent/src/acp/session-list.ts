/**
 * session/list: the session files of a directory, newest first, with what an editor shows in its
 * history (title, last activity). Read-only: listing never writes or repairs a file.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseSessionFile } from "../session/format.js";
import { userText } from "../session/context.js";

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
  let names: string[];
  try {
    names = readdirSync(sessionDir);
  } catch {
    return [];
  }
  const found: (ListedSession & { mtime: number })[] = [];
  for (const name of names) {
    if (!name.endsWith(".jsonl")) continue;
    const file = join(sessionDir, name);
    try {
      const stat = statSync(file);
      if (!stat.isFile()) continue;
      const parsed = parseSessionFile(readFileSync(file, "utf8"), file);
      if (!parsed.header) continue;
      const title = titleOf(parsed.entries);
      found.push({
        sessionId: parsed.header.id,
        cwd: parsed.header.cwd,
        file,
        ...(title !== undefined ? { title } : {}),
        updatedAt: stat.mtime.toISOString(),
        mtime: stat.mtimeMs,
      });
    } catch {
      // A file that is not a session (or vanished meanwhile) is not listed.
    }
  }
  found.sort((a, b) => b.mtime - a.mtime || (a.file < b.file ? 1 : -1));
  return found.map(({ mtime: _mtime, ...session }) => session);
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
