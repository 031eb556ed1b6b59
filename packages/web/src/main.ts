/**
 * parley's web UI. Connects to the server that served it (the token comes from the page URL),
 * rebuilds the conversation and the extension UI state on every (re)connection, then follows
 * the record stream. Every tab is a full client: dialogs show in all of them, the first answer wins.
 */
import type { AgentMessage, PendingDialogState, UiState } from "@parley/protocol";
import { Chrome } from "./chrome.js";
import { Connection, type WireRecord } from "./connection.js";
import { DialogList } from "./dialogs.js";
import { h } from "./dom.js";
import { isDialogRequest, isFireAndForget } from "./records.js";
import { Transcript } from "./transcript.js";

function layout() {
  const title = h("h1", { class: "title" }, "parley");
  const connection = h("span", { class: "connection", attrs: { "aria-live": "polite" } }, "connecting…");
  const transcript = h("div", { class: "transcript-inner" });
  const scroller = h("main", { class: "transcript", attrs: { "aria-label": "Conversation", role: "log" } }, transcript);
  const dialogs = h("section", { class: "dialogs", attrs: { "aria-label": "Pending dialogs" } });
  dialogs.hidden = true;
  const above = h("div", { class: "widgets widgets-above", attrs: { "aria-label": "Widgets above the prompt" } });
  const below = h("div", { class: "widgets widgets-below", attrs: { "aria-label": "Widgets below the prompt" } });
  const input = h("textarea", {
    attrs: { id: "prompt-input", rows: "2", "aria-label": "Message", placeholder: "Message, or /command — Enter sends, Shift+Enter for a new line" },
  });
  const send = h("button", { class: "primary", attrs: { type: "submit" } }, "Send");
  const steer = h("button", { attrs: { type: "button" } }, "Steer");
  const followUp = h("button", { attrs: { type: "button" } }, "Follow-up");
  const abort = h("button", { class: "danger", attrs: { type: "button" } }, "Abort");
  const form = h("form", { class: "prompt", attrs: { "aria-label": "Prompt" } }, input, h("div", { class: "prompt-actions" }, send, steer, followUp, abort));
  const statuses = h("div", { class: "statuses" });
  const activity = h("span", { class: "activity" });
  const statusbar = h("footer", { class: "statusbar", attrs: { "aria-label": "Status bar" } }, statuses, activity);
  const toasts = h("div", { class: "toasts", attrs: { "aria-label": "Notifications" } });
  document.body.append(
    h(
      "div",
      { class: "app" },
      h("header", { class: "topbar" }, title, connection),
      scroller,
      h("div", { class: "bottom" }, dialogs, above, form, below),
      statusbar,
    ),
    toasts,
  );
  return { title, connection, transcript, scroller, dialogs, above, below, input, send, steer, followUp, abort, form, statuses, activity, toasts };
}

function start(): void {
  const ui = layout();
  const token = new URLSearchParams(location.search).get("token");
  const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws${token !== null ? `?token=${encodeURIComponent(token)}` : ""}`;
  const transcript = new Transcript(ui.transcript, ui.scroller);
  const chrome = new Chrome({ statuses: ui.statuses, above: ui.above, below: ui.below, toasts: ui.toasts, title: ui.title });
  let streaming = false;
  /** Events are ignored until the conversation has been loaded (they are in it). */
  let synced = false;

  const setStreaming = (value: boolean): void => {
    streaming = value;
    ui.steer.disabled = ui.followUp.disabled = ui.abort.disabled = !value;
    ui.activity.textContent = value ? "working…" : "idle";
    document.body.classList.toggle("streaming", value);
  };
  setStreaming(false);

  let tokenRefusedShown = false;
  const connection: Connection = new Connection(wsUrl, {
    onState: (state) => {
      // A retry after a refused token keeps saying what to do.
      if (state === "connecting" && tokenRefusedShown) return;
      ui.connection.textContent =
        state === "open"
          ? "connected"
          : state === "connecting"
            ? "connecting…"
            : state === "refused"
              ? "parley restarted with a new token: open the URL it printed"
              : "disconnected, reconnecting…";
      // Once, not at every retry (until a connection works again).
      if (state === "refused" && !tokenRefusedShown) {
        chrome.toast(
          "parley no longer accepts this page's token (it was restarted with a new one). Open the URL it printed on start-up; it carries the new token.",
          "error",
        );
      }
      if (state === "refused" || state === "open") tokenRefusedShown = state === "refused";
      ui.connection.dataset["state"] = state;
    },
    onOpen: () => void resync(),
    onRecord: (record) => handle(record),
  });

  const dialogs = new DialogList(ui.dialogs, (id, answer) => connection.send({ type: "extension_ui_response", id, ...answer }));

  /**
   * Sent in this order and answered in this order; each answer is applied as soon as it arrives,
   * so events after it (which the answer does not include) are applied on top.
   */
  async function resync(): Promise<void> {
    synced = false;
    const state = connection.request({ type: "get_state" }).then((response) => {
      if (response.success) setStreaming(field<boolean>(response.data, "isStreaming") === true);
    });
    const messages = connection.request({ type: "get_messages" }).then((response) => {
      if (response.success) transcript.reset(field<AgentMessage[]>(response.data, "messages") ?? []);
      synced = true;
    });
    const uiState = connection.request({ type: "get_ui_state" }).then((response) => {
      if (!response.success || typeof response.data !== "object" || response.data === null) return;
      const data = response.data as UiState & { pendingDialogs?: PendingDialogState[] };
      chrome.reset(data);
      if (data.editorText !== undefined && ui.input.value === "") ui.input.value = data.editorText;
      dialogs.reset(data.pendingDialogs ?? []);
    });
    await Promise.all([state, messages, uiState]);
  }

  function handle(record: WireRecord): void {
    switch (record.type) {
      case "extension_ui_request":
        if (isDialogRequest(record)) dialogs.show(record);
        else if (isFireAndForget(record)) {
          if (record.method === "set_editor_text") ui.input.value = record.text;
          else chrome.apply(record);
        }
        return;
      case "extension_ui_dismissed":
        dialogs.dismissed(String(record["id"]), String(record["reason"]));
        return;
      case "extension_ui_error":
        if (typeof record["id"] === "string") dialogs.refused(record["id"], String(record["error"]), record["pending"] === true);
        else chrome.toast(String(record["error"]), "error");
        return;
      case "extension_error":
        transcript.error(`Extension error (${String(record["extensionPath"])}, ${String(record["event"])}): ${String(record["error"])}`);
        return;
      case "response":
        if (record["success"] === false) chrome.toast(`${String(record["command"])}: ${String(record["error"])}`, "error");
        return;
      case "agent_start":
        setStreaming(true);
        return;
      case "agent_settled":
        setStreaming(false);
        return;
    }
    if (!synced) return;
    switch (record.type) {
      case "message_start":
        transcript.messageStart(record["message"] as AgentMessage);
        return;
      case "message_update":
        transcript.delta(record["assistantMessageEvent"] as Parameters<Transcript["delta"]>[0]);
        return;
      case "message_end":
        transcript.messageEnd(record["message"] as AgentMessage);
        return;
      case "tool_execution_start":
        transcript.toolStart(String(record["toolCallId"]), String(record["toolName"]), record["args"]);
        return;
      case "tool_execution_update":
        transcript.toolUpdate(String(record["toolCallId"]), String(record["toolName"]), record["partialResult"]);
        return;
      case "tool_execution_end":
        transcript.toolEnd(String(record["toolCallId"]), String(record["toolName"]), record["result"], record["isError"] === true);
        return;
      case "auto_retry_start":
        transcript.note(`Retrying after an error (attempt ${String(record["attempt"])}): ${String(record["errorMessage"] ?? "")}`);
        return;
      case "compaction_start":
        transcript.note("Compacting the conversation…");
        return;
    }
  }

  async function submit(kind: "prompt" | "steer" | "follow_up"): Promise<void> {
    const message = ui.input.value;
    if (message.trim() === "") return;
    const command =
      kind === "prompt" ? (streaming ? { type: "prompt", message, streamingBehavior: "steer" } : { type: "prompt", message }) : { type: kind, message };
    ui.input.value = "";
    const response = await connection.request(command);
    if (!response.success) {
      chrome.toast(`${kind}: ${response.error ?? "failed"}`, "error");
      if (ui.input.value === "") ui.input.value = message;
    }
  }

  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submit("prompt");
  });
  ui.input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void submit("prompt");
    }
  });
  ui.steer.addEventListener("click", () => void submit("steer"));
  ui.followUp.addEventListener("click", () => void submit("follow_up"));
  ui.abort.addEventListener("click", () => void connection.request({ type: "abort" }));
  ui.input.focus();
}

function field<T>(data: unknown, key: string): T | undefined {
  return typeof data === "object" && data !== null && key in data ? ((data as Record<string, unknown>)[key] as T) : undefined;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
