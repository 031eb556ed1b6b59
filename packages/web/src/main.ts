/**
 * parley's web UI. Connects to the server that served it (the token comes from the page URL),
 * rebuilds the conversation and the extension UI state on every (re)connection, then follows
 * the record stream. Every tab is a full client: dialogs show in all of them, the first answer wins.
 * It speaks to parley only through @parley/client (its browser entry): typed commands, and every
 * record parley sends unasked through one table the compiler checks is complete (`events` below).
 */
import { ConnectionClosedError, onEvents, RpcError, type AnyPendingDialog, type EventTable, type RpcClient } from "@parley/client/browser";
import type { ExtensionUiResponse } from "@parley/protocol";
import { Attachments } from "./attachments.js";
import { Chrome } from "./chrome.js";
import { Connection } from "./connection.js";
import { Completion, type CompletionItem } from "./completion.js";
import { DialogList, type DialogAnswer } from "./dialogs.js";
import { h } from "./dom.js";
import { ModelBar } from "./model-bar.js";
import { isDialogRequest, isFireAndForget } from "./records.js";
import { SessionTree } from "./session-tree.js";
import { SessionList } from "./sessions.js";
import { ThemeToggle } from "./theme.js";
import { Transcript } from "./transcript.js";

function layout() {
  const title = h("h1", { class: "title" }, "parley");
  const connection = h("span", { class: "connection", attrs: { "aria-live": "polite" } }, "connecting…");
  const menu = h("button", { class: "menu", attrs: { type: "button", "aria-controls": "sessions", "aria-expanded": "false" } }, "Sessions");
  const theme = h("button", { class: "theme", attrs: { type: "button", "aria-pressed": "false" } }, "Dark theme");
  const transcript = h("div", { class: "transcript-inner" });
  const scroller = h("div", { class: "transcript", attrs: { "aria-label": "Conversation", role: "log", tabindex: "0" } }, transcript);
  const jump = h("button", { class: "jump", attrs: { type: "button" } }, "Jump to newest");
  jump.hidden = true;
  const dialogs = h("section", { class: "dialogs", attrs: { "aria-label": "Pending dialogs" } });
  dialogs.hidden = true;
  // Boxes that may scroll can be reached from the keyboard (tabindex 0).
  const above = h("div", { class: "widgets widgets-above", attrs: { tabindex: "0" } });
  const below = h("div", { class: "widgets widgets-below", attrs: { tabindex: "0" } });
  const input = h("textarea", {
    attrs: { id: "prompt-input", rows: "2", "aria-label": "Message", placeholder: "Message, /command or @file — Enter sends, Shift+Enter for a new line" },
  });
  const send = h("button", { class: "primary", attrs: { type: "submit" } }, "Send");
  const steer = h("button", { attrs: { type: "button" } }, "Steer");
  const followUp = h("button", { attrs: { type: "button" } }, "Follow-up");
  const abort = h("button", { class: "danger", attrs: { type: "button" } }, "Stop");
  const form = h("form", { class: "prompt", attrs: { "aria-label": "Prompt" } }, input, h("div", { class: "prompt-actions" }, send, steer, followUp, abort));
  const statuses = h("div", { class: "statuses", attrs: { tabindex: "0" } });
  const activity = h("span", { class: "activity" });
  const statusbar = h("footer", { class: "statusbar" }, statuses, h("span", { class: "statusbar-end" }, activity, connection));
  const toasts = h("div", { class: "toasts" });
  return {
    title,
    connection,
    menu,
    theme,
    transcript,
    scroller,
    jump,
    dialogs,
    above,
    below,
    input,
    send,
    steer,
    followUp,
    abort,
    form,
    statuses,
    activity,
    statusbar,
    toasts,
  };
}

type Ui = ReturnType<typeof layout>;

function mount(ui: Ui, sessions: HTMLElement, modelBar: HTMLElement): void {
  document.body.append(
    h(
      "div",
      { class: "app" },
      sessions,
      h(
        "div",
        { class: "column" },
        h("header", { class: "topbar" }, ui.menu, ui.title, ui.theme, modelBar),
        h(
          "main",
          { class: "main" },
          h("div", { class: "transcript-wrap" }, ui.scroller, ui.jump),
          h("div", { class: "bottom" }, ui.dialogs, ui.above, ui.form, ui.below),
        ),
        ui.statusbar,
      ),
    ),
    ui.toasts,
  );
}

function start(): void {
  const ui = layout();
  const token = new URLSearchParams(location.search).get("token");
  const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws${token !== null ? `?token=${encodeURIComponent(token)}` : ""}`;
  const transcript = new Transcript(ui.transcript, ui.scroller, {
    fork: (fromEnd) => void forkUser(fromEnd, "edit"),
    edit: (fromEnd) => void forkUser(fromEnd, "edit"),
    retry: () => void forkUser(0, "retry"),
    following: (follow) => (ui.jump.hidden = follow),
  });
  const chrome = new Chrome({ statuses: ui.statuses, above: ui.above, below: ui.below, toasts: ui.toasts, title: ui.title });
  const tree = new SessionTree((entryId) => void forkEntry(entryId, "", "edit"));
  const sessionList = new SessionList(
    {
      open: (path) => void switchTo("switch_session", (c) => c.switchSession(path)),
      create: () => void switchTo("new_session", (c) => c.newSession()),
      rename: (name) => void command("set_session_name", (c) => c.setSessionName(name)).then(() => void refreshSessions()),
    },
    tree.element,
  );
  const modelBar = new ModelBar({
    chooseModel: (provider, modelId) => void command("set_model", (c) => c.setModel(provider, modelId)).then(() => void refreshState()),
    chooseLevel: (level) => void command("set_thinking_level", (c) => c.setThinkingLevel(level)).then(() => void refreshState()),
  });
  let commands: CompletionItem[] = [];
  const completion = new Completion(ui.input, {
    commands: () => commands,
    files: async (query) => {
      const data = await quietly((c) => c.listFiles(query, 30));
      return (data?.files ?? []).map((value) => ({ value }));
    },
  });
  const attachments = new Attachments(ui.form, (why) => chrome.toast(why, "error"));
  ui.form.prepend(completion.element, attachments.element);
  mount(ui, sessionList.element, modelBar.element);
  const theme = new ThemeToggle(ui.theme);
  theme.apply();
  let streaming = false;
  /** Events are ignored until the conversation has been loaded (they are in it). */
  let synced = false;
  let sessionFile: string | undefined;
  let sessionName: string | undefined;

  const setStreaming = (value: boolean): void => {
    streaming = value;
    ui.steer.disabled = ui.followUp.disabled = ui.abort.disabled = !value;
    ui.activity.textContent = value ? "working…" : "idle";
    document.body.classList.toggle("streaming", value);
    transcript.setBusy(value);
  };
  setStreaming(false);

  const dialogs = new DialogList(ui.dialogs, (id, answer) => {
    const client = connection.client;
    if (client === undefined) return false;
    const pending = client.ui.get(id);
    if (pending !== undefined) return answerDialog(pending, answer);
    // Ended on this side only (an answer parley refused and the page showed again, or the local
    // clock ran out first): parley judges whether it still takes an answer.
    const response: ExtensionUiResponse = { type: "extension_ui_response", id, ...answer };
    try {
      client.transport.send(response);
      return true;
    } catch {
      return false; // closed in the meantime: the dialog stays open, saying so
    }
  });

  /** A request through the open client; a failure (or no connection) is said in a toast and gives undefined. */
  async function command<T>(label: string, send: (client: RpcClient) => Promise<T>): Promise<T | undefined> {
    try {
      return await send(openClient());
    } catch (error) {
      chrome.toast(`${label}: ${failureText(error)}`, "error");
      return undefined;
    }
  }

  /** A request whose failure the page shows no sign of (a refresh: the next one repairs it). */
  async function quietly<T>(send: (client: RpcClient) => Promise<T>): Promise<T | undefined> {
    try {
      return await send(openClient());
    } catch {
      return undefined;
    }
  }

  function openClient(): RpcClient {
    const client = connection.client;
    if (client === undefined) throw new Error("not connected to parley");
    return client;
  }

  async function refreshState(): Promise<void> {
    const [state, levels, stats] = await Promise.all([
      quietly((c) => c.getState()),
      quietly((c) => c.getAvailableThinkingLevels()),
      quietly((c) => c.getSessionStats()),
    ]);
    if (state !== undefined) {
      setStreaming(state.isStreaming);
      const changed = state.sessionFile !== sessionFile;
      sessionFile = state.sessionFile;
      sessionName = state.sessionName;
      modelBar.setCurrent(state.model ?? undefined, state.thinkingLevel, levels ?? []);
      if (changed) void refreshSessions();
    }
    if (stats !== undefined) modelBar.setStats(stats.contextUsage, stats.cost);
  }

  async function refreshTree(): Promise<void> {
    const data = await quietly((c) => c.getTree());
    if (data !== undefined) tree.update(data.tree, data.leafId);
  }

  async function refreshSessions(): Promise<void> {
    const data = await quietly((c) => c.listSessions());
    if (data !== undefined) sessionList.update(data.sessions, sessionFile, sessionName);
  }

  async function refreshCommands(): Promise<void> {
    const list = await quietly((c) => c.getCommands());
    if (list !== undefined) commands = list.map((c) => ({ value: c.name, description: c.description }));
  }

  async function refreshModels(): Promise<void> {
    const models = await quietly((c) => c.getAvailableModels());
    if (models !== undefined) modelBar.setModels(models);
  }

  /** A switch (new, stored, fork) the server made: everything again. Cancelled by an extension: nothing changes. */
  async function switchTo<T extends { cancelled: boolean }>(label: string, send: (client: RpcClient) => Promise<T>): Promise<T | undefined> {
    const data = await command(label, send);
    if (data === undefined || data.cancelled) return undefined;
    document.body.classList.remove("show-sessions");
    ui.menu.setAttribute("aria-expanded", "false");
    await resync();
    return data;
  }

  /** Fork before a user message (counted from the newest), then edit its text or send it again. */
  async function forkUser(fromEnd: number, then: "edit" | "retry"): Promise<void> {
    const messages = (await quietly((c) => c.getForkMessages())) ?? [];
    const target = messages[messages.length - 1 - fromEnd];
    if (!target) {
      chrome.toast("fork: that message cannot be forked from", "error");
      return;
    }
    await forkEntry(target.entryId, target.text, then);
  }

  /** A fork before this user entry: its text to edit, or sent again. */
  async function forkEntry(entryId: string, fallback: string, then: "edit" | "retry"): Promise<void> {
    const data = await switchTo("fork", (c) => c.fork(entryId));
    if (data === undefined) return;
    const text = data.text ?? fallback;
    if (then === "retry") await command("prompt", (c) => c.prompt(text));
    else {
      ui.input.value = text;
      ui.input.focus();
    }
  }

  /**
   * Sent in this order and answered in this order; each answer is applied as soon as it arrives,
   * so events after it (which the answer does not include) are applied on top.
   */
  async function resync(): Promise<void> {
    synced = false;
    // The conversation first: it is what the reader waits for.
    const messages = quietly((c) => c.getMessages()).then((list) => {
      if (list !== undefined) transcript.reset(list);
      synced = true;
    });
    const state = refreshState();
    const uiState = quietly((c) => c.getUiState()).then((data) => {
      if (data === undefined) return;
      chrome.reset(data);
      if (data.editorText !== undefined && ui.input.value === "") ui.input.value = data.editorText;
      dialogs.reset(data.pendingDialogs.filter((pending) => isDialogRequest(pending.request)));
    });
    await Promise.all([state, messages, uiState, refreshSessions(), refreshModels(), refreshCommands(), refreshTree()]);
  }

  /** Until the conversation is loaded, its events are not applied (the loaded conversation has them). */
  const whenSynced =
    <E>(apply: (event: E) => void) =>
    (event: E): void => {
      if (synced) apply(event);
    };

  /**
   * What the page does with each record parley sends unasked. Every event of the protocol is here
   * (the type requires it): a new one fails to compile until it is handled or ignored (`null`).
   */
  const events: EventTable = {
    extension_ui_request: (record) => {
      // Dialogs come through client.ui (above); these are the fire-and-forget ones.
      if (!isFireAndForget(record)) return;
      if (record.method === "set_editor_text") ui.input.value = record.text;
      else chrome.apply(record);
    },
    extension_ui_dismissed: (record) => dialogs.dismissed(record.id, record.reason),
    extension_ui_error: (record) => {
      if (typeof record.id === "string") dialogs.refused(record.id, String(record.error), record.pending === true);
      else chrome.toast(String(record.error), "error");
    },
    extension_error: (record) => transcript.error(`Extension error (${record.extensionPath}, ${record.event}): ${record.error}`),
    agent_start: () => setStreaming(true),
    agent_settled: () => {
      setStreaming(false);
      void refreshState();
      void refreshTree();
      // The run may have written the session's file for the first time.
      void refreshSessions();
    },
    thinking_level_changed: () => void refreshState().then(() => refreshSessions()),
    session_info_changed: () => void refreshState().then(() => refreshSessions()),
    message_start: whenSynced((record) => transcript.messageStart(record.message)),
    message_update: whenSynced((record) => transcript.delta(record.assistantMessageEvent)),
    message_end: whenSynced((record) => transcript.messageEnd(record.message)),
    tool_execution_start: whenSynced((record) => transcript.toolStart(record.toolCallId, record.toolName, record.args)),
    tool_execution_update: whenSynced((record) => transcript.toolUpdate(record.toolCallId, record.toolName, record.partialResult)),
    tool_execution_end: whenSynced((record) => transcript.toolEnd(record.toolCallId, record.toolName, record.result, record.isError === true)),
    auto_retry_start: whenSynced((record) => transcript.note(`Retrying after an error (attempt ${record.attempt}): ${record.errorMessage ?? ""}`)),
    compaction_start: whenSynced(() => transcript.note("Compacting the conversation…")),
    // Shown by what follows them: agent_settled ends the run, get_state and get_tree refresh after it.
    agent_end: null,
    turn_start: null,
    turn_end: null,
    compaction_end: null,
    auto_retry_end: null,
    // A prompt-cache refresh between runs is paid for: its usage entry moves the cost shown.
    entry_appended: (record) => {
      if (record.entry.type === "usage") void refreshState();
    },
    // The page sends no bash command and shows no queue; summaries are retried inside a compaction.
    bash_execution_update: null,
    queue_update: null,
    summarization_retry_scheduled: null,
    summarization_retry_attempt_start: null,
    summarization_retry_finished: null,
  };

  let tokenRefusedShown = false;
  const connection = new Connection(wsUrl, {
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
    onClient: (client) => {
      synced = false;
      onEvents(client, events);
      // A failure that answers none of the page's requests (e.g. a line parley could not parse).
      client.onUnmatchedResponse((response) => {
        if (!response.success) chrome.toast(`${response.command}: ${String(response.error)}`, "error");
      });
      // Every dialog, from its request or from a get_ui_state snapshot, is the page's to answer.
      client.ui.onDialog((dialog) => {
        if (isDialogRequest(dialog.request)) dialogs.show(dialog.request, dialog.deadline === undefined ? undefined : dialog.deadline - Date.now());
      });
    },
    onOpen: () => void resync(),
  });

  async function submit(kind: "prompt" | "steer" | "follow_up"): Promise<void> {
    const message = ui.input.value;
    const images = attachments.take();
    if (message.trim() === "" && images.length === 0) return;
    const withImages = images.length > 0 ? { images } : {};
    ui.input.value = "";
    completion.close();
    transcript.follow();
    try {
      const client = openClient();
      if (kind === "prompt") await client.prompt(message, { ...withImages, ...(streaming ? { streamingBehavior: "steer" as const } : {}) });
      else if (kind === "steer") await client.steer(message, withImages);
      else await client.followUp(message, withImages);
    } catch (error) {
      chrome.toast(`${kind}: ${failureText(error)}`, "error");
      if (ui.input.value === "") ui.input.value = message;
      attachments.restore(images);
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
  ui.abort.addEventListener("click", () => void quietly((c) => c.abort()));
  ui.jump.addEventListener("click", () => transcript.follow());
  ui.menu.addEventListener("click", () => {
    const open = document.body.classList.toggle("show-sessions");
    ui.menu.setAttribute("aria-expanded", String(open));
  });
  ui.input.focus();
}

/** What went wrong, in the words the page showed before it used the typed client. */
function failureText(error: unknown): string {
  if (error instanceof RpcError) return error.error;
  if (error instanceof ConnectionClosedError) return "the connection to parley closed";
  return error instanceof Error ? error.message : String(error);
}

/** Writes the page's answer through the client, which sends exactly one per dialog. */
function answerDialog(dialog: AnyPendingDialog, answer: DialogAnswer): boolean {
  if ("cancelled" in answer) return dialog.cancel();
  if (dialog.method === "confirm") return "confirmed" in answer && dialog.answer(answer.confirmed);
  return "value" in answer && dialog.answer(answer.value);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
