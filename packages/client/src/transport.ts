/**
 * Transports carry records between the client and one agent. The client needs only the
 * `Transport` interface; this file has it and the shared base, and uses no Node API (the
 * browser entry builds on it). See `stream-transport.ts` for Node streams, `spawn.ts` for a
 * child process, `websocket.ts` for a WebSocket and `memory-transport.ts` for an in-process pair.
 */
import { serializeJsonLine } from "@parley/protocol/json-line";
import { Emitter, type Disposable } from "@parley/protocol/disposable";
import { ConnectionClosedError, ProtocolError, type CloseInfo } from "./errors.js";
import { parseRecord, type AgentRecord } from "./records.js";

export interface Transport {
  /**
   * Resolves once records can flow (a spawned process has started); rejects with a
   * ConnectionClosedError if the transport closes first (e.g. the command was not found).
   */
  readonly opened: Promise<void>;
  /** Resolves with how the transport ended, once it has (never rejects). */
  readonly closed: Promise<CloseInfo>;
  readonly isClosed: boolean;
  /** Writes one record as one line. Throws ConnectionClosedError once closed, TypeError if unserializable. */
  send(record: object): void;
  /** Every record the other side writes, in order. Records that arrive before the first listener are kept for it. */
  onRecord(listener: (record: AgentRecord) => void): Disposable;
  /** Lines that are not records (not JSON, not an object with a string `type`, too long). */
  onProtocolError(listener: (error: ProtocolError) => void): Disposable;
  /** Called once when the transport ends; immediately (on a microtask) if it already has. */
  onClose(listener: (info: CloseInfo) => void): Disposable;
  /**
   * Ends the connection; resolves when it is fully closed (a spawned process has exited).
   * `killAfterMs` applies to transports that own a process; others ignore it.
   */
  close(options?: { killAfterMs?: number }): Promise<void>;
}

/** Record/error/close bookkeeping shared by the transports in this package. */
export abstract class TransportBase implements Transport {
  readonly #records = new Emitter<AgentRecord>({ bufferUntilFirstListener: true });
  readonly #errors = new Emitter<ProtocolError>({ bufferUntilFirstListener: true });
  readonly #closeListeners = new Emitter<CloseInfo>();
  #closeInfo: CloseInfo | undefined;
  #resolveClosed!: (info: CloseInfo) => void;
  #openedSettled = false;
  #resolveOpened!: () => void;
  #rejectOpened!: (error: Error) => void;

  readonly closed: Promise<CloseInfo>;
  readonly opened: Promise<void>;

  constructor() {
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    this.opened = new Promise<void>((resolve, reject) => {
      this.#resolveOpened = resolve;
      this.#rejectOpened = reject;
    });
    // Nobody has to await `opened`: an unobserved rejection must not crash the process.
    this.opened.catch(() => {});
  }

  get isClosed(): boolean {
    return this.#closeInfo !== undefined;
  }

  /** The close info, once closed. */
  protected get closeInfo(): CloseInfo | undefined {
    return this.#closeInfo;
  }

  send(record: object): void {
    if (this.#closeInfo !== undefined) throw new ConnectionClosedError(this.#closeInfo);
    this.writeLine(serializeJsonLine(record));
  }

  onRecord(listener: (record: AgentRecord) => void): Disposable {
    return this.#records.event(listener);
  }

  onProtocolError(listener: (error: ProtocolError) => void): Disposable {
    return this.#errors.event(listener);
  }

  onClose(listener: (info: CloseInfo) => void): Disposable {
    const info = this.#closeInfo;
    if (info === undefined) return this.#closeListeners.event(listener);
    let cancelled = false;
    queueMicrotask(() => {
      if (!cancelled) listener(info);
    });
    return { dispose: () => (cancelled = true) };
  }

  abstract close(): Promise<void>;

  /** Writes one serialized line (ends with LF). */
  protected abstract writeLine(line: string): void;

  protected markOpen(): void {
    if (this.#openedSettled) return;
    this.#openedSettled = true;
    this.#resolveOpened();
  }

  /** Parses one received line and hands it on; blank lines are skipped. */
  protected receiveLine(line: string): void {
    if (this.#closeInfo !== undefined) return;
    const parsed = parseRecord(line);
    if (parsed === undefined) return;
    if (parsed instanceof ProtocolError) this.#errors.fire(parsed);
    else this.#records.fire(parsed);
  }

  protected reportProtocolError(error: ProtocolError): void {
    if (this.#closeInfo === undefined) this.#errors.fire(error);
  }

  /** Marks the transport closed (first call wins) and tells the close listeners. */
  protected markClosed(info: CloseInfo): void {
    if (this.#closeInfo !== undefined) return;
    this.#closeInfo = info;
    if (!this.#openedSettled) {
      this.#openedSettled = true;
      this.#rejectOpened(new ConnectionClosedError(info));
    }
    this.#resolveClosed(info);
    this.#closeListeners.fire(info);
    this.#closeListeners.clear();
    this.#records.clear();
    this.#errors.clear();
  }
}
