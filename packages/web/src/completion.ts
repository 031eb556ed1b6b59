/**
 * Completion in the prompt box: `/` at its start lists the commands (get_commands, with their
 * descriptions) in a listbox "Commands"; `@` starting a word lists files under the working folder
 * (list_files) in a listbox "Files". The box stays a textbox: it points at the active option
 * (aria-activedescendant); arrows move, Enter or Tab take it, Esc closes.
 */
import { h, uid } from "./dom.js";

export interface CompletionItem {
  value: string;
  description?: string | undefined;
}

export interface CompletionSources {
  commands(): readonly CompletionItem[];
  files(query: string): Promise<readonly CompletionItem[]>;
}

interface Open {
  kind: "Commands" | "Files";
  /** Where the replaced text starts (the `/` or `@`) and ends (the caret). */
  start: number;
  end: number;
  items: readonly CompletionItem[];
  active: number;
}

export class Completion {
  readonly element: HTMLUListElement;
  readonly #input: HTMLTextAreaElement;
  readonly #sources: CompletionSources;
  #open: Open | undefined;
  /** Answers to file queries arrive out of order: only the latest is shown. */
  #asked = 0;

  constructor(input: HTMLTextAreaElement, sources: CompletionSources) {
    this.#input = input;
    this.#sources = sources;
    this.element = h("ul", { class: "completion", attrs: { role: "listbox", id: uid("completion") } });
    this.element.hidden = true;
    input.setAttribute("aria-autocomplete", "list");
    input.addEventListener("input", () => void this.#update());
    input.addEventListener("blur", () => this.close());
    input.addEventListener("keydown", (event) => this.#key(event));
    // Chosen with the pointer: mousedown would blur the box first.
    this.element.addEventListener("mousedown", (event) => {
      event.preventDefault();
      const option = event.target instanceof Element ? event.target.closest("[role=option]") : null;
      const index = option ? Number(option.getAttribute("data-index")) : -1;
      if (this.#open && index >= 0) this.#accept(index);
    });
  }

  get isOpen(): boolean {
    return this.#open !== undefined;
  }

  close(): void {
    this.#open = undefined;
    this.element.hidden = true;
    this.element.replaceChildren();
    this.#input.removeAttribute("aria-controls");
    this.#input.removeAttribute("aria-activedescendant");
  }

  async #update(): Promise<void> {
    const caret = this.#input.selectionStart;
    const before = this.#input.value.slice(0, caret);
    const command = /^\/(\S*)$/.exec(before);
    if (command) {
      const needle = (command[1] ?? "").toLowerCase();
      const items = this.#sources.commands().filter((c) => c.value.toLowerCase().startsWith(needle));
      this.#show({ kind: "Commands", start: 0, end: caret, items: items.slice(0, 50), active: 0 });
      return;
    }
    const file = /(^|\s)@(\S*)$/.exec(before);
    if (file) {
      const start = caret - (file[2] ?? "").length - 1;
      const asked = ++this.#asked;
      const items = await this.#sources.files(file[2] ?? "");
      if (asked !== this.#asked || this.#input.selectionStart !== caret) return;
      this.#show({ kind: "Files", start, end: caret, items, active: 0 });
      return;
    }
    this.close();
  }

  #show(open: Open): void {
    if (open.items.length === 0) {
      this.close();
      return;
    }
    this.#open = open;
    this.element.setAttribute("aria-label", open.kind);
    this.element.replaceChildren(
      ...open.items.map((item, index) =>
        h(
          "li",
          { class: "option", attrs: { role: "option", id: `${this.element.id}-${index}`, "data-index": String(index), "aria-selected": "false" } },
          h("span", { class: "option-value" }, open.kind === "Commands" ? `/${item.value}` : item.value),
          item.description ? h("span", { class: "option-description" }, item.description) : null,
        ),
      ),
    );
    this.element.hidden = false;
    this.#input.setAttribute("aria-controls", this.element.id);
    this.#activate(0);
  }

  #activate(index: number): void {
    if (!this.#open) return;
    const count = this.#open.items.length;
    this.#open.active = (index + count) % count;
    for (const option of this.element.children) option.setAttribute("aria-selected", "false");
    const active = this.element.children[this.#open.active];
    active?.setAttribute("aria-selected", "true");
    active?.scrollIntoView({ block: "nearest" });
    this.#input.setAttribute("aria-activedescendant", `${this.element.id}-${this.#open.active}`);
  }

  #key(event: KeyboardEvent): void {
    if (!this.#open || event.isComposing) return;
    const handled = (): void => {
      event.preventDefault();
      event.stopImmediatePropagation();
    };
    if (event.key === "ArrowDown") {
      handled();
      this.#activate(this.#open.active + 1);
    } else if (event.key === "ArrowUp") {
      handled();
      this.#activate(this.#open.active - 1);
    } else if (event.key === "Enter" && this.#typedInFull()) {
      // Already complete: Enter sends the message as typed.
      this.close();
    } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
      handled();
      this.#accept(this.#open.active);
    } else if (event.key === "Escape") {
      handled();
      this.close();
    }
  }

  /** The active option is exactly what is typed (nothing left to complete). */
  #typedInFull(): boolean {
    const open = this.#open;
    const item = open?.items[open.active];
    if (!open || !item) return false;
    const typed = this.#input.value.slice(open.start + 1, open.end);
    return typed === item.value;
  }

  #accept(index: number): void {
    const open = this.#open;
    const item = open?.items[index];
    if (!open || !item) return;
    const text = open.kind === "Commands" ? `/${item.value} ` : `@${item.value}${item.value.endsWith("/") ? "" : " "}`;
    const value = this.#input.value;
    this.#input.value = value.slice(0, open.start) + text + value.slice(open.end);
    const caret = open.start + text.length;
    this.#input.setSelectionRange(caret, caret);
    this.close();
    this.#input.focus();
    // A folder chosen: list what is in it.
    if (open.kind === "Files" && item.value.endsWith("/")) void this.#update();
  }
}
