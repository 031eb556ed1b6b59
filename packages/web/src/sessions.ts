/**
 * The "Sessions" navigation: this folder's stored sessions (list_sessions), newest first, with a
 * filter; "New session"; choosing one switches to it; the current one can be renamed. What the
 * server answers decides: a switch an extension cancels changes nothing here.
 */
import type { ListedSession } from "@parley/protocol";
import { h } from "./dom.js";

export interface SessionActions {
  open(path: string): void;
  create(): void;
  rename(name: string): void;
}

export class SessionList {
  readonly element: HTMLElement;
  readonly #list: HTMLElement;
  readonly #filter: HTMLInputElement;
  readonly #name: HTMLInputElement;
  readonly #rename: HTMLFormElement;
  readonly #empty: HTMLElement;
  #sessions: readonly ListedSession[] = [];
  #current: string | undefined;

  constructor(actions: SessionActions, extra: HTMLElement) {
    this.#filter = h("input", { attrs: { type: "search", "aria-label": "Filter sessions", placeholder: "Filter sessions" } });
    this.#list = h("ul", { class: "session-list" });
    this.#empty = h("p", { class: "hint" }, "No stored sessions yet.");
    const newButton = h("button", { class: "primary new-session", attrs: { type: "button" } }, "New session");
    this.#name = h("input", { attrs: { type: "text", "aria-label": "Session name", placeholder: "Name this session" } });
    this.#rename = h("form", { class: "rename" }, this.#name, h("button", { attrs: { type: "submit" } }, "Rename"));
    this.element = h(
      "nav",
      { class: "sessions", attrs: { "aria-label": "Sessions", id: "sessions" } },
      h("div", { class: "sessions-head" }, h("h2", null, "Sessions"), newButton),
      this.#filter,
      this.#list,
      this.#empty,
      extra,
      this.#rename,
    );
    newButton.addEventListener("click", () => actions.create());
    this.#filter.addEventListener("input", () => this.#render());
    this.#rename.addEventListener("submit", (event) => {
      event.preventDefault();
      const name = this.#name.value.trim();
      if (name !== "") actions.rename(name);
    });
    this.#list.addEventListener("click", (event) => {
      const button = event.target instanceof Element ? event.target.closest("button[data-path]") : null;
      const path = button?.getAttribute("data-path");
      if (path && path !== this.#current) actions.open(path);
    });
  }

  update(sessions: readonly ListedSession[], current: string | undefined, name: string | undefined): void {
    this.#sessions = sessions;
    this.#current = current;
    if (document.activeElement !== this.#name) this.#name.value = name ?? "";
    this.#render();
  }

  #render(): void {
    const needle = this.#filter.value.trim().toLowerCase();
    const shown = this.#sessions.filter((s) => needle === "" || titleOf(s).toLowerCase().includes(needle));
    this.#list.replaceChildren(
      ...shown.map((s) => {
        const current = s.path === this.#current;
        const button = h(
          "button",
          { class: "session", attrs: { type: "button", "data-path": s.path, ...(current ? { "aria-current": "true" } : {}) } },
          h("span", { class: "session-title" }, titleOf(s)),
          h("span", { class: "session-time" }, h("time", { attrs: { datetime: s.updated } }, when(s.updated)), ` · ${s.messageCount} messages`),
        );
        return h("li", null, button);
      }),
    );
    this.#empty.hidden = shown.length > 0;
    this.#empty.textContent = this.#sessions.length === 0 ? "No stored sessions yet." : "No session matches.";
  }
}

export function titleOf(session: ListedSession): string {
  return session.name ?? session.firstMessage ?? "(empty session)";
}

/** A short local time: today's as hh:mm, older ones as a date. */
function when(iso: string): string {
  const date = new Date(iso);
  const today = new Date();
  return date.toDateString() === today.toDateString()
    ? date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })
    : date.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}
