/**
 * Extension dialogs, inline under the conversation (never over it): all pending ones visible,
 * oldest first, each a real form with a live countdown when it has a timeout. A dialog that
 * ends elsewhere (timeout, abort, answered in another tab, shutdown) closes with a short note.
 *
 * Accessible by construction: each dialog is role=dialog named by its title; options, Yes/No,
 * Submit and Cancel are buttons named by their text; input is a textbox, editor a multi-line one.
 * Keys: arrows and Enter in a select, Esc cancels, Enter submits an input, Ctrl+Enter the editor.
 */
import type { DialogRequest } from "@parley/protocol";
import type { DialogResponseBody } from "@parley/protocol/dialog-answers";
import { h, uid } from "./dom.js";

/** The protocol's answer shapes (`@parley/protocol/dialog-answers`). */
export type DialogAnswer = DialogResponseBody;

interface OpenDialog {
  request: DialogRequest;
  element: HTMLElement;
  /** performance.now() at which the timeout ends. */
  deadline: number | undefined;
  countdown: HTMLElement | undefined;
  error: HTMLElement;
}

const NOTE_MS = 5000;

export class DialogList {
  readonly #element: HTMLElement;
  /** Sends an answer; false when it could not go out (not connected). */
  readonly #send: (id: string, answer: DialogAnswer) => boolean;
  readonly #open = new Map<string, OpenDialog>();
  /** Dialogs this tab answered a moment ago, in case the agent refuses the answer. */
  readonly #recent = new Map<string, { request: DialogRequest; deadline: number | undefined; note: HTMLElement }>();
  #ticker: number | undefined;

  constructor(element: HTMLElement, send: (id: string, answer: DialogAnswer) => boolean) {
    this.#element = element;
    this.#send = send;
  }

  get count(): number {
    return this.#open.size;
  }

  /** Every pending dialog again, oldest first (on connect); ones no longer pending close silently. */
  reset(pending: readonly { request: DialogRequest; remainingMs?: number }[]): void {
    const keep = new Set(pending.map((p) => p.request.id));
    for (const [id, dialog] of this.#open) {
      if (!keep.has(id)) {
        dialog.element.remove();
        this.#open.delete(id);
      }
    }
    for (const { request, remainingMs } of pending) this.show(request, remainingMs);
    this.#hideIfEmpty();
  }

  /** A dialog request; `remainingMs` when it has been pending for a while (get_ui_state). */
  show(request: DialogRequest, remainingMs?: number): void {
    const existing = this.#open.get(request.id);
    const left = remainingMs ?? request.timeout;
    if (existing) {
      if (left !== undefined) existing.deadline = performance.now() + left;
      existing.error.hidden = true;
      return;
    }
    const dialog = this.#build(request, left);
    this.#open.set(request.id, dialog);
    this.#element.append(dialog.element);
    this.#element.hidden = false;
    this.#tick();
    const active = document.activeElement;
    const promptBusy = active instanceof HTMLTextAreaElement && active.id === "prompt-input" && active.value !== "";
    const inOtherDialog = active instanceof HTMLElement && active.closest(".dialog") !== null;
    if (!promptBusy && !inOtherDialog) focusFirst(dialog.element);
  }

  /** The agent ended the dialog (extension_ui_dismissed). */
  dismissed(id: string, reason: string): void {
    const dialog = this.#open.get(id);
    if (!dialog) return;
    const why =
      reason === "timeout"
        ? "timed out"
        : reason === "aborted"
          ? "was withdrawn by the extension"
          : reason === "answered"
            ? "was answered in another tab"
            : reason === "shutdown"
              ? "closed: the agent is shutting down"
              : `was dismissed (${reason})`;
    this.#close(dialog, `“${dialog.request.title}” ${why}`);
  }

  /** The agent refused an answer of ours (extension_ui_error). */
  refused(id: string, error: string, stillPending: boolean): void {
    const recent = this.#recent.get(id);
    if (!recent) return;
    this.#recent.delete(id);
    if (!stillPending) {
      // Another tab's answer (or the timeout) got there first: this tab's "answered" note was wrong.
      const title = recent.request.title;
      const note = /already answered/.test(error)
        ? `“${title}” was answered in another tab first; this answer was not used`
        : `“${title}” had already ended; this answer was not used`;
      if (recent.note.isConnected) recent.note.textContent = note;
      else this.#note(note);
      return;
    }
    // The answer did not fit (the dialog still waits): show it again, with the reason.
    const left = recent.deadline === undefined ? undefined : Math.max(0, recent.deadline - performance.now());
    this.show(recent.request, left);
    const dialog = this.#open.get(id);
    if (dialog) {
      dialog.error.textContent = error;
      dialog.error.hidden = false;
    }
  }

  #answer(dialog: OpenDialog, answer: DialogAnswer): void {
    if (!this.#open.has(dialog.request.id)) return;
    if (!this.#send(dialog.request.id, answer)) {
      // Closing it now would lose the answer: it stays open until it can be sent.
      dialog.error.textContent = "Not connected to parley: the answer was not sent. Answer again once reconnected.";
      dialog.error.hidden = false;
      return;
    }
    // Closed at once; a refusal (another tab first, or a refused answer the form cannot produce) corrects or reopens it.
    const note = this.#close(dialog, `“${dialog.request.title}” ${"cancelled" in answer ? "cancelled" : "answered"}`);
    this.#recent.set(dialog.request.id, { request: dialog.request, deadline: dialog.deadline, note });
    window.setTimeout(() => this.#recent.delete(dialog.request.id), 30_000);
  }

  /** A short note in the dialogs' place, removed after a while (the section hides once empty). */
  #note(text: string, replacing?: HTMLElement): HTMLElement {
    const line = h("div", { class: "dialog-note" }, text);
    if (replacing) replacing.replaceWith(line);
    else this.#element.append(line);
    this.#element.hidden = false;
    this.#collapseNotes();
    window.setTimeout(() => {
      line.remove();
      this.#collapseNotes();
      this.#hideIfEmpty();
    }, NOTE_MS);
    return line;
  }

  /** Notes do not pile up: the newest shows, saying how many earlier ones it stands for. */
  #collapseNotes(): void {
    const notes = [...this.#element.querySelectorAll<HTMLElement>(".dialog-note")];
    notes.forEach((note, index) => {
      const newest = index === notes.length - 1;
      note.hidden = !newest;
      if (newest && notes.length > 1) note.dataset["earlier"] = ` (+${notes.length - 1} earlier)`;
      else delete note.dataset["earlier"];
    });
  }

  #hideIfEmpty(): void {
    if (this.#open.size === 0 && this.#element.childElementCount === 0) this.#element.hidden = true;
  }

  #close(dialog: OpenDialog, note: string): HTMLElement {
    this.#open.delete(dialog.request.id);
    const hadFocus = dialog.element.contains(document.activeElement);
    const line = this.#note(note, dialog.element);
    if (hadFocus) {
      const next = this.#open.values().next().value;
      if (next) focusFirst(next.element);
      else document.getElementById("prompt-input")?.focus();
    }
    return line;
  }

  /** One timer for every countdown, running only while some dialog has a timeout. */
  #tick(): void {
    let any = false;
    const now = performance.now();
    for (const dialog of this.#open.values()) {
      if (dialog.deadline === undefined || !dialog.countdown) continue;
      any = true;
      const seconds = Math.max(0, Math.ceil((dialog.deadline - now) / 1000));
      const text = `${seconds} s left`;
      if (dialog.countdown.textContent !== text) dialog.countdown.textContent = text;
    }
    if (any && this.#ticker === undefined) {
      this.#ticker = window.setInterval(() => this.#tick(), 250);
    } else if (!any && this.#ticker !== undefined) {
      window.clearInterval(this.#ticker);
      this.#ticker = undefined;
    }
  }

  #build(request: DialogRequest, left: number | undefined): OpenDialog {
    const titleId = uid("dialog-title");
    const countdown = left !== undefined ? h("span", { class: "countdown", attrs: { "aria-label": "time left" } }) : undefined;
    const error = h("p", { class: "dialog-error", attrs: { role: "alert" } });
    error.hidden = true;
    const element = h(
      "section",
      { class: `dialog dialog-${request.method}`, attrs: { role: "dialog", "aria-labelledby": titleId, "data-dialog-id": request.id } },
      h("header", { class: "dialog-head" }, h("h2", { attrs: { id: titleId } }, request.title), countdown),
    );
    const dialog: OpenDialog = { request, element, deadline: left !== undefined ? performance.now() + left : undefined, countdown, error };
    const cancel = (): void => this.#answer(dialog, { cancelled: true });
    const cancelButton = (): HTMLButtonElement => button("Cancel", cancel, "secondary");

    switch (request.method) {
      case "select": {
        const list = h("div", { class: "options", attrs: { role: "group", "aria-label": "Options" } });
        const buttons = request.options.map((option) => button(option, () => this.#answer(dialog, { value: option }), "option"));
        list.append(...buttons);
        list.addEventListener("keydown", (event) => {
          const index = buttons.indexOf(document.activeElement as HTMLButtonElement);
          if (index < 0) return;
          const step = event.key === "ArrowDown" || event.key === "ArrowRight" ? 1 : event.key === "ArrowUp" || event.key === "ArrowLeft" ? -1 : 0;
          if (step === 0) return;
          event.preventDefault();
          buttons[(index + step + buttons.length) % buttons.length]?.focus();
        });
        element.append(list, h("div", { class: "actions" }, cancelButton()));
        break;
      }
      case "confirm":
        element.append(
          h("p", { class: "dialog-message" }, request.message),
          h(
            "div",
            { class: "actions" },
            button("Yes", () => this.#answer(dialog, { confirmed: true }), "primary"),
            button("No", () => this.#answer(dialog, { confirmed: false })),
          ),
        );
        break;
      case "input": {
        const input = h("input", { attrs: { type: "text", "aria-labelledby": titleId } });
        if (request.placeholder !== undefined) input.placeholder = request.placeholder;
        const submit = (): void => this.#answer(dialog, { value: input.value });
        input.addEventListener("keydown", (event) => {
          if (event.key === "Enter" && !event.isComposing) {
            event.preventDefault();
            submit();
          }
        });
        element.append(input, h("div", { class: "actions" }, button("Submit", submit, "primary"), cancelButton()));
        break;
      }
      case "editor": {
        const area = h("textarea", { attrs: { "aria-labelledby": titleId, rows: "6" } });
        area.value = request.prefill ?? "";
        const submit = (): void => this.#answer(dialog, { value: area.value });
        area.addEventListener("keydown", (event) => {
          if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            submit();
          }
        });
        element.append(
          area,
          h("p", { class: "hint" }, "Ctrl+Enter submits, Esc cancels"),
          h("div", { class: "actions" }, button("Submit", submit, "primary"), cancelButton()),
        );
        break;
      }
    }
    element.append(error);
    element.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        cancel();
      }
    });
    return dialog;
  }
}

function button(label: string, onClick: () => void, kind = ""): HTMLButtonElement {
  const b = h("button", { class: kind, attrs: { type: "button" } }, label);
  b.addEventListener("click", onClick);
  return b;
}

function focusFirst(root: HTMLElement): void {
  root.querySelector<HTMLElement>("input, textarea, button")?.focus();
}
