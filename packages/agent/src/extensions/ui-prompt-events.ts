/**
 * The newest pi's ui_prompt_start / ui_prompt_end: extensions hear when a dialog (select, confirm,
 * input, editor, custom) opens and when it is answered. Only the outermost of nested dialogs is
 * announced, and handlers run after the call returns (a microtask), as in pi.
 */
import type { ExtensionUIContext, UIPromptEndEvent, UIPromptKind, UIPromptStartEvent } from "./types.js";

type DialogMethods = Pick<ExtensionUIContext, "select" | "confirm" | "input" | "editor" | "custom">;

export class UiPromptEvents {
  #depth = 0;
  #active: { kind: UIPromptKind; title?: string } | undefined;
  readonly #emit: (event: UIPromptStartEvent | UIPromptEndEvent) => void;

  constructor(emit: (event: UIPromptStartEvent | UIPromptEndEvent) => void) {
    this.#emit = emit;
  }

  /** `ui` with its dialogs announced. */
  wrap(ui: ExtensionUIContext): ExtensionUIContext {
    const dialogs: DialogMethods = {
      select: (title, options, opts) => this.#run("select", title, () => ui.select(title, options, opts)),
      confirm: (title, message, opts) => this.#run("confirm", title, () => ui.confirm(title, message, opts)),
      input: (title, placeholder, opts) => this.#run("input", title, () => ui.input(title, placeholder, opts)),
      editor: (title, prefill, opts) => this.#run("editor", title, () => ui.editor(title, prefill, opts)),
      custom: <T>(factory: unknown, options?: unknown) => this.#run("custom", undefined, () => ui.custom<T>(factory, options)),
    };
    return { ...ui, ...dialogs };
  }

  #run<T>(kind: UIPromptKind, title: unknown, open: () => Promise<T>): Promise<T> {
    if (this.#depth++ === 0) {
      this.#active = { kind, ...(title ? { title: String(title) } : {}) };
      this.#announce({ type: "ui_prompt_start", reason: "ui_prompt", ...this.#active });
    }
    const finish = (): void => {
      if (--this.#depth > 0) return;
      this.#depth = 0;
      const prompt = this.#active ?? { kind };
      this.#active = undefined;
      this.#announce({ type: "ui_prompt_end", reason: "ui_prompt", ...prompt });
    };
    try {
      return open().finally(finish);
    } catch (error) {
      finish();
      throw error;
    }
  }

  #announce(event: UIPromptStartEvent | UIPromptEndEvent): void {
    queueMicrotask(() => this.#emit(event));
  }
}
