/**
 * What a file on disk is, judged from its first line only, before parley writes near it: a
 * session (its first line is a session header), an empty file (0 bytes), missing, or something
 * else. parley writes session lines only into a new, an empty or a session file, and never writes
 * an export over a session (see export-html.ts).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

export type FileKind =
  | { kind: "missing" }
  | { kind: "empty" }
  | { kind: "session" }
  /** Not a regular file, or not a session: `reason` says why, in words for the user. */
  | { kind: "other"; reason: string };

/**
 * Flags to open a file only to look at it: a FIFO opened plainly blocks until someone writes to
 * it (parley hung on `--session`, `switch_session`, `export_html` or `--export` naming one);
 * O_NONBLOCK opens it at once, and the checks below refuse it. No effect on regular files.
 */
export const READ_NO_WAIT = constants.O_RDONLY | constants.O_NONBLOCK;

/** A session header is at most a few KiB (the cwd is its longest field); read no further. */
const HEADER_LIMIT = 64 * 1024;

/** The errno code of a thrown fs error ("ENOENT", …), or "error". */
function errnoCode(error: unknown): string {
  const code = isRecord(error) ? error["code"] : undefined;
  return typeof code === "string" ? code : "error";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Why a parsed first line is not a session header, or undefined when it is one. */
export function headerProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return `its first line is JSON but not an object (${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value})`;
  if (value["type"] !== "session") {
    const type = value["type"];
    return `its first line is a JSON object but not a session header (type ${typeof type === "string" ? JSON.stringify(type.slice(0, 40)) : "missing"}, expected "session")`;
  }
  if (typeof value["id"] !== "string" || value["id"] === "") return "its first line is a session header without an id";
  return undefined;
}

/** Why the first line's text is not a session header, or undefined when it is one. */
export function firstLineProblem(line: string): string | undefined {
  if (line.trim() === "") return "its first line is blank";
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "its first line is not JSON";
  }
  return headerProblem(value);
}

/** Follows symlinks, as a write would. Never throws: an unreadable file is "other". */
export function sniffFile(path: string): FileKind {
  let fd: number;
  try {
    fd = openSync(path, READ_NO_WAIT);
  } catch (error) {
    const code = errnoCode(error);
    return code === "ENOENT" ? { kind: "missing" } : { kind: "other", reason: `it cannot be read (${code})` };
  }
  try {
    return sniffDescriptor(fd);
  } finally {
    closeSync(fd);
  }
}

/** sniffFile on a descriptor open for reading (left open). Never throws. */
export function sniffDescriptor(fd: number): FileKind {
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return { kind: "other", reason: "it is a directory" };
    // A FIFO or device would block or never end: only regular files are sessions.
    if (!stat.isFile()) return { kind: "other", reason: "it is not a regular file" };
    if (stat.size === 0) return { kind: "empty" };
    const buffer = Buffer.alloc(Math.min(HEADER_LIMIT, stat.size));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    let text = buffer.toString("utf8", 0, read);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const newline = text.indexOf("\n");
    if (newline < 0 && read < stat.size) return { kind: "other", reason: `its first line is longer than ${HEADER_LIMIT / 1024} KiB` };
    let line = newline < 0 ? text : text.slice(0, newline);
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const problem = firstLineProblem(line);
    return problem === undefined ? { kind: "session" } : { kind: "other", reason: problem };
  } catch (error) {
    return { kind: "other", reason: `it cannot be read (${errnoCode(error)})` };
  }
}
