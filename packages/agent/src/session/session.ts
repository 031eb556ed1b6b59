/**
 * The session: a header and a tree of entries, with the active branch ending at `leafId`.
 * In memory for now; persistence (append-only JSONL files) builds on the same entry shapes.
 */
import { randomUUID } from "node:crypto";

export interface SessionHeader {
  type: "session";
  version: 3;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
}

interface EntryBase {
  id: string;
  parentId: string | null;
  timestamp: string;
}
export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}
export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
}
export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  label: string | undefined;
}
export interface MessageEntry extends EntryBase {
  type: "message";
  message: { role: string; [key: string]: unknown };
}
export type SessionEntry = CustomEntry | SessionInfoEntry | LabelEntry | MessageEntry;
type NewEntry = SessionEntry extends infer E ? (E extends SessionEntry ? Omit<E, keyof EntryBase> : never) : never;

export interface SessionView {
  header: SessionHeader;
}

export class Session implements SessionView {
  readonly header: SessionHeader;
  readonly #entries: SessionEntry[] = [];
  readonly #byId = new Map<string, SessionEntry>();
  #leafId: string | null = null;
  #name: string | undefined;

  constructor(cwd: string, options: { parentSession?: string } = {}) {
    this.header = {
      type: "session",
      version: 3,
      id: randomUUID(),
      timestamp: new Date().toISOString(),
      cwd,
      ...(options.parentSession !== undefined ? { parentSession: options.parentSession } : {}),
    };
  }

  get id(): string {
    return this.header.id;
  }
  /** No file yet: sessions live in memory until persistence lands. */
  get file(): string | undefined {
    return undefined;
  }
  get name(): string | undefined {
    return this.#name;
  }
  get leafId(): string | null {
    return this.#leafId;
  }

  append(entry: NewEntry): SessionEntry {
    const full = { ...entry, id: shortId(this.#byId), parentId: this.#leafId, timestamp: new Date().toISOString() } as SessionEntry;
    this.#entries.push(full);
    this.#byId.set(full.id, full);
    this.#leafId = full.id;
    if (full.type === "session_info") this.#name = full.name;
    return full;
  }

  setName(name: string): void {
    this.append({ type: "session_info", name });
  }

  entries(): SessionEntry[] {
    return [...this.#entries];
  }

  entry(id: string): SessionEntry | undefined {
    return this.#byId.get(id);
  }

  /** Root-to-leaf path of the active branch. */
  branch(): SessionEntry[] {
    const path: SessionEntry[] = [];
    for (let id = this.#leafId; id !== null; ) {
      const entry = this.#byId.get(id);
      if (!entry) break;
      path.push(entry);
      id = entry.parentId;
    }
    return path.reverse();
  }

  messages(): MessageEntry["message"][] {
    return this.branch().flatMap((e) => (e.type === "message" ? [e.message] : []));
  }
}

/** 8 hex characters, unique within the session. */
function shortId(taken: Map<string, unknown>): string {
  for (;;) {
    const id = randomUUID().slice(0, 8);
    if (!taken.has(id)) return id;
  }
}
