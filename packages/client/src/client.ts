/**
 * RpcClient: one connection to one agent over a Transport. It owns the connection state,
 * routes what the agent writes (responses to their requests, dialogs to `ui`, everything to
 * the event listeners) and rejects what is pending when the connection ends. The typed
 * command methods are in commands.ts, dialogs in dialogs.ts.
 */
import type { CommandType, GetUiStateData } from "@parley/protocol";
import { CommandMethods } from "./commands.js";
import { DialogDispatcher } from "./dialogs.js";
import { Emitter, reportUncaught, type Disposable } from "@parley/protocol/disposable";
import { ConnectionClosedError, ListenerError, type ClientErrorEvent, type CloseInfo } from "./errors.js";
import { asDialogRequest, asDismissed, isResponse, type AgentEventMap, type AgentRecord, type ResponseRecord } from "./records.js";
import { RequestTracker, type CommandInput, type IssuedRequest, type RequestOptions } from "./requests.js";
import type { Transport } from "./transport.js";
import { detectCapabilities } from "./capabilities.js";
import { run, stream, waitForIdle, type RunOptions, type RunResult, type RunStream } from "./runs.js";

export type ConnectionState = "connecting" | "open" | "closed";

export interface RpcClientOptions {
  /** Prefix of generated request ids (default "c-": c-1, c-2, …). */
  idPrefix?: string;
}

export class RpcClient extends CommandMethods {
  readonly transport: Transport;
  /** Extension UI dialogs: `ui.handle("confirm", handler)`, `ui.onDialog`, `ui.pending()`. */
  readonly ui: DialogDispatcher;
  /** Resolves when the connection is open; rejects with ConnectionClosedError if it closes first. */
  readonly ready: Promise<void>;
  /** Resolves with how the connection ended. */
  readonly closed: Promise<CloseInfo>;

  #state: ConnectionState = "connecting";
  #closeInfo: CloseInfo | undefined;
  readonly #requests: RequestTracker;
  readonly #errors = new Emitter<ClientErrorEvent>({ onListenerError: reportUncaught });
  readonly #stateChanges: Emitter<ConnectionState>;
  readonly #any: Emitter<AgentRecord>;
  readonly #unmatched: Emitter<ResponseRecord>;
  readonly #events = new Map<string, Emitter<AgentRecord>>();
  readonly #subscriptions: Disposable[];
  #emitsSettled: Promise<boolean> | undefined;
  /** An auto_retry_start was seen and its attempt has not started (for agents without agent_settled). */
  #retryPending = false;

  constructor(transport: Transport, options: RpcClientOptions = {}) {
    super();
    this.transport = transport;
    const listenerError = (error: unknown): void => this.#reportError(new ListenerError(error));
    this.#stateChanges = new Emitter({ onListenerError: listenerError });
    this.#any = new Emitter({ onListenerError: listenerError });
    this.#unmatched = new Emitter({ onListenerError: listenerError });
    this.#requests = new RequestTracker((record) => transport.send(record), options.idPrefix);
    this.ui = new DialogDispatcher({
      write: (record) => {
        if (this.#state === "closed") throw new ConnectionClosedError({ reason: "local" });
        transport.send(record);
      },
      onHandlerError: (error) => this.#reportError(error),
      onListenerError: listenerError,
    });
    this.ready = transport.opened.then(() => {
      if (this.#state === "connecting") this.#setState("open");
    });
    this.ready.catch(() => {});
    this.closed = transport.closed;
    this.#subscriptions = [
      transport.onRecord((record) => this.#route(record)),
      transport.onProtocolError((error) => this.#reportError(error)),
      transport.onClose((info) => this.#shutDown(info)),
    ];
  }

  get state(): ConnectionState {
    return this.#state;
  }

  /** Number of requests still waiting for their response. */
  get pendingRequests(): number {
    return this.#requests.size;
  }

  onStateChange(listener: (state: ConnectionState) => void): Disposable {
    return this.#stateChanges.event(listener);
  }

  /** Problems that do not stop the connection; with no onError listener they become warnings. */
  #reportError(error: ClientErrorEvent): void {
    if (this.#errors.listenerCount > 0) this.#errors.fire(error);
    else warn(error);
  }

  /**
   * Problems that belong to no request and do not stop the connection: malformed lines
   * (ProtocolError), dialog handlers that threw (DialogHandlerError), listeners that threw
   * (ListenerError). With no listener they become process warnings (console warnings in a browser).
   */
  onError(listener: (error: ClientErrorEvent) => void): Disposable {
    return this.#errors.event(listener);
  }

  /** Records of one type: an event (`message_update`, `agent_end`, …) or `extension_ui_request|dismissed|error`. */
  on<K extends keyof AgentEventMap>(type: K, listener: (event: AgentEventMap[K]) => void): Disposable {
    let emitter = this.#events.get(type);
    if (emitter === undefined) {
      emitter = new Emitter({ onListenerError: (error) => this.#reportError(new ListenerError(error)) });
      this.#events.set(type, emitter);
    }
    return emitter.event(listener as unknown as (record: AgentRecord) => void);
  }

  /**
   * Responses that answer no pending request: a late one (after its request timed out or was
   * aborted), or one the agent wrote of its own accord (a line it could not parse, `command: "parse"`).
   */
  onUnmatchedResponse(listener: (response: ResponseRecord) => void): Disposable {
    return this.#unmatched.event(listener);
  }

  /** Every record the agent writes, responses included, in order and as written (not validated). */
  onAny(listener: (record: AgentRecord) => void): Disposable {
    return this.#any.event(listener);
  }

  /**
   * Ends the connection (`killAfterMs`: a spawned agent that has not exited by then is killed):
   * pending requests reject with ConnectionClosedError, open dialogs end
   * (reason "closed"), then the transport closes (a spawned agent gets EOF and exits).
   */
  async close(options: { killAfterMs?: number } = {}): Promise<void> {
    this.#shutDown({ reason: "local" });
    await this.transport.close(options);
  }

  /**
   * Sends `message` as a prompt and resolves once the agent has settled: the run's tool calls,
   * steering and follow-up messages, auto-retries and compaction included. No timeout; aborting
   * `signal` sends `abort` and rejects with RequestAbortedError once the agent has stopped.
   * A `/command` resolves when it has finished and any run it started has settled.
   */
  run(message: string, options?: RunOptions): Promise<RunResult> {
    return run(this.#runHost(), message, options);
  }

  /** One run's events as an async iterator (`for await (const event of client.stream(…))`); `.result` as `run()`. */
  stream(message: string, options?: Omit<RunOptions, "onEvent">): RunStream {
    return stream(this.#runHost(), message, options);
  }

  /** Resolves when the agent is idle (at once if it is). For clients that drive runs with prompt/steer/followUp. */
  waitForIdle(options: { signal?: AbortSignal } = {}): Promise<void> {
    return waitForIdle(this.#runHost(), options);
  }

  #runHost() {
    return {
      onAny: (listener: (record: AgentRecord) => void) => this.onAny(listener),
      prompt: (message: string, options: Parameters<RpcClient["prompt"]>[1]) => this.prompt(message, options),
      abort: (options?: RequestOptions) => this.abort(options),
      retryPending: () => this.#retryPending,
      requestState: (options?: RequestOptions) => this.issue({ type: "get_state" }, options),
      onClosed: (listener: (info: CloseInfo) => void): Disposable => {
        if (this.#closeInfo !== undefined) {
          listener(this.#closeInfo);
          return { dispose() {} };
        }
        return this.onStateChange((state) => {
          if (state === "closed" && this.#closeInfo !== undefined) listener(this.#closeInfo);
        });
      },
      emitsSettled: (options?: RequestOptions) => {
        // parley's additions (get_ui_state) come with agent_settled; pi has neither.
        this.#emitsSettled ??= detectCapabilities(this, options).then((c) => c.uiState);
        this.#emitsSettled.catch(() => (this.#emitsSettled = undefined));
        return this.#emitsSettled;
      },
    };
  }

  protected issue<K extends CommandType>(command: CommandInput<K>, options?: RequestOptions): IssuedRequest<K> {
    if (this.#state === "closed") {
      const error = new ConnectionClosedError(this.#closeInfo ?? { reason: "local" });
      return { id: undefined, response: Promise.reject(error) };
    }
    return this.#requests.issue(command, options);
  }

  #shutDown(info: CloseInfo): void {
    if (this.#closeInfo !== undefined) return;
    this.#closeInfo = info;
    this.#setState("closed");
    this.#requests.rejectAll(() => new ConnectionClosedError(info));
    this.ui.closeAll();
    if (info.reason !== "local") for (const subscription of this.#subscriptions) subscription.dispose();
  }

  #setState(state: ConnectionState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#stateChanges.fire(state);
  }

  #route(record: AgentRecord): void {
    this.#any.fire(record);
    if (record.type === "agent_settled") this.#emitsSettled ??= Promise.resolve(true);
    if (record.type === "auto_retry_start") this.#retryPending = true;
    else if (record.type === "agent_start" || record.type === "auto_retry_end") this.#retryPending = false;
    if (isResponse(record)) {
      if (!this.#requests.settle(record)) this.#unmatched.fire(record);
      if (record.command === "get_ui_state" && record.success && isUiStateData(record.data)) {
        // A late-attaching client learns of dialogs opened before it was there.
        for (const pending of record.data.pendingDialogs) {
          const request = asDialogRequest(pending.request as unknown as AgentRecord);
          if (request !== undefined) this.ui.receive(request, pending.remainingMs);
        }
      }
      return;
    }
    this.#events.get(record.type)?.fire(record);
    if (record.type === "extension_ui_request") {
      const dialog = asDialogRequest(record);
      if (dialog !== undefined) this.ui.receive(dialog);
    } else if (record.type === "extension_ui_dismissed") {
      const dismissed = asDismissed(record);
      if (dismissed !== undefined) this.ui.dismissed(dismissed);
    }
  }
}

function isUiStateData(data: unknown): data is GetUiStateData {
  return typeof data === "object" && data !== null && Array.isArray((data as { pendingDialogs?: unknown }).pendingDialogs);
}

/** Under Node a process warning (shown once per kind, silenced by --no-warnings); elsewhere the console's. */
function warn(error: ClientErrorEvent): void {
  if (typeof process !== "undefined" && typeof process.emitWarning === "function") {
    process.emitWarning(error.message, { type: error.name, code: "PARLEY_CLIENT" });
  } else console.warn(`${error.name}: ${error.message}`);
}
