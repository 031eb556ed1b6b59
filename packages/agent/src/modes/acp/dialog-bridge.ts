/**
 * Extension dialogs as ACP requests. The dialog registry stays the one owner of a dialog's life
 * (id, timeout, AbortSignal, resolve-once); this bridge shows each dialog to the client and turns
 * the client's answer into exactly one registry answer.
 *
 *   client with form elicitation: select → one enumerated string field, confirm → one boolean
 *     (a permission request on the tool call when a tool_call handler asks), input → one string
 *     field, editor → one multi-line string field prefilled with the text.
 *   client without: select and confirm → session/request_permission; input and editor are
 *     cancelled at once, and the client hears why once.
 *   decline or cancel → the extension's cancel value. The registry's timeout or the extension's
 *     AbortSignal → the ACP request is cancelled ($/cancel_request), once.
 */
import type {
  AgentContext,
  CreateElicitationRequest,
  ElicitationPropertySchema,
  PermissionOption,
  RequestPermissionRequest,
  SessionUpdate,
  ToolCallContent,
} from "@agentclientprotocol/sdk";
import type { DialogRequest } from "@parley/protocol";
import type { DialogResponseBody } from "@parley/protocol/dialog-answers";
import type { DialogOutput, DialogRegistry } from "../../ui/dialog-registry.js";
import { errorMessage } from "../../error-text.js";

/** The one field of each dialog's form, named after what it holds. */
const FIELD = { select: "choice", confirm: "confirmed", input: "value", editor: "text" } as const;

/** Answer shapes the registry takes (the same as an RPC client's extension_ui_response). */
type Answer = DialogResponseBody;

export interface DialogBridgeOptions {
  dialogs: DialogRegistry;
  /** The connection to the client; undefined before it is up. */
  client: () => AgentContext | undefined;
  /** Whether the client advertised form elicitation. */
  elicitation: () => boolean;
  /** The session a dialog opened now belongs to. */
  sessionId: () => string;
  /** The tool call a tool_call handler is deciding on right now, if any. */
  gatingToolCall: () => { toolCallId: string } | undefined;
  /**
   * Runs `send` once the client knows `sessionId` (at once, usually), with the id the client
   * knows it by (a dialog opened before the first session/new goes to the session it makes).
   */
  whenVisible: (sessionId: string, send: (sessionId: string) => void) => void;
  update: (sessionId: string, update: SessionUpdate) => void;
  notice: (sessionId: string, severity: "info" | "warning" | "error", title: string, description?: string) => void;
  log: (message: string) => void;
}

interface LiveDialog {
  sessionId: string;
  controller: AbortController;
  /** The client has answered its request (or it failed): nothing left to withdraw there. */
  settled: boolean;
}

export class DialogBridge {
  readonly #options: DialogBridgeOptions;
  readonly #live = new Map<string, LiveDialog>();
  #explained = false;

  constructor(options: DialogBridgeOptions) {
    this.#options = options;
  }

  /** The registry's output: a dialog to show, or one that ended on parley's side. */
  receive(record: DialogOutput): void {
    if (record.type === "extension_ui_request") this.#open(record);
    else if (record.type === "extension_ui_dismissed") this.#withdraw(record.id);
    // extension_ui_error: only answers that do not fit produce it, and the bridge sends none.
    else this.#options.log(`dialog bridge: ${record.error}`);
  }

  /** session/cancel: the user stops everything the session is doing, its open dialogs included. */
  cancelSession(sessionId: string): void {
    for (const [id, dialog] of [...this.#live]) if (dialog.sessionId === sessionId) this.#answer(id, { cancelled: true });
  }

  #open(request: DialogRequest): void {
    const o = this.#options;
    const gating = request.method === "confirm" ? o.gatingToolCall() : undefined;
    const dialog: LiveDialog = { sessionId: o.sessionId(), controller: new AbortController(), settled: false };
    this.#live.set(request.id, dialog);
    o.whenVisible(dialog.sessionId, (sessionId) => {
      if (!this.#live.has(request.id)) return; // ended while the client could not see it yet
      dialog.sessionId = sessionId;
      if (gating) this.#permission(request, sessionId, dialog, gating.toolCallId, false);
      else if (o.elicitation()) this.#elicit(request, sessionId, dialog);
      else if (request.method === "select" || request.method === "confirm") this.#permission(request, sessionId, dialog, `dialog-${request.id}`, true);
      else {
        this.#explain(sessionId);
        this.#answer(request.id, { cancelled: true });
      }
    });
  }

  /** The one notice a client without elicitation gets. */
  #explain(sessionId: string): void {
    if (this.#explained) return;
    this.#explained = true;
    this.#options.notice(
      sessionId,
      "warning",
      "An extension asked for text, which this client cannot show",
      "parley shows extension dialogs that ask for text (input, editor) as ACP elicitation forms, and this client did not advertise elicitation support: such dialogs are cancelled at once. Choices and confirmations appear as permission requests.",
    );
  }

  #elicit(request: DialogRequest, sessionId: string, dialog: LiveDialog): void {
    const field = FIELD[request.method];
    let property: ElicitationPropertySchema;
    let message = request.title;
    switch (request.method) {
      case "select":
        property = { type: "string", title: request.title, enum: request.options };
        break;
      case "confirm":
        property = { type: "boolean", title: request.title, description: request.message || null, default: false };
        if (request.message) message = `${request.title}\n\n${request.message}`;
        break;
      case "input":
        property = { type: "string", title: request.title, ...(request.placeholder !== undefined ? { description: request.placeholder } : {}) };
        break;
      case "editor":
        // JSON Schema has no multi-line string: _meta says so to clients that care.
        property = { type: "string", title: request.title, default: request.prefill ?? "", _meta: { "parley/multiline": true } };
        break;
    }
    const params: CreateElicitationRequest = {
      mode: "form",
      sessionId,
      message,
      requestedSchema: { type: "object", properties: { [field]: property }, required: [field] },
      _meta: { "parley/dialog": { id: request.id, method: request.method, ...(request.timeout !== undefined ? { timeoutMs: request.timeout } : {}) } },
    };
    const client = this.#options.client();
    if (!client) return this.#answer(request.id, { cancelled: true });
    afterEarlierMessages(client.request("elicitation/create", params, { cancellationSignal: dialog.controller.signal, stopWaitingOnCancel: true })).then(
      (response) => {
        dialog.settled = true;
        if (response.action !== "accept") return this.#answer(request.id, { cancelled: true });
        const content: unknown = "content" in response ? response.content : undefined;
        const value: unknown = typeof content === "object" && content !== null ? Object.getOwnPropertyDescriptor(content, field)?.value : undefined;
        this.#answer(request.id, answerFrom(request, value));
      },
      (error: unknown) => {
        dialog.settled = true;
        if (this.#live.has(request.id)) this.#options.log(`elicitation/create for dialog ${request.id} failed: ${errorMessage(error)}`);
        this.#answer(request.id, { cancelled: true });
      },
    );
  }

  /**
   * A permission request: on the gated tool call, or on a card made for the dialog (`ownCard`),
   * which is closed again once answered.
   */
  #permission(request: DialogRequest, sessionId: string, dialog: LiveDialog, toolCallId: string, ownCard: boolean): void {
    const o = this.#options;
    const select = request.method === "select" ? request.options : undefined;
    const options: PermissionOption[] = select
      ? select.map((name, i) => ({ optionId: String(i), name, kind: "allow_once" }))
      : [
          { optionId: "yes", name: "Yes", kind: "allow_once" },
          { optionId: "no", name: "No", kind: "reject_once" },
        ];
    const text = request.method === "confirm" && request.message ? `${request.title}\n\n${request.message}` : request.title;
    const content: ToolCallContent[] = [{ type: "content", content: { type: "text", text } }];
    // The card shows what the extension asked (title, message, choices), never parley's own record of the dialog.
    const card = { title: request.title, kind: "other", content, rawInput: dialogInput(request) } as const;
    if (ownCard) o.update(sessionId, { sessionUpdate: "tool_call", toolCallId, status: "pending", ...card });
    const params: RequestPermissionRequest = {
      sessionId,
      // A client that shows only the request (not the card) still has the title, kind and message.
      toolCall: ownCard ? { toolCallId, ...card } : { toolCallId, content },
      options,
      _meta: { "parley/dialog": { id: request.id, method: request.method, ...(request.timeout !== undefined ? { timeoutMs: request.timeout } : {}) } },
    };
    const client = o.client();
    if (!client) return this.#answer(request.id, { cancelled: true });
    const close = (status: "completed" | "failed"): void => {
      if (ownCard) o.update(sessionId, { sessionUpdate: "tool_call_update", toolCallId, status });
    };
    afterEarlierMessages(
      client.request("session/request_permission", params, { cancellationSignal: dialog.controller.signal, stopWaitingOnCancel: true }),
    ).then(
      ({ outcome }) => {
        dialog.settled = true;
        if (outcome.outcome !== "selected") {
          close("failed");
          return this.#answer(request.id, { cancelled: true });
        }
        close("completed");
        if (select) {
          const choice = select[Number(outcome.optionId)];
          return this.#answer(request.id, choice !== undefined && /^\d+$/.test(outcome.optionId) ? { value: choice } : { cancelled: true });
        }
        this.#answer(request.id, outcome.optionId === "yes" || outcome.optionId === "no" ? { confirmed: outcome.optionId === "yes" } : { cancelled: true });
      },
      (error: unknown) => {
        dialog.settled = true;
        close("failed");
        if (this.#live.has(request.id)) o.log(`session/request_permission for dialog ${request.id} failed: ${errorMessage(error)}`);
        this.#answer(request.id, { cancelled: true });
      },
    );
  }

  /** The client's answer, once: later ones (after a timeout, an abort, a cancel) find nothing live. */
  #answer(id: string, answer: Answer): void {
    const dialog = this.#live.get(id);
    if (!dialog) return;
    this.#live.delete(id);
    // The request may still be open on the client (session/cancel): withdraw it there too.
    if (!dialog.settled) dialog.controller.abort();
    this.#options.dialogs.handleResponse({ type: "extension_ui_response", id, ...answer });
  }

  /** parley ended the dialog (timeout, AbortSignal, shutdown): the registry has resolved it already. */
  #withdraw(id: string): void {
    const dialog = this.#live.get(id);
    if (!dialog) return;
    this.#live.delete(id);
    if (!dialog.settled) dialog.controller.abort();
  }
}

/**
 * The client's answer, once what it sent before the answer has been handled. The SDK resolves a
 * response at once but runs a notification's handlers a few promise steps later, so a
 * session/cancel followed at once by a "cancelled" answer (acpx's runtime does that) would let
 * the dialog's code finish, and the turn end as end_turn, before the cancel is seen. Lines read
 * together are all dispatched before the next macrotask.
 */
function afterEarlierMessages<T>(answer: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    answer.then(
      (value) => setImmediate(() => resolve(value)),
      (error: unknown) => setImmediate(() => reject(error)),
    );
  });
}

/** What a dialog asks, as a permission card's raw input. */
function dialogInput(request: DialogRequest): Record<string, unknown> {
  switch (request.method) {
    case "select":
      return { dialog: "select", title: request.title, options: request.options };
    case "confirm":
      return { dialog: "confirm", title: request.title, message: request.message };
    default:
      return { dialog: request.method, title: request.title };
  }
}

/** An accepted form's field as the registry's answer; a value that does not fit cancels. */
function answerFrom(request: DialogRequest, value: unknown): Answer {
  switch (request.method) {
    case "confirm":
      return typeof value === "boolean" ? { confirmed: value } : { cancelled: true };
    case "select":
      return typeof value === "string" && request.options.includes(value) ? { value } : { cancelled: true };
    default:
      return typeof value === "string" ? { value } : { cancelled: true };
  }
}
