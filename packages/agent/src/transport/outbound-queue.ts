/**
 * Records that wait while the client is not reading. What the agent streams (model deltas, the
 * `bash` command's output) is held back at its source, so only a few such records ever wait here;
 * what extensions send without waiting (statuses, widgets, notifications) could pile up without
 * bound. Up to a soft limit everything waits exactly as sent; beyond it, what waits is kept to what
 * the client would end up showing:
 *
 * - a newer record of a "latest wins" kind (setStatus, setWidget, setTitle, set_editor_text for the
 *   same key; a tool's progress snapshot for the same call) replaces the waiting older one, and
 *   takes its own place at the end, so the survivors keep their order;
 * - notifications cannot be merged: beyond a cap the oldest waiting ones are dropped;
 * - everything else (responses, dialogs, events) waits in order, never dropped.
 */

/**
 * Characters that may wait exactly as sent; beyond them, records are replaced or dropped as above.
 * Large enough that a burst a client reads as it comes (the bench's 100,000 statuses, ~12 MB) is
 * relayed record for record, as pi does; small enough to stay well within the memory budget.
 */
export const EXACT_WAITING_CHARS = 16 * 1024 * 1024;
/** The default cap on notifications held while output is backed up. */
export const MAX_WAITING_NOTIFICATIONS = 1000;
/** The default cap on the characters those notifications may hold (the newest one is always kept). */
export const MAX_WAITING_NOTIFICATION_CHARS = 1024 * 1024;

export interface OutboundQueueOptions {
  exactChars?: number;
  maxNotifications?: number;
  maxNotificationChars?: number;
  /** Called when a notification is dropped, with the total dropped so far. */
  onNotificationDropped?: (dropped: number) => void;
}

interface Entry {
  line: string;
  /** Set for records a newer one with the same key replaces. */
  key: string | undefined;
  notification: boolean;
  prev: Entry | undefined;
  next: Entry | undefined;
}

/**
 * What makes a record replaceable: records with the same key describe the same piece of client
 * state, and only the last one matters. Widgets are keyed by placement too, so a client that keeps
 * one widget per key and one that keeps one per key and placement both end up as before.
 */
export function replacementKey(record: object): string | undefined {
  const r = record as Record<string, unknown>;
  if (r["type"] === "extension_ui_request") {
    switch (r["method"]) {
      case "setStatus":
        return `status\0${String(r["statusKey"])}`;
      case "setWidget":
        return `widget\0${String(r["widgetPlacement"] ?? "aboveEditor")}\0${String(r["widgetKey"])}`;
      case "setTitle":
        return "title";
      case "set_editor_text":
        return "editor_text";
      default:
        return undefined;
    }
  }
  // A tool's progress record carries its whole output so far, not a delta.
  if (r["type"] === "tool_execution_update") return `tool\0${String(r["toolCallId"])}`;
  return undefined;
}

function isNotification(record: object): boolean {
  const r = record as Record<string, unknown>;
  return r["type"] === "extension_ui_request" && r["method"] === "notify";
}

/** Size of the byte chunks the exact part is kept in. */
const CHUNK_CHARS = 64 * 1024;

export class OutboundQueue {
  readonly #exactChars: number;
  readonly #maxNotifications: number;
  readonly #maxNotificationChars: number;
  readonly #onDropped: ((dropped: number) => void) | undefined;
  /**
   * The exact part, oldest first: bytes outside the JS heap (a large heap of live strings would
   * let the garbage of a flood grow with it before V8 collects), then lines not yet made bytes.
   */
  #exact: Buffer[] = [];
  /** Records in each chunk of #exact. */
  #exactCounts: number[] = [];
  #exactLines: string[] = [];
  #exactLinesChars = 0;
  /** Characters in the exact part (bytes for its chunks). */
  #exactSize = 0;
  /** The merging part, after the exact part: entries, oldest first. */
  #head: Entry | undefined;
  #tail: Entry | undefined;
  #length = 0;
  #chars = 0;
  readonly #byKey = new Map<string, Entry>();
  /** Waiting notifications of the merging part, oldest first (they leave it in this order too). */
  #notifications: Entry[] = [];
  #notificationChars = 0;
  #dropped = 0;

  constructor(options: OutboundQueueOptions = {}) {
    this.#exactChars = options.exactChars ?? EXACT_WAITING_CHARS;
    this.#maxNotifications = Math.max(1, options.maxNotifications ?? MAX_WAITING_NOTIFICATIONS);
    this.#maxNotificationChars = options.maxNotificationChars ?? MAX_WAITING_NOTIFICATION_CHARS;
    this.#onDropped = options.onNotificationDropped;
  }

  /** Records waiting. */
  get length(): number {
    return this.#length;
  }

  /** Characters waiting (of serialized lines; bytes for what waits as bytes). */
  get chars(): number {
    return this.#chars;
  }

  /** Notifications dropped so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Adds `line`, the serialized form of `record`, at the end. */
  push(line: string, record: object): void {
    this.#length++;
    if (this.#head === undefined && this.#exactSize < this.#exactChars) {
      this.#exactLines.push(line);
      this.#exactLinesChars += line.length;
      this.#exactSize += line.length;
      this.#chars += line.length;
      if (this.#exactLinesChars >= CHUNK_CHARS) this.#seal();
      return;
    }
    const key = replacementKey(record);
    if (key !== undefined) {
      const older = this.#byKey.get(key);
      if (older) this.#unlink(older);
    }
    const entry: Entry = { line, key, notification: key === undefined && isNotification(record), prev: this.#tail, next: undefined };
    if (this.#tail) this.#tail.next = entry;
    else this.#head = entry;
    this.#tail = entry;
    this.#chars += line.length;
    if (key !== undefined) this.#byKey.set(key, entry);
    if (entry.notification) {
      this.#notifications.push(entry);
      this.#notificationChars += line.length;
      while (this.#notifications.length > 1 && (this.#notifications.length > this.#maxNotifications || this.#notificationChars > this.#maxNotificationChars)) {
        this.#unlink(this.#notifications[0] as Entry);
        this.#dropped++;
        this.#onDropped?.(this.#dropped);
      }
    }
  }

  /**
   * The oldest waiting records as bytes, removed: at least one record, then more while under
   * `maxChars` (a chunk of the exact part as it is). Undefined when nothing waits.
   */
  take(maxChars: number): Buffer | undefined {
    if (this.#exact.length === 0 && this.#exactLines.length > 0) this.#seal();
    const chunk = this.#exact.shift();
    if (chunk) {
      this.#length -= this.#exactCounts.shift() ?? 0;
      this.#exactSize -= chunk.length;
      this.#chars -= chunk.length;
      return chunk;
    }
    const first = this.#head;
    if (!first) return undefined;
    this.#unlink(first);
    const lines = [first.line];
    let chars = first.line.length;
    while (this.#head && chars + this.#head.line.length <= maxChars) {
      const entry = this.#head;
      this.#unlink(entry);
      lines.push(entry.line);
      chars += entry.line.length;
    }
    return Buffer.from(lines.length === 1 ? first.line : lines.join(""), "utf8");
  }

  /** Forgets everything waiting (the client is gone). */
  clear(): void {
    this.#exact = [];
    this.#exactCounts = [];
    this.#exactLines = [];
    this.#exactLinesChars = this.#exactSize = 0;
    this.#head = this.#tail = undefined;
    this.#length = this.#chars = this.#notificationChars = 0;
    this.#byKey.clear();
    this.#notifications = [];
  }

  /** The exact part's pending lines become one chunk of bytes. */
  #seal(): void {
    const text = this.#exactLines.length === 1 ? (this.#exactLines[0] as string) : this.#exactLines.join("");
    const bytes = Buffer.from(text, "utf8");
    this.#exactCounts.push(this.#exactLines.length);
    // Sizes count bytes from now on (a character may take more than one).
    this.#exactSize += bytes.length - this.#exactLinesChars;
    this.#chars += bytes.length - this.#exactLinesChars;
    this.#exact.push(bytes);
    this.#exactLines = [];
    this.#exactLinesChars = 0;
  }

  #unlink(entry: Entry): void {
    if (entry.prev) entry.prev.next = entry.next;
    else this.#head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.#tail = entry.prev;
    entry.prev = entry.next = undefined;
    this.#length--;
    this.#chars -= entry.line.length;
    if (entry.key !== undefined && this.#byKey.get(entry.key) === entry) this.#byKey.delete(entry.key);
    if (entry.notification) {
      // Notifications leave in order (sent or dropped, the oldest goes first).
      const at = this.#notifications.indexOf(entry);
      if (at !== -1) this.#notifications.splice(at, 1);
      this.#notificationChars -= entry.line.length;
    }
  }
}
