/**
 * The conversation: user and assistant messages (markdown), thinking (collapsible), tool calls
 * with their arguments and live output, errors. Deltas touch only the block they extend, and
 * each block renders at most once per animation frame.
 */
import type { AgentMessage, AssistantMessage, MessageStartEvent, StreamingAssistantMessage, ToolResultMessage } from "@parley/protocol";
import { copyButton, h } from "./dom.js";
import { afterRender, schedule, type FrameView } from "./frame.js";
import { MarkdownView } from "./markdown.js";

/** A tool call's card: name, arguments, output; filled from the stream or from history. */
class ToolCard implements FrameView {
  readonly element: HTMLElement;
  readonly #args: HTMLElement;
  readonly #output: HTMLElement;
  readonly #state: HTMLElement;
  #argsText = "";
  #argsValue: unknown;
  #outputText = "";
  readonly #name: string;

  constructor(name: string) {
    this.#name = name;
    this.#state = h("span", { class: "tool-state" }, "");
    this.#args = h("pre", { class: "tool-args" });
    this.#output = h("pre", { class: "tool-output", attrs: { tabindex: "0" } });
    this.element = h(
      "details",
      { class: "tool", attrs: { open: "" } },
      h("summary", null, h("span", { class: "tool-name" }, name), " ", this.#state),
      this.#args,
      this.#output,
    );
  }

  appendArgs(delta: string): void {
    this.#argsText += delta;
    schedule(this);
  }

  setArgs(args: unknown): void {
    // A codemode call's argument is a script: shown as code, not as an escaped JSON string.
    const code = this.#name === "codemode" && typeof args === "object" && args !== null ? (args as { code?: unknown }).code : undefined;
    this.#argsText = typeof code === "string" ? code : formatJson(args);
    this.#argsValue = args;
    schedule(this);
  }

  setState(state: "running" | "done" | "error"): void {
    this.#state.textContent = state === "running" ? "running…" : state === "error" ? "failed" : "done";
    this.element.classList.toggle("tool-error", state === "error");
  }

  setOutput(result: unknown): void {
    this.#outputText = resultText(result) || scriptCalls(result);
    schedule(this);
  }

  render(): void {
    const diff = this.#name === "edit" ? editDiff(this.#argsValue) : undefined;
    if (diff) this.#args.replaceChildren(...diff);
    else this.#args.textContent = this.#argsText;
    this.#args.classList.toggle("diff", diff !== undefined);
    this.#output.textContent = this.#outputText;
    this.#output.hidden = this.#outputText === "";
  }
}

/** A running codemode script's nested calls so far (its updates carry them in `details.calls`), one line each. */
function scriptCalls(result: unknown): string {
  const details = typeof result === "object" && result !== null ? (result as { details?: unknown }).details : undefined;
  const calls = typeof details === "object" && details !== null ? (details as { calls?: unknown }).calls : undefined;
  if (!Array.isArray(calls)) return "";
  return calls
    .flatMap((call: unknown) => {
      if (typeof call !== "object" || call === null) return [];
      const { name, status } = call as { name?: unknown; status?: unknown };
      return typeof name === "string" && typeof status === "string" ? [`${name}: ${status}`] : [];
    })
    .join("\n");
}

/** A thinking block, collapsed by default once it ends. */
class ThinkingView implements FrameView {
  readonly element: HTMLDetailsElement;
  readonly #body: HTMLElement;
  #text = "";

  constructor(open: boolean) {
    this.#body = h("div", { class: "thinking-text" });
    this.element = h("details", { class: "thinking" }, h("summary", null, "Thinking"), this.#body);
    this.element.open = open;
  }

  append(delta: string): void {
    this.#text += delta;
    schedule(this);
  }

  set(text: string): void {
    this.#text = text;
    schedule(this);
  }

  render(): void {
    this.#body.textContent = this.#text;
  }
}

type Block = MarkdownView | ThinkingView | ToolCard;

interface LiveMessage {
  element: HTMLElement;
  body: HTMLElement;
  blocks: Map<number, Block>;
  actions: HTMLElement;
}

/** What the message buttons ask of the page; user messages are counted from the newest (0). */
export interface TranscriptActions {
  fork(fromEnd: number): void;
  edit(fromEnd: number): void;
  retry(): void;
  /** Whether the view follows the newest message (false once the reader scrolls up). */
  following(follow: boolean): void;
}

export class Transcript {
  readonly element: HTMLElement;
  readonly #scroller: HTMLElement;
  #live: LiveMessage | undefined;
  readonly #tools = new Map<string, ToolCard>();

  readonly #actions: TranscriptActions;
  /** User and assistant messages in order, for Fork/Edit/Retry. */
  readonly #users: HTMLElement[] = [];
  #lastAssistant: HTMLElement | undefined;
  readonly #edit: HTMLButtonElement;
  readonly #retry: HTMLButtonElement;

  #follow = true;
  #scrollQueued = false;
  /** Messages older than those shown (a long conversation opens with its newest). */
  #earlier: readonly AgentMessage[] = [];
  /** Where new message elements go: the transcript, or a fragment of earlier ones. */
  #target: Node;
  readonly #earlierButton: HTMLButtonElement;

  constructor(element: HTMLElement, scroller: HTMLElement, actions: TranscriptActions) {
    this.element = element;
    this.#scroller = scroller;
    this.#actions = actions;
    this.#target = element;
    this.#earlierButton = h("button", { class: "earlier", attrs: { type: "button" } }, "Show earlier messages");
    this.#earlierButton.addEventListener("click", () => this.showEarlier());
    this.#edit = h("button", { class: "small", attrs: { type: "button" } }, "Edit");
    this.#retry = h("button", { class: "small", attrs: { type: "button" } }, "Retry");
    this.#edit.addEventListener("click", () => actions.edit(0));
    this.#retry.addEventListener("click", () => actions.retry());
    scroller.addEventListener(
      "scroll",
      () => {
        const follow = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
        if (follow !== this.#follow) actions.following(follow);
        this.#follow = follow;
      },
      { passive: true },
    );
    const away = (): void => {
      if (!this.#follow) return;
      this.#follow = false;
      actions.following(false);
    };
    scroller.addEventListener("wheel", (event) => event.deltaY < 0 && away(), { passive: true });
    scroller.addEventListener("keydown", (event) => ["ArrowUp", "PageUp", "Home"].includes(event.key) && away());
    element.addEventListener("click", (event) => {
      const button = event.target instanceof Element ? event.target.closest("button[data-action]") : null;
      if (!button) return;
      const message = button.closest("article");
      if (button.getAttribute("data-action") === "fork" && message instanceof HTMLElement) {
        const index = this.#users.indexOf(message);
        if (index >= 0) actions.fork(this.#users.length - 1 - index);
      }
    });
  }

  /** Scroll to the newest message and follow it again ("Jump to newest", a message sent). */
  follow(): void {
    this.#stickToBottom(true);
  }

  /** While a run goes on, Edit and Retry wait (a fork would abort it). */
  setBusy(busy: boolean): void {
    this.#edit.disabled = this.#retry.disabled = busy;
  }

  /** Edit on the newest user message, Retry on the newest reply. */
  #placeLastActions(): void {
    const user = this.#users[this.#users.length - 1];
    if (user) user.querySelector(".message-actions")?.append(this.#edit);
    else this.#edit.remove();
    if (this.#lastAssistant) this.#lastAssistant.querySelector(".message-actions")?.append(this.#retry);
    else this.#retry.remove();
  }

  /** The whole conversation again (on connect): the messages as get_messages gives them. */
  reset(all: readonly AgentMessage[]): void {
    // The system prompt pi 1.6 records in the transcript is not part of the conversation shown (as in pi's own UI).
    const messages = all.filter(isShown);
    this.element.replaceChildren();
    this.#tools.clear();
    this.#users.length = 0;
    this.#lastAssistant = undefined;
    this.#live = undefined;
    const start = windowStart(messages, messages.length);
    this.#earlier = messages.slice(0, start);
    this.#target = this.element;
    for (const message of messages.slice(start)) this.#addFinished(message);
    this.#showEarlierButton();
    this.#placeLastActions();
    this.follow();
  }

  /**
   * The next older part of a long conversation, above what is shown, the reader's place kept.
   * A conversation opens with its newest messages only, so a session of thousands opens at once.
   */
  showEarlier(): void {
    if (this.#earlier.length === 0) return;
    const start = windowStart(this.#earlier, this.#earlier.length);
    const part = this.#earlier.slice(start);
    this.#earlier = this.#earlier.slice(0, start);
    const fragment = document.createDocumentFragment();
    const users = this.#users.splice(0);
    const lastAssistant = this.#lastAssistant;
    this.#target = fragment;
    try {
      for (const message of part) this.#addFinished(message);
    } finally {
      this.#target = this.element;
    }
    this.#users.push(...users);
    this.#lastAssistant = lastAssistant;
    this.#placeLastActions();
    const before = this.#scroller.scrollHeight;
    this.#earlierButton.after(fragment);
    this.#showEarlierButton();
    this.#scroller.scrollTop += this.#scroller.scrollHeight - before;
  }

  #showEarlierButton(): void {
    if (this.#earlier.length === 0) this.#earlierButton.remove();
    else {
      this.#earlierButton.textContent = `Show earlier messages (${this.#earlier.length})`;
      this.element.prepend(this.#earlierButton);
    }
  }

  messageStart(message: MessageStartEvent["message"]): void {
    if (!isShown(message)) return;
    if (message.role === "assistant") {
      this.#live = this.#assistant();
      this.#fillAssistant(this.#live, message, false);
      return;
    }
    this.#live = undefined;
    if (message.role === "toolResult") {
      this.#toolResult(message);
      return;
    }
    this.#addFinished(message);
  }

  /** One assistant delta (`assistantMessageEvent`). */
  delta(event: {
    type: string;
    contentIndex?: number;
    delta?: string;
    id?: string;
    toolName?: string;
    toolCall?: { id: string; name: string; arguments: unknown };
    error?: AssistantMessage;
  }): void {
    const live = (this.#live ??= this.#assistant());
    const index = event.contentIndex ?? 0;
    switch (event.type) {
      case "text_start":
        this.#block(live, index, () => new MarkdownView("text"));
        break;
      case "text_delta": {
        const block = this.#block(live, index, () => new MarkdownView("text"));
        if (block instanceof MarkdownView) {
          block.append(event.delta ?? "");
          schedule(block);
        }
        break;
      }
      case "thinking_start":
        this.#block(live, index, () => new ThinkingView(true));
        break;
      case "thinking_delta": {
        const block = this.#block(live, index, () => new ThinkingView(true));
        if (block instanceof ThinkingView) block.append(event.delta ?? "");
        break;
      }
      case "thinking_end": {
        const block = live.blocks.get(index);
        if (block instanceof ThinkingView) block.element.open = false;
        break;
      }
      case "toolcall_start": {
        const card = this.#block(live, index, () => this.#toolCard(event.id ?? `call-${index}`, event.toolName ?? "tool"));
        if (card instanceof ToolCard) card.setState("running");
        break;
      }
      case "toolcall_delta": {
        const block = live.blocks.get(index);
        if (block instanceof ToolCard) block.appendArgs(event.delta ?? "");
        break;
      }
      case "toolcall_end": {
        const call = event.toolCall;
        if (!call) break;
        const block = this.#block(live, index, () => this.#toolCard(call.id, call.name));
        if (block instanceof ToolCard) block.setArgs(call.arguments);
        break;
      }
    }
    this.#stickToBottom(false);
  }

  /** The finished message: rendered from its final content (a late tab saw no start or deltas). */
  messageEnd(message: AgentMessage): void {
    if (message.role !== "assistant") return;
    const live = (this.#live ??= this.#assistant());
    this.#fillAssistant(live, message, true);
    this.#live = undefined;
    this.#placeLastActions();
    this.#stickToBottom(false);
  }

  toolStart(toolCallId: string, toolName: string, args: unknown): void {
    const card = this.#tools.get(toolCallId) ?? this.#orphanCard(toolCallId, toolName);
    card.setArgs(args);
    card.setState("running");
  }

  toolUpdate(toolCallId: string, toolName: string, partialResult: unknown): void {
    const card = this.#tools.get(toolCallId) ?? this.#orphanCard(toolCallId, toolName);
    card.setOutput(partialResult);
    this.#stickToBottom(false);
  }

  toolEnd(toolCallId: string, toolName: string, result: unknown, isError: boolean): void {
    const card = this.#tools.get(toolCallId) ?? this.#orphanCard(toolCallId, toolName);
    card.setOutput(result);
    card.setState(isError ? "error" : "done");
    this.#stickToBottom(false);
  }

  /** An error line in the conversation (model errors, extension errors). */
  error(text: string): void {
    this.element.append(h("div", { class: "error-line", attrs: { role: "alert" } }, text));
    this.#stickToBottom(false);
  }

  note(text: string): void {
    this.element.append(h("div", { class: "note-line" }, text));
    this.#stickToBottom(false);
  }

  #addFinished(message: AgentMessage): void {
    switch (message.role) {
      case "user": {
        // Its images show as images, not as "[image]".
        const text = contentText(message.content, false);
        const view = this.#newMessage("user", "You", () => text);
        const markdown = new MarkdownView("text");
        markdown.set(text, true);
        view.body.append(markdown.element, ...images(message.content));
        view.actions.append(h("button", { class: "small", attrs: { type: "button", "data-action": "fork" } }, "Fork from here"));
        this.#users.push(view.element);
        this.#placeLastActions();
        schedule(markdown);
        return;
      }
      case "assistant": {
        const view = this.#assistant();
        this.#fillAssistant(view, message, true);
        return;
      }
      case "toolResult":
        this.#toolResult(message);
        return;
      case "system":
        return;
      case "bashExecution": {
        const view = this.#newMessage("bash", "Shell");
        view.body.append(h("pre", { class: "tool-args" }, `$ ${message.command}`), h("pre", { class: "tool-output" }, message.output));
        return;
      }
      default: {
        const view = this.#newMessage("other", message.role);
        const text = "content" in message ? contentText(message.content) : "summary" in message ? String(message.summary) : "";
        view.body.append(h("div", { class: "plain" }, text));
      }
    }
  }

  #fillAssistant(live: LiveMessage, message: AssistantMessage | StreamingAssistantMessage, final: boolean): void {
    message.content.forEach((block, index) => {
      if (block.type === "text") {
        const view = this.#block(live, index, () => new MarkdownView("text"));
        if (view instanceof MarkdownView && (final || view.text !== block.text)) {
          view.set(block.text, final);
          schedule(view);
        }
      } else if (block.type === "thinking") {
        const view = this.#block(live, index, () => new ThinkingView(!final));
        if (view instanceof ThinkingView) {
          view.set(block.thinking);
          if (final) view.element.open = false;
        }
      } else {
        const view = this.#block(live, index, () => this.#toolCard(block.id, block.name));
        if (view instanceof ToolCard) view.setArgs(block.arguments);
      }
    });
    if (final && (message.stopReason === "error" || message.stopReason === "aborted") && !live.element.querySelector(".error-line")) {
      const text =
        message.stopReason === "aborted"
          ? `Aborted${message.errorMessage ? `: ${message.errorMessage}` : ""}`
          : `Model error: ${message.errorMessage ?? "unknown error"}`;
      live.body.append(h("div", { class: "error-line", attrs: { role: "alert" } }, text));
    }
  }

  #toolResult(message: ToolResultMessage): void {
    const card = this.#tools.get(message.toolCallId) ?? this.#orphanCard(message.toolCallId, message.toolName);
    card.setOutput({ content: message.content });
    card.setState(message.isError ? "error" : "done");
  }

  #block(live: LiveMessage, index: number, create: () => Block): Block {
    let block = live.blocks.get(index);
    if (!block) {
      block = create();
      live.blocks.set(index, block);
      // Blocks stay in content order even if they are first seen out of order.
      const after = [...live.blocks.entries()].filter(([i]) => i > index).sort(([a], [b]) => a - b)[0];
      live.body.insertBefore(block.element, after ? after[1].element : null);
    }
    return block;
  }

  #toolCard(id: string, name: string): ToolCard {
    const existing = this.#tools.get(id);
    if (existing) return existing;
    const card = new ToolCard(name);
    this.#tools.set(id, card);
    return card;
  }

  #orphanCard(id: string, name: string): ToolCard {
    const card = this.#toolCard(id, name);
    if (!card.element.isConnected) this.#newMessage("tool", "Tool").body.append(card.element);
    return card;
  }

  #assistant(): LiveMessage {
    const blocks = new Map<number, Block>();
    const view = this.#newMessage("assistant", "Assistant", () =>
      [...blocks.entries()]
        .sort(([a], [b]) => a - b)
        .flatMap(([, block]) => (block instanceof MarkdownView ? [block.text] : []))
        .join("\n\n"),
    );
    this.#lastAssistant = view.element;
    return { ...view, blocks };
  }

  #newMessage(kind: string, label: string, text?: () => string): LiveMessage {
    const body = h("div", { class: "message-body" });
    const actions = h("div", { class: "message-actions" });
    if (text) actions.append(copyButton(text, "Copy"));
    const element = h(
      "article",
      { class: `message message-${kind}`, attrs: { "aria-label": label } },
      h("div", { class: "message-head" }, h("div", { class: "message-role" }, label), actions),
      body,
    );
    this.#target.appendChild(element);
    return { element, body, blocks: new Map(), actions };
  }

  /**
   * Follow the stream while the reader is at the bottom; leave them alone once they scroll up.
   * Whether they are is learnt from scroll events, so no delta reads layout.
   */
  #stickToBottom(force: boolean): void {
    if (force) {
      this.#follow = true;
      this.#actions.following(true);
    }
    if (!this.#follow || this.#scrollQueued) return;
    this.#scrollQueued = true;
    afterRender(() => {
      this.#scrollQueued = false;
      // The reader may have scrolled up since this was queued: leave them there.
      if (this.#follow) this.#scroller.scrollTop = this.#scroller.scrollHeight;
    });
  }
}

function contentText(content: unknown, imageMarks = true): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: unknown) => {
      if (typeof block !== "object" || block === null) return "";
      const b = block as { type?: unknown; text?: unknown };
      return b.type === "text" && typeof b.text === "string" ? b.text : b.type === "image" && imageMarks ? "[image]" : "";
    })
    .join("");
}

/** A tool result as text: its content's text blocks, or its JSON. */
function resultText(result: unknown): string {
  if (typeof result === "string") return result;
  if (typeof result === "object" && result !== null && "content" in result) {
    const text = contentText((result as { content: unknown }).content);
    if (text !== "") return text;
  }
  return result === undefined ? "" : formatJson(result);
}

function formatJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? "";
  } catch {
    return String(value);
  }
}

/** A message's images, shown from their data (base64 only: nothing is fetched). */
function images(content: unknown): HTMLElement[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((block: unknown) => {
    if (typeof block !== "object" || block === null) return [];
    const b = block as { type?: unknown; data?: unknown; mimeType?: unknown };
    if (b.type !== "image" || typeof b.data !== "string" || typeof b.mimeType !== "string" || !/^image\/(png|jpeg|gif|webp)$/.test(b.mimeType)) return [];
    return [h("img", { class: "message-image", attrs: { src: `data:${b.mimeType};base64,${b.data}`, alt: "Attached image" } })];
  });
}

/** The edit tool's arguments as a diff: the file, then each replacement's old lines (-) and new lines (+). */
function editDiff(args: unknown): HTMLElement[] | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const a = args as { path?: unknown; edits?: unknown; oldText?: unknown; newText?: unknown };
  const edits = Array.isArray(a.edits) ? a.edits : a.oldText !== undefined ? [{ oldText: a.oldText, newText: a.newText }] : undefined;
  if (!edits || typeof a.path !== "string") return undefined;
  const lines: HTMLElement[] = [h("div", { class: "diff-file" }, a.path)];
  for (const edit of edits) {
    if (typeof edit !== "object" || edit === null) return undefined;
    const { oldText, newText } = edit as { oldText?: unknown; newText?: unknown };
    if (typeof oldText !== "string" || typeof newText !== "string") return undefined;
    lines.push(h("div", { class: "diff-hunk" }, "@@"));
    for (const line of oldText.split("\n")) lines.push(h("div", { class: "diff-del" }, `- ${line}`));
    for (const line of newText.split("\n")) lines.push(h("div", { class: "diff-add" }, `+ ${line}`));
  }
  return lines;
}

/** Whether a message is part of the conversation shown: pi 1.6's recorded system prompt is not (its own UI skips it too). */
function isShown(message: AgentMessage): boolean {
  return message.role !== "system";
}

/** Messages shown at a time from the end of a long conversation (more on request). */
const WINDOW = 100;

/** Where the part of `messages` before `end` to show starts: about WINDOW back, at a user message (tool results stay with their calls). */
function windowStart(messages: readonly AgentMessage[], end: number): number {
  if (end <= WINDOW) return 0;
  let start = end - WINDOW;
  while (start > 0 && messages[start]?.role !== "user") start--;
  return start;
}
