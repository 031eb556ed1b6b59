/**
 * What extensions set around the conversation: notifications (toasts by type), statuses (the
 * status bar), widgets (above or below the prompt box by placement) and the title. All text.
 */
import type { FireAndForgetRequest, UiState } from "@parley/protocol";
import { applyUiRecord, emptyUiState } from "@parley/protocol/ui-state";
import { h } from "./dom.js";
import { schedule, type FrameView } from "./frame.js";

export interface ChromeElements {
  statuses: HTMLElement;
  above: HTMLElement;
  below: HTMLElement;
  toasts: HTMLElement;
  title: HTMLElement;
}

const TOAST_MS = { info: 6000, warning: 8000, error: 12000 } as const;

export class Chrome implements FrameView {
  readonly #el: ChromeElements;
  #state: UiState = emptyUiState();

  constructor(elements: ChromeElements) {
    this.#el = elements;
  }

  /** The whole state again (get_ui_state on connect); past notifications are not shown again. */
  reset(state: UiState): void {
    this.#state = { ...state, notifications: [] };
    this.#setTitle(state.title);
    schedule(this);
  }

  /** A fire-and-forget request other than set_editor_text. */
  apply(record: FireAndForgetRequest): void {
    if (record.method === "notify") {
      this.toast(record.message, record.notifyType ?? "info");
      return;
    }
    if (record.method === "setTitle") this.#setTitle(record.title);
    if (applyUiRecord(this.#state, record)) schedule(this);
  }

  toast(message: string, type: "info" | "warning" | "error"): void {
    const close = h("button", { class: "toast-close", attrs: { type: "button", "aria-label": "Dismiss notification" } }, "×");
    const toast = h(
      "div",
      { class: `toast toast-${type}`, attrs: { role: type === "error" ? "alert" : "status" } },
      h("span", { class: "toast-text", attrs: { tabindex: "0" } }, message),
      close,
    );
    const remove = (): void => toast.remove();
    close.addEventListener("click", remove);
    window.setTimeout(remove, TOAST_MS[type]);
    this.#el.toasts.append(toast);
    // Bounded: the oldest go first.
    while (this.#el.toasts.childElementCount > 6) this.#el.toasts.firstElementChild?.remove();
  }

  render(): void {
    const { statuses, widgets } = this.#state;
    this.#el.statuses.replaceChildren(
      ...Object.entries(statuses).map(([key, text]) => h("span", { class: "status", attrs: { "data-key": key, title: text } }, text)),
    );
    const above: HTMLElement[] = [];
    const below: HTMLElement[] = [];
    for (const [key, widget] of Object.entries(widgets)) {
      const element = h("div", { class: "widget", attrs: { "data-key": key } }, ...widget.lines.map((line) => h("div", { class: "widget-line" }, line)));
      (widget.placement === "belowEditor" ? below : above).push(element);
    }
    this.#el.above.replaceChildren(...above);
    this.#el.below.replaceChildren(...below);
  }

  #setTitle(title: string | undefined): void {
    const text = title ?? "parley";
    document.title = text;
    this.#el.title.textContent = text;
  }
}
