/**
 * The session file format, pi's v3 JSONL: a header line, then one entry per line.
 *
 * Reading is forgiving by design: a session file is written by a process that may be killed at
 * any moment, and may come from another pi version. So a torn final line, a corrupt line or an
 * entry we do not understand costs that one line (reported through a warning), never the file.
 * A file whose first line is not a session header is refused (SessionFileError): then it is not
 * a session at all, and parley must not write to it. Only a 0-byte file may become a new session.
 */
import { isAscii, isUtf8 } from "node:buffer";
import { closeSync, openSync, readSync } from "node:fs";
import type { SessionEntry } from "@parley/protocol";
import { nodeCrypto } from "../lazy-node.js";
import { parseMessageLine } from "./message-line.js";
import { firstLineProblem, headerProblem, READ_NO_WAIT } from "./sniff.js";

export const CURRENT_SESSION_VERSION = 3;

export interface SessionHeader {
  type: "session";
  version: 3;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
}

export type SessionEntryType = SessionEntry["type"];
export type EntryOfType<T extends SessionEntryType> = Extract<SessionEntry, { type: T }>;

/** Something on disk that loading skipped or repaired. */
export interface SessionWarning {
  /**
   * torn_tail: the last line has no LF and is not JSON (a write cut short; expected after kill -9).
   * invalid_line: a line that is not JSON. invalid_entry: JSON that is not a usable entry.
   * unknown_entry: an entry type this version does not know. duplicate_id: an id seen before.
   */
  kind: "torn_tail" | "invalid_line" | "invalid_entry" | "unknown_entry" | "duplicate_id";
  /** 1-based line number in the file. */
  line: number;
  message: string;
  file?: string;
}
export type SessionWarningHandler = (warning: SessionWarning) => void;

/** A file that cannot be read as a session at all (no header). */
export class SessionFileError extends Error {
  override name = "SessionFileError";
}

/** The refusal, with what to do about it; the file is left as it is. */
export function notASessionFile(file: string, reason: string): SessionFileError {
  return new SessionFileError(
    `${file} is not a session file (${reason}); parley leaves it untouched. Give the path of a session file, of an empty file, or of a file that does not exist yet`,
  );
}

export interface ParsedSessionFile {
  /** undefined: the file holds no complete record (empty, or a header torn while being written). */
  header: SessionHeader | undefined;
  entries: SessionEntry[];
  /** Ids that appear in the file but were skipped; new ids must avoid them. */
  skippedIds: string[];
  /** false when the file does not end with LF: the next append must start a new line first. */
  endsWithNewline: boolean;
  /** The header's version when it was older than 3 (entries were migrated in memory). */
  migratedFrom?: number;
  /**
   * Where in the file each message's own JSON is (read from a file, version 3, valid UTF-8, pi's
   * line shape): those bytes are a JSON text of the message, for get_messages to send as they are.
   */
  messageSpans?: Map<object, ByteSpan>;
  warnings: SessionWarning[];
}

/** Bytes [start, end) of a file. */
export interface ByteSpan {
  start: number;
  end: number;
}

interface RawRecord {
  line: number;
  value: unknown;
}

/**
 * Feeds every LF-terminated line (LF removed, nothing else) with its 1-based number to `onLine`
 * and returns what follows the last LF (the unterminated tail, "" when the input ends with LF).
 * A line read from a file comes as its bytes (valid only during the call), decoded by the
 * parser, with its offset in the file.
 */
type LineSource = (onLine: (line: string | Buffer, number: number, offset?: number) => void) => string;

/** Parses a whole session file held as text. Throws SessionFileError unless it is empty or starts with a header. */
export function parseSessionFile(text: string, file?: string): ParsedSessionFile {
  return parseSessionLines((onLine) => {
    let start = 0;
    let line = 0;
    for (let lf = text.indexOf("\n"); lf !== -1; lf = text.indexOf("\n", start)) {
      onLine(text.slice(start, lf), ++line);
      start = lf + 1;
    }
    return text.slice(start);
  }, file);
}

/** Bytes read per system call when loading a file: the whole file is never held at once. */
const READ_CHUNK = 1 << 20;

/**
 * Reads and parses a session file chunk by chunk. Lines are cut at LF bytes (never part of a
 * multi-byte UTF-8 sequence), and a pure-ASCII line is decoded as latin1, which is the same text
 * at a fraction of UTF-8 decoding's cost. (Decoding a whole chunk at once and slicing lines out
 * of it was slower: each 1 MiB string is a large object, and they made V8 collect more often.)
 * Throws SessionFileError unless it is empty or starts with a header.
 */
export function readSessionFile(path: string, file: string = path): ParsedSessionFile {
  const fd = openSync(path, READ_NO_WAIT);
  try {
    return parseSessionLines((onLine) => {
      const chunk = Buffer.allocUnsafe(READ_CHUNK);
      // Bytes of the line in progress from earlier chunks (copied: `chunk` is reused).
      let pending: Buffer[] = [];
      let line = 0;
      // File offsets of the chunk and of the line in progress.
      let chunkAt = 0;
      let lineAt = 0;
      for (let read = readSync(fd, chunk, 0, READ_CHUNK, null); read > 0; read = readSync(fd, chunk, 0, READ_CHUNK, null)) {
        const data = chunk.subarray(0, read);
        let start = 0;
        for (let lf = data.indexOf(10); lf !== -1; lf = data.indexOf(10, start)) {
          const bytes = pending.length === 0 ? data.subarray(start, lf) : Buffer.concat([...pending, data.subarray(start, lf)]);
          pending = [];
          onLine(bytes, ++line, lineAt);
          start = lf + 1;
          lineAt = chunkAt + start;
        }
        if (start < read) pending.push(Buffer.from(data.subarray(start)));
        chunkAt += read;
      }
      return pending.length === 0 ? "" : decodeLine(Buffer.concat(pending));
    }, file);
  } finally {
    closeSync(fd);
  }
}

function decodeLine(bytes: Buffer): string {
  return bytes.toString(isAscii(bytes) ? "latin1" : "utf8");
}

function parseSessionLines(source: LineSource, file: string | undefined): ParsedSessionFile {
  const warnings: SessionWarning[] = [];
  const warn = (kind: SessionWarning["kind"], line: number, message: string): void => {
    warnings.push({ kind, line, message, ...(file !== undefined ? { file } : {}) });
  };

  // LF is the only separator (U+2028/U+2029 are legal inside JSON strings); CR before it is dropped.
  const records: RawRecord[] = [];
  let lineCount = 0;
  let firstLine: string | undefined;
  // Set once the header says version 3 (older files' messages are migrated, so their bytes are not theirs).
  let messageSpans: Map<object, ByteSpan> | undefined;
  const tail = source((text, number, offset) => {
    lineCount = number;
    let raw: string;
    if (typeof text === "string") raw = text;
    else {
      // A pure-ASCII line decodes as latin1: the same text at a fraction of UTF-8's cost.
      const ascii = isAscii(text);
      if (messageSpans !== undefined && offset !== undefined && text[text.length - 1] !== 0x0d && (ascii || isUtf8(text))) {
        const parsed = parseMessageLine(text, ascii);
        if (parsed !== undefined) {
          records.push({ line: number, value: parsed.value });
          const message = parsed.value["message"];
          if (typeof message === "object" && message !== null)
            messageSpans.set(message, { start: offset + parsed.messageStart, end: offset + text.length - 1 });
          return;
        }
      }
      raw = text.toString(ascii ? "latin1" : "utf8");
    }
    // A byte order mark can only start the first line.
    if (number === 1 && raw.charCodeAt(0) === 0xfeff) raw = raw.slice(1);
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (number === 1) firstLine = line;
    if (line.trim() === "") return;
    try {
      const value: unknown = JSON.parse(line);
      records.push({ line: number, value });
      if (number === 1 && readVersion(value) >= CURRENT_SESSION_VERSION) messageSpans = new Map();
    } catch {
      warn("invalid_line", number, `line ${number} is not valid JSON; skipped`);
    }
  });
  let endsWithNewline = true;
  if (tail !== "") {
    endsWithNewline = false;
    const tailLine = lineCount + 1;
    const text = tailLine === 1 && tail.charCodeAt(0) === 0xfeff ? tail.slice(1) : tail;
    if (text.trim() !== "") {
      // A JSON object's proper prefix is never valid JSON, so a parsable tail is a complete
      // record that only lacks its LF (e.g. a hand-written file); anything else is torn.
      try {
        records.push({ line: tailLine, value: JSON.parse(text) });
      } catch {
        warn("torn_tail", tailLine, `last line ${tailLine} is incomplete (${text.length} characters, no LF); ignored`);
      }
    }
  }

  // Only a truly empty file may become a session; anything else must start with a header, or
  // it is not ours to write to (a notes file, a pretty-printed JSON file, a torn header).
  const onlyLine = lineCount === 0 ? (tail.charCodeAt(0) === 0xfeff ? tail.slice(1) : tail) : undefined;
  if (onlyLine === "") return { header: undefined, entries: [], skippedIds: [], endsWithNewline, warnings };
  const first = records[0]?.line === 1 ? records.shift() : undefined;
  const problem = first === undefined ? firstLineProblem(firstLine ?? onlyLine?.replace(/\r$/, "") ?? "") : headerProblem(first.value);
  const header = first === undefined ? undefined : asHeader(first.value);
  if (first === undefined || header === undefined || problem !== undefined) {
    throw notASessionFile(file ?? "the file", problem ?? "it has no session header");
  }
  const version = readVersion(first.value);
  const values = records.map((r) => r.value);
  if (version < 2)
    migrateV1(
      values,
      records.map((r) => r.line),
      first.value,
    );
  if (version < 3) migrateV2(values);

  const entries: SessionEntry[] = [];
  const seen = new Set<string>();
  const skippedIds: string[] = [];
  // Children of a skipped entry are re-attached to its parent, so one unreadable entry (say, a
  // type from a newer pi) does not cut the history of everything after it.
  const alias = new Map<string, string | null>();
  const resolve = (id: string | null): string | null => {
    for (let hops = 0; id !== null && alias.has(id) && hops < 10_000; hops++) id = alias.get(id) ?? null;
    return id;
  };
  records.forEach((record, i) => {
    const value = values[i];
    const checked = checkEntry(value);
    if (checked.ok && seen.has(checked.entry.id)) {
      warn("duplicate_id", record.line, `line ${record.line}: entry id ${checked.entry.id} was already used; skipped`);
      return;
    }
    if (!checked.ok) {
      warn(checked.kind, record.line, `line ${record.line}: ${checked.reason}; skipped`);
      const base = baseFields(value);
      if (base !== undefined && !seen.has(base.id)) {
        alias.set(base.id, base.parentId);
        skippedIds.push(base.id);
      }
      return;
    }
    const entry = checked.entry;
    const parentId = resolve(entry.parentId);
    seen.add(entry.id);
    entries.push(parentId === entry.parentId ? entry : { ...entry, parentId });
  });

  return {
    header,
    entries,
    skippedIds,
    endsWithNewline,
    ...(version < CURRENT_SESSION_VERSION ? { migratedFrom: version } : {}),
    ...(messageSpans !== undefined ? { messageSpans } : {}),
    warnings,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asHeader(value: unknown): SessionHeader | undefined {
  if (!isRecord(value) || value["type"] !== "session" || typeof value["id"] !== "string") return undefined;
  // Keep unknown fields (a newer pi may add some) but normalise the ones we rely on.
  return {
    ...value,
    type: "session",
    version: CURRENT_SESSION_VERSION,
    id: value["id"],
    timestamp: typeof value["timestamp"] === "string" ? value["timestamp"] : "",
    cwd: typeof value["cwd"] === "string" ? value["cwd"] : "",
  } as SessionHeader;
}

function readVersion(header: unknown): number {
  const version = isRecord(header) ? header["version"] : undefined;
  return typeof version === "number" ? version : 1;
}

/**
 * v1 files are a linear list without ids: chain them, and turn compaction indexes into ids. The
 * ids derive from the line number, so they are the same at every load: parley appends to a v1
 * file as it is (never rewrites it), and the entries it appends (which carry ids of their own and
 * are left alone here) keep pointing at the right parents.
 */
function migrateV1(values: unknown[], lineNumbers: number[], header: unknown): void {
  let previous: string | null = null;
  values.forEach((value, i) => {
    if (!isRecord(value) || typeof value["id"] === "string") return;
    const id = `v1l${lineNumbers[i]!.toString(16).padStart(5, "0")}`;
    value["id"] = id;
    value["parentId"] = previous;
    previous = id;
  });
  // pi counted the header as index 0 of the record list.
  const all = [header, ...values];
  for (const value of values) {
    if (!isRecord(value) || value["type"] !== "compaction" || typeof value["firstKeptEntryIndex"] !== "number") continue;
    const target = all[value["firstKeptEntryIndex"]];
    if (isRecord(target) && typeof target["id"] === "string" && target !== header) value["firstKeptEntryId"] = target["id"];
    delete value["firstKeptEntryIndex"];
  }
}

/** v2 → v3: extension messages were called hookMessage. */
function migrateV2(values: unknown[]): void {
  for (const value of values) {
    if (isRecord(value) && value["type"] === "message" && isRecord(value["message"]) && value["message"]["role"] === "hookMessage") {
      value["message"]["role"] = "custom";
    }
  }
}

function baseFields(value: unknown): { id: string; parentId: string | null } | undefined {
  if (!isRecord(value) || typeof value["id"] !== "string" || value["id"] === "") return undefined;
  const parentId = value["parentId"];
  if (parentId !== null && typeof parentId !== "string") return undefined;
  return { id: value["id"], parentId };
}

type CheckResult = { ok: true; entry: SessionEntry } | { ok: false; kind: "invalid_entry" | "unknown_entry"; reason: string };

const str = (v: unknown): boolean => typeof v === "string";
const optStr = (v: unknown): boolean => v === undefined || typeof v === "string";
const isContent = (v: unknown): boolean => typeof v === "string" || Array.isArray(v);

/**
 * The fields each entry type needs for parley to use it. Deliberately looser than the wire
 * schema for message bodies: older pi versions wrote messages with fewer fields, and dropping
 * such an entry would cut the conversation.
 */
const REQUIRED: Record<SessionEntryType, (e: Record<string, unknown>) => string | undefined> = {
  message: (e) => (isRecord(e["message"]) && str(e["message"]["role"]) ? undefined : "message entry without a message.role"),
  thinking_level_change: (e) => (str(e["thinkingLevel"]) ? undefined : "thinking_level_change without thinkingLevel"),
  model_change: (e) => (str(e["provider"]) && str(e["modelId"]) ? undefined : "model_change without provider/modelId"),
  compaction: (e) =>
    str(e["summary"]) &&
    typeof e["tokensBefore"] === "number" &&
    optStr(e["firstKeptEntryId"]) &&
    (e["retainedTail"] === undefined || Array.isArray(e["retainedTail"]))
      ? undefined
      : "compaction without summary/tokensBefore",
  branch_summary: (e) => (str(e["fromId"]) && str(e["summary"]) ? undefined : "branch_summary without fromId/summary"),
  custom: (e) => (str(e["customType"]) ? undefined : "custom entry without customType"),
  custom_message: (e) =>
    str(e["customType"]) && isContent(e["content"]) && typeof e["display"] === "boolean" ? undefined : "custom_message without customType/content/display",
  label: (e) => (str(e["targetId"]) && optStr(e["label"]) ? undefined : "label entry without targetId"),
  session_info: (e) => (optStr(e["name"]) ? undefined : "session_info with a non-string name"),
  // The newest pi's: usage of side calls (cache warming), and edits/omissions of context messages.
  usage: (e) => (str(e["kind"]) && str(e["provider"]) && str(e["model"]) && isRecord(e["usage"]) ? undefined : "usage entry without kind/provider/model/usage"),
  context_edit: (e) =>
    str(e["targetId"]) && (e["replacement"] === null || (isRecord(e["replacement"]) && isContent(e["replacement"]["content"])))
      ? undefined
      : "context_edit without targetId/replacement",
};

function checkEntry(value: unknown): CheckResult {
  if (!isRecord(value)) return { ok: false, kind: "invalid_entry", reason: "not a JSON object" };
  const type = value["type"];
  if (typeof type !== "string") return { ok: false, kind: "invalid_entry", reason: 'no "type"' };
  if (type === "session") return { ok: false, kind: "invalid_entry", reason: "a second session header" };
  if (baseFields(value) === undefined || typeof value["timestamp"] !== "string") {
    return { ok: false, kind: "invalid_entry", reason: `${type} entry without id/parentId/timestamp` };
  }
  if (!Object.hasOwn(REQUIRED, type)) return { ok: false, kind: "unknown_entry", reason: `unknown entry type "${type}"` };
  const problem = REQUIRED[type as SessionEntryType](value);
  if (problem !== undefined) return { ok: false, kind: "invalid_entry", reason: problem };
  return { ok: true, entry: value as SessionEntry };
}

/**
 * 8 hex characters, like pi's entry ids; unique among `taken`. From Math.random, as session ids
 * are (below): an entry id must be unique in its file, not secret, and the entries a start records
 * then do not load node:crypto (~2 MiB).
 */
export function newEntryId(taken: { has(id: string): boolean }): string {
  for (let i = 0; i < 100; i++) {
    const id = Math.floor(Math.random() * 0x1_0000_0000)
      .toString(16)
      .padStart(8, "0");
    if (!taken.has(id)) return id;
  }
  return nodeCrypto().randomUUID();
}

/**
 * A UUIDv7 (time-ordered), as pi uses for session ids: file names sort by creation time. The 74
 * random bits come from Math.random (seeded from the OS per process): a session id must be
 * unique, not secret, and start-up then does not load node:crypto.
 */
export function newSessionId(now = Date.now()): string {
  const b = Buffer.alloc(16);
  for (let i = 6; i < 16; i++) b[i] = Math.floor(Math.random() * 256);
  let ms = now;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** pi's file name: `<ISO timestamp with : and . as ->_<session id>.jsonl`. */
export function sessionFileName(timestamp: string, id: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`;
}
