/**
 * parley's web UI. Connects to the server that served it (the token comes from the page URL),
 * rebuilds the conversation and the extension UI state on every (re)connection, then follows
 * the record stream. Every tab is a full client: dialogs show in all of them, the first answer wins.
 */
import type {
  AgentMessage,
  ListedSession,
  Model,
  PendingDialogState,
  SessionState,
  SessionStats,
  SessionTreeNode,
  SlashCommand,
  ThinkingLevel,
  UiState,
} from "@parley/protocol";
import { Attachments } from "./attachments.js";
import { Chrome } from "./chrome.js";
import { Connection, type WireRecord } from "./connection.js";
import { Completion, type CompletionItem } from "./completion.js";
import { DialogList } from "./dialogs.js";
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
      open: (path) => void switchTo({ type: "switch_session", sessionPath: path }),
      create: () => void switchTo({ type: "new_session" }),
      rename: (name) => void command({ type: "set_session_name", name }).then(() => void refreshSessions()),
    },
    tree.element,
  );
  const modelBar = new ModelBar({
    chooseModel: (provider, modelId) => void command({ type: "set_model", provider, modelId }).then(() => void refreshState()),
    chooseLevel: (level) => void command({ type: "set_thinking_level", level }).then(() => void refreshState()),
  });
  let commands: CompletionItem[] = [];
  const completion = new Completion(ui.input, {
    commands: () => commands,
    files: async (query) => {
      const response = await connection.request({ type: "list_files", query, limit: 30 });
      return response.success ? (field<string[]>(response.data, "files") ?? []).map((value) => ({ value })) : [];
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

  /** A command whose failure is said in a toast; the response's data when it succeeded. */
  async function command(record: { type: string; [key: string]: unknown }): Promise<unknown> {
    const response = await connection.request(record);
    if (!response.success) {
      chrome.toast(`${record.type}: ${response.error ?? "failed"}`, "error");
      return undefined;
    }
    return response.data ?? null;
  }

  async function refreshState(): Promise<void> {
    const [state, levels, stats] = await Promise.all([
      connection.request({ type: "get_state" }),
      connection.request({ type: "get_available_thinking_levels" }),
      connection.request({ type: "get_session_stats" }),
    ]);
    if (state.success && isObject(state.data)) {
      const data = state.data as Partial<SessionState>;
      setStreaming(data.isStreaming === true);
      const changed = data.sessionFile !== sessionFile;
      sessionFile = data.sessionFile;
      sessionName = data.sessionName;
      const levelList = levels.success ? (field<ThinkingLevel[]>(levels.data, "levels") ?? []) : [];
      modelBar.setCurrent(data.model ?? undefined, data.thinkingLevel, levelList);
      if (changed) void refreshSessions();
    }
    if (stats.success && isObject(stats.data)) {
      const data = stats.data as Partial<SessionStats>;
      modelBar.setStats(data.contextUsage, data.cost);
    }
  }

  async function refreshTree(): Promise<void> {
    const response = await connection.request({ type: "get_tree" });
    if (response.success) tree.update(field<SessionTreeNode[]>(response.data, "tree") ?? [], field<string | null>(response.data, "leafId") ?? null);
  }

  async function refreshSessions(): Promise<void> {
    const response = await connection.request({ type: "list_sessions" });
    if (response.success) sessionList.update(field<ListedSession[]>(response.data, "sessions") ?? [], sessionFile, sessionName);
  }

  async function refreshCommands(): Promise<void> {
    const response = await connection.request({ type: "get_commands" });
    if (!response.success) return;
    commands = (field<SlashCommand[]>(response.data, "commands") ?? []).map((c) => ({ value: c.name, description: c.description }));
  }

  async function refreshModels(): Promise<void> {
    const response = await connection.request({ type: "get_available_models" });
    if (response.success) modelBar.setModels(field<Model[]>(response.data, "models") ?? []);
  }

  /** A switch (new, stored, fork) the server made: everything again. Cancelled by an extension: nothing changes. */
  async function switchTo(record: { type: string; [key: string]: unknown }): Promise<unknown> {
    const data = await command(record);
    if (data === undefined || field<boolean>(data, "cancelled") === true) return undefined;
    document.body.classList.remove("show-sessions");
    ui.menu.setAttribute("aria-expanded", "false");
    await resync();
    return data;
  }

  /** Fork before a user message (counted from the newest), then edit its text or send it again. */
  async function forkUser(fromEnd: number, then: "edit" | "retry"): Promise<void> {
    const list = await connection.request({ type: "get_fork_messages" });
    const messages = list.success ? (field<{ entryId: string; text: string }[]>(list.data, "messages") ?? []) : [];
    const target = messages[messages.length - 1 - fromEnd];
    if (!target) {
      chrome.toast("fork: that message cannot be forked from", "error");
      return;
    }
    await forkEntry(target.entryId, target.text, then);
  }

  /** A fork before this user entry: its text to edit, or sent again. */
  async function forkEntry(entryId: string, fallback: string, then: "edit" | "retry"): Promise<void> {
    const data = await switchTo({ type: "fork", entryId });
    if (data === undefined) return;
    const text = field<string>(data, "text") ?? fallback;
    if (then === "retry") await command({ type: "prompt", message: text });
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
    const messages = connection.request({ type: "get_messages" }).then((response) => {
      if (response.success) transcript.reset(field<AgentMessage[]>(response.data, "messages") ?? []);
      synced = true;
    });
    const state = refreshState();
    const uiState = connection.request({ type: "get_ui_state" }).then((response) => {
      if (!response.success || typeof response.data !== "object" || response.data === null) return;
      const data = response.data as UiState & { pendingDialogs?: PendingDialogState[] };
      chrome.reset(data);
      if (data.editorText !== undefined && ui.input.value === "") ui.input.value = data.editorText;
      dialogs.reset(data.pendingDialogs ?? []);
    });
    await Promise.all([state, messages, uiState, refreshSessions(), refreshModels(), refreshCommands(), refreshTree()]);
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
        void refreshState();
        void refreshTree();
        // The run may have written the session's file for the first time.
        void refreshSessions();
        return;
      case "thinking_level_changed":
      case "session_info_changed":
        void refreshState().then(() => refreshSessions());
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
    const images = attachments.take();
    if (message.trim() === "" && images.length === 0) return;
    const withImages = images.length > 0 ? { images } : {};
    const command =
      kind === "prompt"
        ? { type: "prompt", message, ...withImages, ...(streaming ? { streamingBehavior: "steer" } : {}) }
        : { type: kind, message, ...withImages };
    ui.input.value = "";
    completion.close();
    transcript.follow();
    const response = await connection.request(command);
    if (!response.success) {
      chrome.toast(`${kind}: ${response.error ?? "failed"}`, "error");
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
  ui.abort.addEventListener("click", () => void connection.request({ type: "abort" }));
  ui.jump.addEventListener("click", () => transcript.follow());
  ui.menu.addEventListener("click", () => {
    const open = document.body.classList.toggle("show-sessions");
    ui.menu.setAttribute("aria-expanded", String(open));
  });
  ui.input.focus();
}

function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

function field<T>(data: unknown, key: string): T | undefined {
  return typeof data === "object" && data !== null && key in data ? ((data as Record<string, unknown>)[key] as T) : undefined;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
