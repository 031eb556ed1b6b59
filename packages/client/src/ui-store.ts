/**
 * UiStore: what a client needs to draw the extension UI. Fire-and-forget records are folded
 * with the protocol's own reducer (the one parley uses to answer `get_ui_state`), so the store
 * and the agent agree by construction; open dialogs come from `client.ui`.
 *
 * Seeding: a successful `get_ui_state` response is an exact snapshot at its place in the
 * stream, so the store replaces its state when that response passes by (in order, before
 * later records are folded), whoever sent the command. `UiStore.attach()` sends it when the
 * agent supports it (parley) and starts from empty otherwise (pi). Against pi, connect the
 * store right after creating the client (before awaiting anything) so that the records the
 * agent writes at startup are folded too; the transport keeps them until the client reads.
 */
import type { FireAndForgetRequest, GetUiStateData, UiState } from "@parley/protocol";
import { emptyUiState, reduceUiState } from "@parley/protocol/ui-state";
import type { RpcClient } from "./client.js";
import type { AnyPendingDialog, DialogEnd } from "./dialogs.js";
import { DisposableStore, Emitter, type Disposable } from "@parley/protocol/disposable";
import { RpcError } from "./errors.js";
import { asFireAndForget, isResponse, type AgentRecord } from "./records.js";
import type { RequestOptions } from "./requests.js";

export type UiChange =
  | { kind: "record"; record: FireAndForgetRequest }
  | { kind: "seed" }
  | { kind: "dialog_opened"; dialog: AnyPendingDialog }
  | { kind: "dialog_ended"; dialog: AnyPendingDialog; reason: DialogEnd["reason"] };

export interface UiStoreAttachOptions extends RequestOptions {
  /** Fetch the current state with get_ui_state (default true; skipped quietly against pi). */
  seed?: boolean;
}

export class UiStore implements Disposable {
  #state: UiState = emptyUiState();
  #dialogs: (() => AnyPendingDialog[]) | undefined;
  readonly #changes = new Emitter<UiChange>();
  readonly #subscriptions = new DisposableStore();

  /** Connects a new store to `client` and, by default, seeds it from `get_ui_state`. */
  static async attach(client: RpcClient, options: UiStoreAttachOptions = {}): Promise<UiStore> {
    const store = new UiStore();
    store.connect(client);
    if (options.seed ?? true) {
      const { seed: _seed, ...requestOptions } = options;
      await store.refresh(client, requestOptions);
    }
    return store;
  }

  /** The folded state: statuses, widgets (with placement), title, editor text, recent notifications. */
  get state(): UiState {
    return this.#state;
  }

  /** Open dialogs, oldest first (empty until connected). */
  get pendingDialogs(): AnyPendingDialog[] {
    return this.#dialogs?.() ?? [];
  }

  /** Called after every change; read `state` / `pendingDialogs` for the result. */
  onChange(listener: (change: UiChange) => void): Disposable {
    return this.#changes.event(listener);
  }

  /** Follows the client's records and dialogs from now on. Dispose the result (or the store) to stop. */
  connect(client: RpcClient): Disposable {
    this.#dialogs = () => client.ui.pending();
    const connection = new DisposableStore();
    connection.add(client.onAny((record) => this.#onRecord(record)));
    connection.add(client.ui.onOpen((dialog) => this.#changes.fire({ kind: "dialog_opened", dialog })));
    connection.add(client.ui.onEnd(({ dialog, reason }) => this.#changes.fire({ kind: "dialog_ended", dialog, reason })));
    return this.#subscriptions.add(connection);
  }

  /**
   * Asks the agent for its UI state (the snapshot is applied as the response passes by).
   * Resolves true when seeded, false when the agent has no get_ui_state (pi).
   */
  async refresh(client: RpcClient, options?: RequestOptions): Promise<boolean> {
    try {
      await client.getUiState(options);
      return true;
    } catch (error) {
      if (error instanceof RpcError && error.isUnknownCommand) return false;
      throw error;
    }
  }

  /** Replaces the folded state with a snapshot (e.g. `get_ui_state` data; its pendingDialogs are client.ui's business). */
  seed(snapshot: UiState | GetUiStateData): void {
    this.#state = {
      // Null-prototype copies, as the reducer keeps them: keys come from extensions.
      statuses: Object.assign(Object.create(null) as UiState["statuses"], snapshot.statuses),
      widgets: Object.assign(Object.create(null) as UiState["widgets"], snapshot.widgets),
      notifications: [...snapshot.notifications],
      ...(snapshot.title === undefined ? {} : { title: snapshot.title }),
      ...(snapshot.editorText === undefined ? {} : { editorText: snapshot.editorText }),
    };
    this.#changes.fire({ kind: "seed" });
  }

  /** Folds one fire-and-forget record (anything else is ignored). */
  apply(record: AgentRecord): void {
    const request = asFireAndForget(record);
    if (request === undefined) return;
    this.#state = reduceUiState(this.#state, request);
    this.#changes.fire({ kind: "record", record: request });
  }

  dispose(): void {
    this.#subscriptions.dispose();
    this.#dialogs = undefined;
    this.#changes.clear();
  }

  #onRecord(record: AgentRecord): void {
    if (isResponse(record)) {
      if (record.command === "get_ui_state" && record.success && isUiState(record.data)) this.seed(record.data);
      return;
    }
    this.apply(record);
  }
}

function isUiState(data: unknown): data is UiState {
  if (typeof data !== "object" || data === null) return false;
  const d = data as Record<string, unknown>;
  return typeof d["statuses"] === "object" && typeof d["widgets"] === "object" && Array.isArray(d["notifications"]);
}
