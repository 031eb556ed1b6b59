/**
 * The session: a header and an append-only tree of entries, with the active branch ending at
 * `leafId`. Optionally persisted to a JSONL file in pi's format (see format.ts and store.ts).
 *
 * Durability: every append after the file exists is one write of complete lines at the end of
 * the file, so a process killed at any moment leaves a file that loads, minus at most the line
 * being written. A write that fails (a full disk, a folder that is gone or read-only) loses
 * nothing: the entry is in memory, the lines not on disk wait, and the next append writes them
 * first (appends only; a torn line is left behind and the next starts on a line of its own).
 * The first failure of an episode and the return to saving are told to `onSave`. Like pi, a new session's file is created only when the first assistant message is
 * appended (header and buffered entries in one write): a session that never got an answer leaves
 * no file, so `-c` does not resume an empty session. `flush(true)` forces it out earlier.
 *
 * Entries are stored as a JSON round-trip of what was appended, so memory and disk hold exactly
 * the same values (undefined fields dropped, no shared references with the caller). Treat
 * returned entries as read-only.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { AgentMessage, SessionEntry, SessionTreeNode } from "@parley/protocol";
import { branchMessages, buildSessionContext, currentSystemMessage, userText, type SessionContext } from "./context.js";
import {
  CURRENT_SESSION_VERSION,
  newEntryId,
  newSessionId,
  notASessionFile,
  readSessionFile,
  sessionFileName,
  type EntryOfType,
  type SessionHeader,
  type SessionWarning,
  type SessionWarningHandler,
} from "./format.js";
import { type FileIdentity, MessageBytes } from "./message-bytes.js";
import { sniffDescriptor, sniffFile } from "./sniff.js";
import { lockSessionFile, SessionLockedError } from "./session-lock.js";
import { computeStats, type SessionStatsData } from "./stats.js";
import { writeStderr } from "../transport/stderr.js";
import { errorMessage } from "../error-text.js";
import { makeDirsSync } from "../make-dirs.js";
import { withYoungGenerationHeld } from "../startup/module-loader.js";

export type { SessionEntry, SessionTreeNode, SessionHeader, SessionWarning, SessionWarningHandler, SessionContext };
export type MessageEntry = EntryOfType<"message">;
export type CustomEntry = EntryOfType<"custom">;
export type CustomMessageEntry = EntryOfType<"custom_message">;
export type CompactionEntry = EntryOfType<"compaction">;
export type ContextEditEntry = EntryOfType<"context_edit">;
export type BranchSummaryEntry = EntryOfType<"branch_summary">;
export type LabelEntry = EntryOfType<"label">;
export type SessionInfoEntry = EntryOfType<"session_info">;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An entry as appended: the session assigns id, parentId and timestamp. */
export type NewSessionEntry =
  | DistributiveOmit<SessionEntry, "id" | "parentId" | "timestamp">
  // Callers often build messages as plain objects whose role widens to string; accepted as is.
  | { type: "message"; message: { role: string; [key: string]: unknown } };

/**
 * A save failure (the first of an episode; retried with every new entry), saving working again
 * after one, or a refusal: the file is no longer the one this session opened or created (deleted,
 * replaced, not a session any more, taken by another writer), so parley writes nothing there
 * again and the conversation goes on in memory only.
 */
export type SaveNotice =
  | { kind: "failed"; file: string; error: string; unsaved: number }
  | { kind: "resumed"; file: string }
  | { kind: "refused"; file: string; error: string; unsaved: number };
export type SaveListener = (notice: SaveNotice) => void;

const defaultSaveListener: SaveListener = (notice) =>
  writeStderr(
    notice.kind === "failed"
      ? `parley: could not save to the session file ${notice.file}: ${notice.error}; ${notice.unsaved} entries wait to be written\n`
      : notice.kind === "refused"
        ? `parley: ${refusalText(notice)}\n`
        : `parley: saving to the session file ${notice.file} works again\n`,
  );

/** What a refusal means for the user, and what to do. */
export function refusalText(notice: { file: string; error: string; unsaved: number }): string {
  return `parley will not write to the session file ${notice.file} any more: ${notice.error}. The conversation goes on in memory only (${notice.unsaved} entries not saved); the clone command (or /clone) keeps it in a new session file.`;
}

/** Sessions holding entries their file does not, told on stderr when parley exits. */
const unsavedAtExit = new Set<Session>();
let exitReport = false;
function reportAtExit(session: Session): void {
  unsavedAtExit.add(session);
  if (exitReport) return;
  exitReport = true;
  process.on("exit", () => {
    for (const s of unsavedAtExit) {
      const text = s.unsavedReport();
      if (text !== undefined) writeStderr(`parley: ${text}\n`);
    }
  });
}

export interface SessionView {
  header: SessionHeader;
}

export interface SessionOptions {
  parentSession?: string;
  /** The session's id (pi's --session-id); default a new one. */
  id?: string;
  /** Persist to this JSONL file (created on the first assistant message). */
  file?: string;
  /** Persist to a new file in this directory, named like pi's (`<time>_<id>.jsonl`). */
  sessionDir?: string;
  /** Load-time problems; defaults to a line on stderr (never stdout: that is the RPC stream). */
  onWarning?: SessionWarningHandler;
  /** Take the file's lock now (session-lock.ts): a file another process writes is refused. */
  lock?: boolean;
}

/** Where a fork goes instead of beside its source: another project's folder and session directory. */
export interface ForkTarget {
  cwd?: string;
  sessionDir?: string;
  id?: string;
}

export interface ForkResult {
  session: Session;
  /** Text of the user message forked before (position "before"), to put back in an editor. */
  selectedText?: string;
}

/**
 * memory: never written. pending: file not created yet. empty: the file exists with 0 bytes (the
 * first write appends the header there, after checking it is still empty). synced: appends go
 * to the file. refused: the file is no longer this session's (see SaveNotice); never written
 * again. parley never truncates, replaces or renames over a file: it creates new files
 * exclusively (wx) and otherwise only appends, to the file it opened or created (same device and
 * inode, still a session file).
 */
type DiskState = "memory" | "pending" | "empty" | "synced" | "refused";

/** The file a session writes: which one, and how long it was after this session's last write. */
interface FileMark {
  dev: number;
  ino: number;
  size: number;
}

const defaultWarning: SessionWarningHandler = (w) => {
  writeStderr(`parley: session ${w.file ?? ""}: ${w.message}\n`);
};

export class Session implements SessionView {
  #header: SessionHeader;
  readonly #entries: SessionEntry[] = [];
  /** Position of each entry in append order: lookups by id and get_entries cursors are O(1). */
  readonly #position = new Map<string, number>();
  /** Ids of lines the load skipped: a new id avoids them too, so it never collides on reload. */
  readonly #skippedIds = new Set<string>();
  /** What a new id must not be: any id in the file. */
  readonly #taken = { has: (id: string): boolean => this.#position.has(id) || this.#skippedIds.has(id) };
  readonly #labels = new Map<string, { label: string; timestamp: string }>();
  /** Entry types present, so "has the session ever had X" needs no scan. */
  #leafId: string | null = null;
  #name: string | undefined;
  #file: string | undefined;
  #disk: DiskState;
  #hasAssistant = false;
  /** The file does not end with LF (torn tail, or a failed write): start the next line with one. */
  #needsNewline = false;
  /** synced: lines appended in memory whose write failed, oldest first; written before the next. */
  #unsaved: string[] = [];
  /** The error of the save failure going on, if one is. */
  #saveError: string | undefined;
  #onSave: SaveListener = defaultSaveListener;
  readonly #onWarning: SessionWarningHandler;
  /** Where the loaded file holds its messages, until the first get_messages takes it (see takeMessageJson). */
  #messageJson: MessageBytes | undefined;
  /** The file this session opened or created; every write checks it is still that file. */
  #mark: FileMark | undefined;
  /** Why the file is refused (disk state "refused"). */
  #refusal: string | undefined;
  /** The file's lock, while this session holds it. */
  #unlock: (() => void) | undefined;

  constructor(cwd: string, options: SessionOptions = {}) {
    this.#header = {
      type: "session",
      version: CURRENT_SESSION_VERSION,
      id: options.id ?? newSessionId(),
      timestamp: new Date().toISOString(),
      cwd,
      ...(options.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
    };
    // Neither file nor sessionDir: an in-memory session (--no-session).
    this.#file =
      options.file !== undefined
        ? resolve(options.file)
        : options.sessionDir !== undefined
          ? resolve(options.sessionDir, sessionFileName(this.#header.timestamp, this.#header.id))
          : undefined;
    this.#disk = this.#file !== undefined ? "pending" : "memory";
    this.#onWarning = options.onWarning ?? defaultWarning;
    if (options.lock === true && this.#file !== undefined) this.#unlock = lockSessionFile(this.#file);
  }

  /**
   * Loads a session file. A missing file throws (ENOENT); anything but a regular file that is
   * empty (0 bytes) or starts with a session header throws SessionFileError, and is never
   * written. An empty file becomes a fresh session written there on first write. Appends go to
   * the end of the file; lines it could not read stay on disk untouched.
   */
  static open(path: string, options: { onWarning?: SessionWarningHandler; cwd?: string; lock?: boolean } = {}): Session {
    const file = resolve(path);
    const sniffed = sniffFile(file);
    // A missing file: reading it below throws the ENOENT error callers expect.
    if (sniffed.kind === "other") throw notASessionFile(file, sniffed.reason);
    const session = new Session(options.cwd ?? process.cwd(), {
      file,
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
      ...(options.lock === true && sniffed.kind !== "missing" ? { lock: true } : {}),
    });
    let parsed: ReturnType<typeof readSessionFile>;
    try {
      // The file the reading saw is the one writes must reach: marked before it is read.
      session.#mark = markOf(statSync(file));
      // Nearly everything the load allocates lives on: the young generation is not grown for it.
      parsed = withYoungGenerationHeld(() => readSessionFile(file));
    } catch (error) {
      session.release();
      throw error;
    }
    for (const warning of parsed.warnings) session.#onWarning(warning);
    if (parsed.header === undefined) {
      session.#disk = "empty";
      return session;
    }
    session.#header = parsed.header;
    for (const id of parsed.skippedIds) session.#skippedIds.add(id);
    for (const entry of parsed.entries) session.#index(entry);
    // pi's rule: after loading, the leaf is the last entry in the file.
    session.#leafId = parsed.entries.at(-1)?.id ?? null;
    session.#disk = "synced";
    session.#needsNewline = !parsed.endsWithNewline;
    if (parsed.messageSpans !== undefined) {
      session.#messageJson = new MessageBytes(file, fileIdentity(file), parsed.messageSpans);
    }
    return session;
  }

  get header(): SessionHeader {
    return this.#header;
  }
  get id(): string {
    return this.#header.id;
  }
  get cwd(): string {
    return this.#header.cwd;
  }
  /** The JSONL file (which may not exist yet, see `written`); undefined for in-memory sessions. */
  get file(): string | undefined {
    return this.#file;
  }
  get persisted(): boolean {
    return this.#file !== undefined;
  }
  /** Whether the file holds everything appended so far. */
  get written(): boolean {
    return this.#disk === "synced" && this.#unsaved.length === 0;
  }
  /** Who hears of save failures and recoveries (default: stderr); told at once of a failure going on. */
  set onSave(listener: SaveListener) {
    this.#onSave = listener;
    if (this.#file === undefined) return;
    if (this.#refusal !== undefined) listener({ kind: "refused", file: this.#file, error: this.#refusal, unsaved: this.#unsavedCount() });
    else if (this.#saveError !== undefined) listener({ kind: "failed", file: this.#file, error: this.#saveError, unsaved: this.#unsavedCount() });
  }

  /** Lets go of the file's lock: the agent has left this session (once it is released, another process may open the file). */
  release(): void {
    const unlock = this.#unlock;
    this.#unlock = undefined;
    unlock?.();
  }

  /** What parley says at exit when this session holds entries its file does not. */
  unsavedReport(): string | undefined {
    const unsaved = this.#unsavedCount();
    if (this.#file === undefined || unsaved === 0 || (this.#refusal === undefined && this.#saveError === undefined)) return undefined;
    const why = this.#refusal ?? this.#saveError;
    return `${unsaved} entries of session ${this.id} were never written to ${this.#file} (${why}); they are lost now that parley ends`;
  }
  /** From the latest session_info entry (any branch, like pi); undefined when none or cleared. */
  get name(): string | undefined {
    return this.#name;
  }
  get leafId(): string | null {
    return this.#leafId;
  }

  // ---- appending ---------------------------------------------------------------------

  /** Appends a child of the current leaf and makes it the leaf. Returns the stored entry. */
  append(entry: NewSessionEntry): SessionEntry {
    if (entry.type === "message" && (entry.message.role === "compactionSummary" || entry.message.role === "branchSummary")) {
      // As in pi: summaries are entries of their own (compaction / branch_summary), so they can be found.
      throw new Error(
        `A ${entry.message.role} message cannot be appended as a message entry; append a ${entry.message.role === "compactionSummary" ? "compaction" : "branch_summary"} entry`,
      );
    }
    if (entry.type === "label" && !this.#position.has(entry.targetId)) {
      throw new Error(`Cannot label entry ${entry.targetId}: no such entry`);
    }
    const stamp = { id: newEntryId(this.#taken), parentId: this.#leafId, timestamp: new Date().toISOString() };
    // pi's key order, so the files read alike (and resume through the fast path, format.ts): the
    // type and the stamp first, except for custom entries, which pi writes with the stamp last.
    const full =
      entry.type === "custom" || entry.type === "custom_message"
        ? { ...entry, ...stamp }
        : Object.assign({ type: entry.type, ...stamp }, this.#withSystemSnapshot(entry, stamp.timestamp), stamp);
    let line: string;
    try {
      line = JSON.stringify(full);
    } catch (error) {
      throw new Error(`Session entry is not serialisable as JSON: ${errorMessage(error)}`);
    }
    const stored = JSON.parse(line) as SessionEntry;
    this.#index(stored);
    this.#leafId = stored.id;
    // Memory first: a write that fails loses nothing (the line waits for the next write).
    this.#persist(line);
    return stored;
  }

  setName(name: string): void {
    this.append({ type: "session_info", name });
  }

  /** Sets (or, with undefined or "", clears) the label of an entry. */
  setLabel(targetId: string, label: string | undefined): LabelEntry {
    return this.append({ type: "label", targetId, ...(label ? { label } : {}) }) as LabelEntry;
  }

  /**
   * Moves the leaf to `entryId` (null: before the first entry) and appends a branch_summary
   * there, which becomes the leaf. `fromId` defaults to the leaf left behind ("root" when there was
   * none), as the newest pi records it (0.73.1 recorded the target).
   */
  branchWithSummary(
    entryId: string | null,
    summary: string,
    extra: { fromId?: string; details?: unknown; fromHook?: boolean; usage?: BranchSummaryEntry["usage"] } = {},
  ): BranchSummaryEntry {
    const { fromId, ...rest } = extra;
    const from = fromId ?? this.#leafId ?? "root";
    this.moveLeaf(entryId);
    return this.append({ type: "branch_summary", fromId: from, summary, ...rest }) as BranchSummaryEntry;
  }

  /**
   * Writes a pending session now, even without an assistant message (pi would wait).
   * Without `force`, only what pi would write. No-op for in-memory and already-written sessions.
   */
  flush(force = false): void {
    if ((this.#disk === "pending" && (force || this.#hasAssistant)) || (this.#disk === "empty" && (force || this.#entries.length > 0))) this.#save();
  }

  // ---- reading -----------------------------------------------------------------------

  entries(): SessionEntry[] {
    return [...this.#entries];
  }

  /** How many entries the session holds (entries().length without the copy). */
  get entryCount(): number {
    return this.#entries.length;
  }

  entry(id: string): SessionEntry | undefined {
    return this.#byId(id);
  }

  /**
   * Entries appended after the entry `cursor` (all entries without one), in append order.
   * Throws for an id that is not in the session, so a client can tell a stale cursor.
   */
  entriesSince(cursor?: string): SessionEntry[] {
    if (cursor === undefined) return this.entries();
    const position = this.#position.get(cursor);
    // pi's wording ("Entry not found"), which pi's own RPC tests match on.
    if (position === undefined) throw new Error(`Entry not found: ${cursor}`);
    return this.#entries.slice(position + 1);
  }

  /** Root-to-leaf path ending at `leafId` (default: the current leaf); [] for an unknown id. */
  branch(leafId: string | null = this.#leafId): SessionEntry[] {
    const path: SessionEntry[] = [];
    for (let id = leafId; id !== null; ) {
      const entry = this.#byId(id);
      if (!entry) break;
      // Only a cycle of parents (a hand-edited file) makes a path longer than the session.
      if (path.length === this.#entries.length) return this.#branchThroughCycle(leafId);
      path.push(entry);
      id = entry.parentId;
    }
    return path.reverse();
  }

  /** branch() when the parents form a cycle: the path stops before the first entry seen twice. */
  #branchThroughCycle(leafId: string | null): SessionEntry[] {
    const path: SessionEntry[] = [];
    const seen = new Set<string>();
    for (let id = leafId; id !== null && !seen.has(id); ) {
      const entry = this.#byId(id);
      if (!entry) break;
      seen.add(id);
      path.push(entry);
      id = entry.parentId;
    }
    return path.reverse();
  }

  children(parentId: string | null): SessionEntry[] {
    return this.#entries.filter((e) => e.parentId === parentId);
  }

  /** The entry's current label, if any. */
  label(entryId: string): string | undefined {
    return this.#labels.get(entryId)?.label;
  }

  /**
   * The whole session as a forest: normally one root; entries whose parent is missing are extra
   * roots. Children are ordered by timestamp (oldest first), ties in append order.
   */
  tree(): SessionTreeNode[] {
    const nodes = new Map<string, SessionTreeNode>();
    const times = new Map<SessionTreeNode, number>();
    for (const entry of this.#entries) {
      const label = this.#labels.get(entry.id);
      const node: SessionTreeNode = { entry, children: [], ...(label ? { label: label.label, labelTimestamp: label.timestamp } : {}) };
      nodes.set(entry.id, node);
      times.set(node, Date.parse(entry.timestamp) || 0);
    }
    const roots: SessionTreeNode[] = [];
    for (const entry of this.#entries) {
      const node = nodes.get(entry.id)!;
      const parent = entry.parentId === null || entry.parentId === entry.id ? undefined : nodes.get(entry.parentId);
      (parent ? parent.children : roots).push(node);
    }
    // Array.prototype.sort is stable, which keeps append order among equal timestamps.
    for (const node of nodes.values()) {
      if (node.children.length > 1) node.children.sort((a, b) => times.get(a)! - times.get(b)!);
    }
    return roots;
  }

  /** Moves the active leaf (tree navigation). null: before the first entry. Not persisted by itself. */
  moveLeaf(entryId: string | null): void {
    if (entryId !== null && !this.#position.has(entryId)) throw new Error(`Cannot move to entry ${entryId}: no such entry`);
    this.#leafId = entryId;
  }

  /**
   * As pi 1.6's session writes a compaction: with a snapshot of the system prompt and tools its
   * context recorded (last, stamped with the entry's time), since the system messages before
   * the cut leave the context with the history they belong to.
   */
  #withSystemSnapshot(entry: NewSessionEntry, at: string): NewSessionEntry {
    if (entry.type !== "compaction" || entry.systemMessage !== undefined) return entry;
    const system = currentSystemMessage(this.buildContext());
    return system === undefined ? entry : { ...entry, systemMessage: { ...system, timestamp: Date.parse(at) } };
  }

  /** Messages the model sees on the active branch, honouring compaction. */
  buildContext(): AgentMessage[] {
    return buildSessionContext(this.branch()).messages;
  }

  /** buildContext() plus the thinking level and model in effect on the active branch. */
  buildSessionContext(): SessionContext {
    return buildSessionContext(this.branch());
  }

  /** Every message-bearing entry on the active branch as a message, without compaction's pruning. */
  messages(): AgentMessage[] {
    return branchMessages(this.branch());
  }

  /**
   * The file's own JSON bytes of loaded messages, once: the first get_messages of a resumed
   * session sends them instead of serialising every message again. Later answers serialise (a
   * message could have been changed in memory by then).
   */
  takeMessageJson(): MessageBytes | undefined {
    const json = this.#messageJson;
    this.#messageJson = undefined;
    return json;
  }

  /** User messages anywhere in the session with their text, in append order (pi's fork selector). */
  userMessagesForForking(): { entryId: string; text: string }[] {
    const result: { entryId: string; text: string }[] = [];
    for (const entry of this.#entries) {
      if (entry.type !== "message" || entry.message.role !== "user") continue;
      const text = userText(entry.message.content);
      if (text) result.push({ entryId: entry.id, text });
    }
    return result;
  }

  stats(): SessionStatsData {
    return computeStats({ sessionFile: this.#file, sessionId: this.id, entries: this.#entries });
  }

  // ---- forking -----------------------------------------------------------------------

  /**
   * A new session holding the path to `entryId`: "at" includes the entry, "before" (pi's fork
   * command; only for user messages) stops at its parent and returns the message's text.
   * The new session persists like this one (a new file beside it, header.parentSession = this
   * file) or stays in memory. Labels on the path come along as fresh label entries at the end.
   */
  fork(entryId: string, position: "before" | "at" = "before", target?: ForkTarget): ForkResult {
    const selected = this.#byId(entryId);
    if (!selected) throw new Error(`Cannot fork from entry ${entryId}: no such entry`);
    let leafId: string | null = entryId;
    let selectedText: string | undefined;
    if (position === "before") {
      if (selected.type !== "message" || selected.message.role !== "user") {
        throw new Error(
          `Cannot fork before entry ${entryId}: it is a ${selected.type === "message" ? `${selected.message.role} message` : `${selected.type} entry`}, not a user message`,
        );
      }
      leafId = selected.parentId;
      selectedText = userText(selected.message.content);
    }

    // Label entries on the path may target entries elsewhere; carry the resolved labels instead.
    const path = this.branch(leafId).filter((e) => e.type !== "label");
    const ids = new Set(path.map((e) => e.id));
    const entries: SessionEntry[] = [...path];
    let parentId = path.at(-1)?.id ?? null;
    for (const [targetId, { label, timestamp }] of this.#labels) {
      if (!ids.has(targetId)) continue;
      const id = newEntryId(ids);
      ids.add(id);
      entries.push({ type: "label", id, parentId, timestamp, targetId, label });
      parentId = id;
    }

    const sessionDir = target?.sessionDir ?? (this.#file !== undefined ? dirname(this.#file) : undefined);
    const session = new Session(target?.cwd ?? this.cwd, {
      ...(sessionDir !== undefined ? { sessionDir } : {}),
      ...(this.#file !== undefined ? { parentSession: this.#file } : {}),
      ...(target?.id !== undefined ? { id: target.id } : {}),
      onWarning: this.#onWarning,
    });
    for (const entry of entries) session.#index(entry);
    session.#leafId = entries.at(-1)?.id ?? null;
    session.flush();
    return { session, ...(selectedText !== undefined ? { selectedText } : {}) };
  }

  /** fork() at the current leaf: the active branch in a new session (pi's --fork takes a target). */
  clone(target?: ForkTarget): Session {
    if (this.#leafId === null) throw new Error("Cannot clone session: no current entry selected");
    return this.fork(this.#leafId, "at", target).session;
  }

  // ---- internals ---------------------------------------------------------------------

  #byId(id: string): SessionEntry | undefined {
    const position = this.#position.get(id);
    return position === undefined ? undefined : this.#entries[position];
  }

  #index(entry: SessionEntry): void {
    this.#position.set(entry.id, this.#entries.length);
    this.#entries.push(entry);
    if (entry.type === "message" && entry.message.role === "assistant") this.#hasAssistant = true;
    else if (entry.type === "session_info") this.#name = entry.name?.trim() || undefined;
    else if (entry.type === "label") {
      if (entry.label) this.#labels.set(entry.targetId, { label: entry.label, timestamp: entry.timestamp });
      else this.#labels.delete(entry.targetId);
    }
  }

  #persist(line: string): void {
    switch (this.#disk) {
      case "memory":
        return;
      case "pending":
        // As pi: a new session's file waits for the first assistant message.
        if (this.#hasAssistant) this.#save();
        return;
      case "empty":
        this.#save();
        return;
      case "synced":
        this.#unsaved.push(line);
        this.#save();
        return;
      case "refused":
        this.#unsaved.push(line);
    }
  }

  /**
   * Writes what is not on disk yet. pending: a new file, created exclusively (never clobbers one
   * that appeared at this path meanwhile) with the header and every entry, under the file's lock;
   * empty: the same into the empty file this session was opened on, only if it is still empty;
   * synced: the waiting lines, appended. Every write goes to the file this session opened or
   * created, checked on the open descriptor; anything else is refused for good (see SaveNotice).
   * A failure is told once per episode and leaves the lines waiting.
   */
  #save(): void {
    const file = this.#file!;
    let fd: number | undefined;
    try {
      if (this.#disk === "pending") {
        makeDirsSync(dirname(file));
        this.#unlock ??= lockSessionFile(file);
        try {
          fd = openSync(file, "wx");
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EEXIST")
            throw new Refusal(`a file appeared at this path that parley did not create (another program's); parley does not write into it`);
          throw error;
        }
        this.#mark = markOf(fstatSync(fd));
        this.#startFile();
      } else {
        fd = this.#openMarked(file);
        if (this.#disk === "empty") {
          if (fstatSync(fd).size !== 0) throw new Refusal(`it is no longer empty (something else wrote to it); parley will not write a session into it`);
          this.#startFile();
        }
      }
      this.#writeUnsaved(fd);
      this.#mark = markOf(fstatSync(fd));
    } catch (error) {
      this.#messageJson = undefined;
      if (error instanceof Refusal || error instanceof SessionLockedError) {
        this.#refuse(error.message);
        return;
      }
      const first = this.#saveError === undefined;
      this.#saveError = errorMessage(error);
      if (first) {
        reportAtExit(this);
        this.#onSave({ kind: "failed", file, error: this.#saveError, unsaved: this.#unsavedCount() });
      }
      return;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
    if (this.#saveError !== undefined) {
      this.#saveError = undefined;
      unsavedAtExit.delete(this);
      this.#onSave({ kind: "resumed", file });
    }
    // The file changed, by this session's hand: its messages' bytes are still good.
    if (this.#messageJson !== undefined) {
      try {
        this.#messageJson.sameFileNow(fileIdentity(file));
      } catch {
        this.#messageJson = undefined;
      }
    }
  }

  /**
   * Opens the session's file for appending, only if it is the one this session opened or created
   * (never creating it again), still a session file, and no shorter than this session left it.
   * Lines another writer appended meanwhile (a pi on the same file) stay; the next line starts on
   * a line of its own.
   */
  #openMarked(file: string): number {
    let fd: number;
    try {
      // Read too: the first line is checked when another writer appended meanwhile.
      fd = openSync(file, constants.O_RDWR | constants.O_APPEND);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new Refusal("it was deleted (or moved away) while parley ran; parley does not create it again");
      if (code === "EISDIR") throw new Refusal("it was replaced by a folder");
      throw error;
    }
    try {
      const now = fstatSync(fd);
      const mark = this.#mark;
      if (mark !== undefined && (now.dev !== mark.dev || now.ino !== mark.ino))
        throw new Refusal("it was replaced by another file (or a link to one) while parley ran; parley writes only to the file it opened");
      if (!now.isFile()) throw new Refusal("it is no longer a regular file");
      if (mark !== undefined && now.size !== mark.size && this.#disk === "synced") {
        if (now.size < mark.size) throw new Refusal("it was cut short or rewritten by something else while parley ran");
        if (sniffDescriptor(fd).kind !== "session") throw new Refusal("it is no longer a session file (something else rewrote it)");
        this.#needsNewline = lastByte(fd, now.size) !== 0x0a;
      }
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return fd;
  }

  #refuse(reason: string): void {
    const file = this.#file!;
    if (this.#disk === "pending" || this.#disk === "empty") this.#unsaved = [this.#header, ...this.#entries].map((record) => JSON.stringify(record));
    this.#disk = "refused";
    this.#refusal = reason;
    this.#saveError = undefined;
    reportAtExit(this);
    this.#onSave({ kind: "refused", file, error: reason, unsaved: this.#unsavedCount() });
  }

  /** The file is this session's now (created, or found empty): header and every entry wait to be written. */
  #startFile(): void {
    this.#disk = "synced";
    this.#needsNewline = false;
    this.#unsaved = [this.#header, ...this.#entries].map((record) => JSON.stringify(record));
  }

  /** Entries in memory and not on disk (the header aside). */
  #unsavedCount(): number {
    if (this.#disk === "synced") return this.#unsaved.length;
    if (this.#disk === "refused") return this.#unsaved.filter((line) => !line.startsWith('{"type":"session"')).length;
    return this.#entries.length;
  }

  /** Appends the waiting lines in one write; on failure, drops from the queue only the lines wholly written. */
  #writeUnsaved(fd: number): void {
    if (this.#unsaved.length === 0) return;
    const lead = this.#needsNewline ? 1 : 0;
    const text = `${lead ? "\n" : ""}${this.#unsaved.join("\n")}\n`;
    const bytes = Buffer.from(text, "utf8");
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(fd, bytes, written);
    } catch (error) {
      if (written > 0) this.#dropWritten(bytes, written, lead);
      throw error;
    }
    this.#unsaved = [];
    this.#needsNewline = false;
  }

  #dropWritten(bytes: Buffer, written: number, lead: number): void {
    // What was written ends with an LF only where a line (or the leading LF) was wholly written.
    this.#needsNewline = bytes[written - 1] !== 0x0a;
    let done = 0;
    let at = lead;
    for (const line of this.#unsaved) {
      at += Buffer.byteLength(line, "utf8") + 1;
      if (at > written) break;
      done++;
    }
    this.#unsaved.splice(0, done);
  }
}

export type { SessionStatsData };

/** A refusal to write to the session file (see SaveNotice), with its reason. */
class Refusal extends Error {}

function markOf(stat: { dev: number; ino: number; size: number }): FileMark {
  return { dev: stat.dev, ino: stat.ino, size: stat.size };
}

function lastByte(fd: number, size: number): number | undefined {
  if (size === 0) return undefined;
  const byte = Buffer.alloc(1);
  return readSync(fd, byte, 0, 1, size - 1) === 1 ? byte[0] : undefined;
}

function fileIdentity(file: string): FileIdentity {
  const { dev, ino, size, mtimeMs } = statSync(file);
  return { dev, ino, size, mtimeMs };
}
