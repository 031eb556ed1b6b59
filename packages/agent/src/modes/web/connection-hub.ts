/**
 * Many WebSocket connections as one transport for the RPC server. The server stays unchanged: it
 * reads lines and writes records as in RPC mode. The hub decides who gets what:
 * - a response goes to the connection that sent its command (commands get a hub-made id on the
 *   way in; the response's id is swapped back on the way out);
 * - a refused dialog answer (`extension_ui_error`) goes to the connection that sent it;
 * - everything else (events, dialog requests, fire-and-forget UI, dismiss records) goes to all.
 * When one connection answers a dialog, the others get `extension_ui_dismissed` with reason
 * "answered" at once. With no connection open, records are dropped: a late connection rebuilds
 * its view with get_messages and get_ui_state, and dialogs wait for it (within their timeout).
 * get_messages holds finished messages only: the reply being streamed follows its response, as
 * the records that built it so far (its message_start and deltas), so a tab that opens mid-reply
 * shows it from its beginning.
 *
 * Each socket is handed at most `socketHighWaterBytes` at a time; the rest waits in the hub's own
 * queue for that connection. A tab that stops reading is cut once it holds `maxBufferedBytes`,
 * and cutting it then drops an array rather than destroying a socket with tens of thousands of
 * writes pending (each failed one by one), which held every other tab up for seconds.
 */
import type { DialogMethod } from "@parley/protocol";
import type { Transport, TransportSink } from "../../core/transport.js";

/** What the hub needs of a socket (the `ws` package's WebSocket has it). */
export interface HubSocket {
  readonly bufferedAmount: number;
  send(data: string, callback: (error?: Error) => void): void;
  terminate(): void;
}

export interface ConnectionHubOptions {
  /**
   * A connection that has this many bytes queued and unread is cut off, so a tab that stops
   * reading cannot make the agent hold its output forever; a reconnecting page resyncs.
   */
  maxBufferedBytes?: number;
  /**
   * The most all connections together may have queued: beyond it the one holding the most is cut,
   * so several stalled tabs cannot multiply the per-connection ceiling.
   */
  maxTotalBufferedBytes?: number;
  /** What a socket is handed before the hub queues for it (default 256 KiB). */
  socketHighWaterBytes?: number;
  /** The most the reply being streamed may take to replay to a new tab (default 16 MiB); beyond it a new tab sees it from its end. */
  maxCatchUpBytes?: number;
  log?: (message: string) => void;
}

/** Ends of dialogs the hub must know about: whether the registry still waits for an answer. */
export interface DialogLookup {
  isPending(id: string): boolean;
}

export interface HubConnection {
  /** One inbound WebSocket message (one record). */
  receive(text: string): void;
  /** A message the hub cannot read as text: answered to its sender alone with a parse error. */
  refuse(error: string): void;
  /** The socket closed. */
  close(): void;
}

interface Connection {
  readonly socket: HubSocket;
  open: boolean;
  /** Sends whose callback has not come yet, queued ones included (for flush()). */
  unsent: number;
  /** Messages not yet handed to the socket (it holds its high-water mark already), oldest first. */
  queue: string[];
  queuedBytes: number;
}

interface Route {
  connection: Connection;
  /** The command's own id, or absent. */
  id: string | number | undefined;
}

const TAG = "\u0000web:";
const DEFAULT_MAX_BUFFERED = 64 * 1024 * 1024;
const DEFAULT_MAX_TOTAL_BUFFERED = 128 * 1024 * 1024;
const DEFAULT_SOCKET_HIGH_WATER = 256 * 1024;
const DEFAULT_MAX_CATCH_UP = 16 * 1024 * 1024;
/** Delayed refusals are rare (they follow a bad command's explanation); remember few senders. */
const MAX_REMEMBERED_ANSWERERS = 1024;

export class ConnectionHub implements Transport {
  readonly #connections = new Set<Connection>();
  readonly #routes = new Map<string, Route>();
  /** Connections that sent lines the hub could not tag (not JSON, not an object): answered in order. */
  readonly #untagged: Connection[] = [];
  /** Dialogs announced and not yet ended, by id. */
  readonly #dialogs = new Map<string, DialogMethod>();
  readonly #lastAnswerer = new Map<string, Connection>();
  readonly #maxBuffered: number;
  readonly #maxTotalBuffered: number;
  readonly #highWater: number;
  readonly #maxCatchUp: number;
  readonly #log: (message: string) => void;
  /** The assistant message being streamed, as the records sent for it so far; undefined between messages or once too big. */
  #streaming: { records: string[]; bytes: number } | undefined;
  #sink: TransportSink | undefined;
  #lookup: DialogLookup | undefined;
  /** The connection whose message the server is handling right now (synchronous replies go to it). */
  #current: Connection | undefined;
  #tags = 0;
  #flushWaiters: (() => void)[] = [];

  constructor(options: ConnectionHubOptions = {}) {
    this.#maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED;
    this.#maxTotalBuffered = options.maxTotalBufferedBytes ?? DEFAULT_MAX_TOTAL_BUFFERED;
    this.#highWater = options.socketHighWaterBytes ?? DEFAULT_SOCKET_HIGH_WATER;
    this.#maxCatchUp = options.maxCatchUpBytes ?? DEFAULT_MAX_CATCH_UP;
    this.#log = options.log ?? (() => {});
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  /**
   * Never backed up: one tab that stops reading must not stall the agent for the others. A
   * connection with more than `maxBufferedBytes` unread is closed instead; its page reconnects
   * and catches up with get_messages and get_ui_state.
   */
  get backedUp(): boolean {
    return false;
  }

  whenWritable(): Promise<void> {
    return Promise.resolve();
  }

  /** The server's dialog registry, so an accepted answer can be told from a refused one. */
  setDialogs(lookup: DialogLookup): void {
    this.#lookup = lookup;
  }

  start(sink: TransportSink): void {
    this.#sink = sink;
  }

  /** A new connection; call receive() for each of its messages and close() when it ends. */
  add(socket: HubSocket): HubConnection {
    const connection: Connection = { socket, open: true, unsent: 0, queue: [], queuedBytes: 0 };
    this.#connections.add(connection);
    return {
      receive: (text) => this.#receive(connection, text),
      refuse: (error) => this.#sendTo(connection, JSON.stringify({ type: "response", command: "parse", success: false, error })),
      close: () => this.#drop(connection),
    };
  }

  send(record: object): void {
    const fields = record as { type?: unknown; id?: unknown };
    const id = fields.id;
    if (typeof id === "string" && id.startsWith(TAG)) {
      const route = this.#routes.get(id);
      if (fields.type === "response") this.#routes.delete(id);
      // A response, or an event that belongs to one command (bash_execution_update): its sender only.
      if (route) {
        this.#sendTo(route.connection, JSON.stringify(withId(record, route.id)));
        if (fields.type === "response" && isMessagesResponse(record)) this.#catchUp(route.connection);
      }
      return;
    }
    switch (fields.type) {
      case "response": {
        const connection = this.#untagged.shift();
        if (connection) this.#sendTo(connection, JSON.stringify(record));
        return;
      }
      case "extension_ui_error": {
        const connection = this.#current ?? (typeof id === "string" ? this.#lastAnswerer.get(id) : undefined);
        if (connection) this.#sendTo(connection, JSON.stringify(record));
        return;
      }
      case "extension_ui_request": {
        const method = (record as { method?: unknown }).method;
        if (typeof id === "string" && isDialogMethod(method)) this.#dialogs.set(id, method);
        break;
      }
      case "extension_ui_dismissed":
        if (typeof id === "string") this.#dialogs.delete(id);
        break;
    }
    const text = JSON.stringify(record);
    this.#follow(fields.type, record, text);
    this.#broadcast(text, undefined);
  }

  /** Keeps the records of the assistant message being streamed, for tabs that open mid-reply. */
  #follow(type: unknown, record: object, text: string): void {
    if (type === "message_start") {
      const message = (record as { message?: { role?: unknown } }).message;
      this.#streaming = message?.role === "assistant" ? { records: [text], bytes: text.length } : undefined;
    } else if (type === "message_update") {
      const streaming = this.#streaming;
      if (!streaming) return;
      streaming.records.push(text);
      streaming.bytes += text.length;
      if (streaming.bytes > this.#maxCatchUp) this.#streaming = undefined;
    } else if (type === "message_end" || type === "agent_end") this.#streaming = undefined;
  }

  /** After a get_messages response: the reply so far, to that connection only (live deltas follow it in order). */
  #catchUp(connection: Connection): void {
    for (const text of this.#streaming?.records ?? []) this.#sendTo(connection, text);
  }

  flush(): Promise<void> {
    if (this.#allSent()) return Promise.resolve();
    return new Promise((resolve) => this.#flushWaiters.push(resolve));
  }

  /** Cuts every connection (shutdown). */
  closeAll(): void {
    for (const connection of [...this.#connections]) {
      connection.socket.terminate();
      this.#drop(connection);
    }
  }

  #receive(connection: Connection, text: string): void {
    const sink = this.#sink;
    if (!sink || !connection.open) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      if (isBlank(text)) return; // as in RPC mode: nothing to answer
      this.#untagged.push(connection);
      this.#handle(connection, text);
      return;
    }
    const record = value as Record<string, unknown>;
    if (record["type"] === "extension_ui_response") {
      this.#answer(connection, record, text);
      return;
    }
    const id = record["id"];
    if (id !== undefined && typeof id !== "string" && !(typeof id === "number" && Number.isFinite(id))) {
      // An id the server will not echo: its (error) response carries none, in line order.
      this.#untagged.push(connection);
      this.#handle(connection, text);
      return;
    }
    const tag = `${TAG}${(this.#tags++).toString(36)}`;
    this.#routes.set(tag, { connection, id });
    record["id"] = tag;
    this.#handle(connection, JSON.stringify(record));
  }

  #answer(connection: Connection, record: Record<string, unknown>, text: string): void {
    const id = record["id"];
    const method = typeof id === "string" ? this.#dialogs.get(id) : undefined;
    if (typeof id === "string") {
      if (this.#lastAnswerer.size >= MAX_REMEMBERED_ANSWERERS) this.#lastAnswerer.clear();
      this.#lastAnswerer.set(id, connection);
    }
    this.#handle(connection, text);
    // Still announced here (no dismiss record went out) but no longer pending: this answer won.
    if (typeof id === "string" && method !== undefined && this.#dialogs.has(id) && this.#lookup && !this.#lookup.isPending(id)) {
      this.#dialogs.delete(id);
      this.#lastAnswerer.delete(id);
      this.#broadcast(JSON.stringify({ type: "extension_ui_dismissed", id, method, reason: "answered" }), connection);
    }
  }

  #handle(connection: Connection, text: string): void {
    this.#current = connection;
    try {
      this.#sink?.line(text);
    } finally {
      this.#current = undefined;
    }
  }

  #broadcast(text: string, except: Connection | undefined): void {
    for (const connection of this.#connections) if (connection !== except) this.#sendTo(connection, text);
  }

  #sendTo(connection: Connection, text: string): void {
    if (!connection.open) return;
    if (held(connection) > this.#maxBuffered) {
      this.#cut(connection);
      return;
    }
    this.#keepWithinTotal();
    if (!connection.open) return;
    connection.unsent++;
    if (connection.queue.length > 0 || connection.socket.bufferedAmount >= this.#highWater) {
      connection.queue.push(text);
      connection.queuedBytes += text.length;
      return;
    }
    this.#hand(connection, text);
  }

  #hand(connection: Connection, text: string): void {
    connection.socket.send(text, () => {
      if (!connection.open) return;
      connection.unsent--;
      this.#pump(connection);
      if (connection.unsent === 0) this.#wakeFlushers();
    });
  }

  /** The socket wrote something: hand it what waits, up to its high-water mark. */
  #pump(connection: Connection): void {
    let handed = 0;
    while (handed < connection.queue.length && connection.socket.bufferedAmount < this.#highWater) {
      const text = connection.queue[handed++] as string;
      connection.queuedBytes -= text.length;
      this.#hand(connection, text);
      if (!connection.open) return;
    }
    if (handed > 0) connection.queue.splice(0, handed);
  }

  #cut(connection: Connection): void {
    this.#log(`web: a connection stopped reading (${held(connection)} bytes queued); closing it`);
    // Its queue goes first (one array dropped); the socket holds at most its high-water mark.
    this.#drop(connection);
    connection.socket.terminate();
  }

  /** Cuts the connections holding the most until all of them together are within the budget. */
  #keepWithinTotal(): void {
    for (;;) {
      let total = 0;
      let largest: Connection | undefined;
      for (const connection of this.#connections) {
        total += held(connection);
        if (!largest || held(connection) > held(largest)) largest = connection;
      }
      if (total <= this.#maxTotalBuffered || !largest) return;
      this.#cut(largest);
    }
  }

  #drop(connection: Connection): void {
    if (!connection.open) return;
    connection.open = false;
    connection.unsent = 0;
    connection.queue = [];
    connection.queuedBytes = 0;
    this.#connections.delete(connection);
    // Its routes and places in the untagged queue stay until their responses pass (then dropped).
    this.#wakeFlushers();
  }

  #allSent(): boolean {
    for (const connection of this.#connections) if (connection.unsent > 0) return false;
    return true;
  }

  #wakeFlushers(): void {
    if (this.#flushWaiters.length === 0 || !this.#allSent()) return;
    const waiters = this.#flushWaiters;
    this.#flushWaiters = [];
    for (const wake of waiters) wake();
  }
}

/** What a connection has not yet sent: in the socket's buffer and in the hub's queue (characters for the latter, close enough). */
function held(connection: Connection): number {
  return connection.socket.bufferedAmount + connection.queuedBytes;
}

function isMessagesResponse(record: object): boolean {
  const response = record as { command?: unknown; success?: unknown };
  return response.command === "get_messages" && response.success === true;
}

function withId(record: object, id: string | number | undefined): object {
  const copy: Record<string, unknown> = { ...(record as Record<string, unknown>) };
  if (id === undefined) delete copy["id"];
  else copy["id"] = id;
  return copy;
}

function isDialogMethod(method: unknown): method is DialogMethod {
  return method === "select" || method === "confirm" || method === "input" || method === "editor";
}

function isBlank(text: string): boolean {
  return text.trim() === "";
}
