/**
 * The conversation: user and assistant messages (markdown), thinking (collapsible), tool calls
 * with their arguments and live output, errors. Deltas touch only the block they extend, and
 * each block renders at most once per animation frame.
 */
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "@parley/protocol";
import { h } from "./dom.js";
import { afterRender, schedule, type FrameView } from "./frame.js";
import { MarkdownView } from "./markdown.js";

/** A tool call's card: name, arguments, output; filled from the stream or from history. */
class ToolCard implements FrameView {
  readonly element: HTMLElement;
  readonly #args: HTMLElement;
  readonly #output: HTMLElement;
  readonly #state: HTMLElement;
  #argsText = "";
  #outputText = "";

  constructor(name: string) {
    this.#state = h("span", { class: "tool-state" }, "");
    this.#args = h("pre", { class: "tool-args" });
    this.#output = h("pre", { class: "tool-output" });
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
    this.#argsText = formatJson(args);
    schedule(this);
  }

  setState(state: "running" | "done" | "error"): void {
    this.#state.textContent = state === "running" ? "running…" : state === "error" ? "failed" : "done";
    this.element.classList.toggle("tool-error", state === "error");
  }

  setOutput(result: unknown): void {
    this.#outputText = resultText(result);
    schedule(this);
  }

  render(): void {
    this.#args.textContent = this.#argsText;
    this.#output.textContent = this.#outputText;
    this.#output.hidden = this.#outputText === "";
  }
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
}

export class Transcript {
  readonly element: HTMLElement;
  readonly #scroller: HTMLElement;
  #live: LiveMessage | undefined;
  readonly #tools = new Map<string, ToolCard>();

  #follow = true;
  #scrollQueued = false;

  constructor(element: HTMLElement, scroller: HTMLElement) {
    this.element = element;
    this.#scroller = scroller;
    scroller.addEventListener(
      "scroll",
      () => {
        this.#follow = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
      },
      { passive: true },
    );
  }

  /** The whole conversation again (on connect): the messages as get_messages gives them. */
  reset(messages: readonly AgentMessage[]): void {
    this.element.replaceChildren();
    this.#tools.clear();
    this.#live = undefined;
    for (const message of messages) this.#addFinished(message);
    this.#stickToBottom(true);
  }

  messageStart(message: AgentMessage): void {
    if (message.role === "assistant") {
      this.#live = this.#newMessage("assistant", "Assistant");
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
    const live = (this.#live ??= this.#newMessage("assistant", "Assistant"));
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
    const live = (this.#live ??= this.#newMessage("assistant", "Assistant"));
    this.#fillAssistant(live, message, true);
    this.#live = undefined;
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
        const view = this.#newMessage("user", "You");
        const markdown = new MarkdownView("text");
        markdown.set(contentText(message.content), true);
        view.body.append(markdown.element);
        schedule(markdown);
        return;
      }
      case "assistant": {
        const view = this.#newMessage("assistant", "Assistant");
        this.#fillAssistant(view, message, true);
        return;
      }
      case "toolResult":
        this.#toolResult(message);
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

  #fillAssistant(live: LiveMessage, message: AssistantMessage, final: boolean): void {
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

  #newMessage(kind: string, label: string): LiveMessage {
    const body = h("div", { class: "message-body" });
    const element = h("article", { class: `message message-${kind}`, attrs: { "aria-label": label } }, h("div", { class: "message-role" }, label), body);
    this.element.append(element);
    return { element, body, blocks: new Map() };
  }

  /**
   * Follow the stream while the reader is at the bottom; leave them alone once they scroll up.
   * Whether they are is learnt from scroll events, so no delta reads layout.
   */
  #stickToBottom(force: boolean): void {
    if (force) this.#follow = true;
    if (!this.#follow || this.#scrollQueued) return;
    this.#scrollQueued = true;
    afterRender(() => {
      this.#scrollQueued = false;
      this.#scroller.scrollTop = this.#scroller.scrollHeight;
    });
  }
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: unknown) => {
      if (typeof block !== "object" || block === null) return "";
      const b = block as { type?: unknown; text?: unknown };
      return b.type === "text" && typeof b.text === "string" ? b.text : b.type === "image" ? "[image]" : "";
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
