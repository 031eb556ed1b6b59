/**
 * pi's TUI component classes. The ones extensions subclass or instantiate in
 * their `ctx.ui.custom()` factories are real (built on @mariozechner/pi-tui, so
 * `class X extends CustomEditor` works); parley never renders them. Components
 * that only make sense inside pi's interactive mode are throwing stand-ins.
 */
import { Container, Editor, type EditorOptions, type EditorTheme, Loader, type TUI } from "@earendil-works/pi-tui";
import { unavailableClass } from "./unavailable.js";

type AppKeybinding = string;

interface KeybindingMatcher {
  matches(data: string, keybinding: never): boolean;
}

/** The editor pi hands to extensions: pi-tui's Editor plus app-action hooks. */
export class CustomEditor extends Editor {
  private readonly appKeybindings: KeybindingMatcher | undefined;
  actionHandlers = new Map<AppKeybinding, () => void>();
  onEscape?: () => void;
  onCtrlD?: () => void;
  onPasteImage?: () => void;
  /** Handler for extension-registered shortcuts; returns true when it consumed the input. */
  onExtensionShortcut?: (data: string) => boolean;

  constructor(tui: TUI, theme: EditorTheme, keybindings?: KeybindingMatcher, options?: EditorOptions) {
    super(tui, theme, options);
    this.appKeybindings = keybindings;
  }

  /** Register a handler for an app action (e.g. "app.interrupt"). */
  onAction(action: AppKeybinding, handler: () => void): void {
    this.actionHandlers.set(action, handler);
  }

  override handleInput(data: string): void {
    if (this.onExtensionShortcut?.(data)) return;
    for (const [action, handler] of this.actionHandlers) {
      let matched = false;
      try {
        matched = this.appKeybindings?.matches(data, action as never) ?? false;
      } catch {
        matched = false; // unknown action id
      }
      if (matched) {
        handler();
        return;
      }
    }
    if (data === "\x1b" && this.onEscape) {
      this.onEscape();
      return;
    }
    if (data === "\x04" && this.onCtrlD && this.getText() === "") {
      this.onCtrlD();
      return;
    }
    super.handleInput(data);
  }
}

/** A horizontal rule across the viewport. */
export class DynamicBorder {
  private readonly color: (str: string) => string;

  constructor(color: (str: string) => string = (s) => s) {
    this.color = color;
  }

  invalidate(): void {}

  render(width: number): string[] {
    return [this.color("\u2500".repeat(Math.max(1, width)))];
  }
}

/** A spinner with a message between borders; cancellable through `signal`. */
export class BorderedLoader extends Container {
  private readonly controller = new AbortController();
  private readonly loader: Loader;
  private abortHandler: (() => void) | undefined;
  private readonly cancellable: boolean;

  constructor(tui: TUI, theme: { fg(color: string, text: string): string }, message: string, options: { cancellable?: boolean } = {}) {
    super();
    this.cancellable = options.cancellable ?? true;
    const border = (s: string) => theme.fg("border", s);
    this.loader = new Loader(
      tui,
      (s) => theme.fg("accent", s),
      (s) => theme.fg("muted", s),
      message,
    );
    this.addChild(new DynamicBorder(border));
    this.addChild(this.loader);
    this.addChild(new DynamicBorder(border));
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  set onAbort(fn: (() => void) | undefined) {
    this.abortHandler = fn;
  }

  handleInput(data: string): void {
    if (this.cancellable && data === "\x1b") {
      this.controller.abort();
      this.abortHandler?.();
    }
  }

  dispose(): void {
    this.loader.stop();
  }
}

// Interactive-mode-only components.
export const ArminComponent = unavailableClass("ArminComponent");
export const AssistantMessageComponent = unavailableClass("AssistantMessageComponent");
export const BashExecutionComponent = unavailableClass("BashExecutionComponent");
export const BranchSummaryMessageComponent = unavailableClass("BranchSummaryMessageComponent");
export const CompactionSummaryMessageComponent = unavailableClass("CompactionSummaryMessageComponent");
export const CustomMessageComponent = unavailableClass("CustomMessageComponent");
export const ExtensionEditorComponent = unavailableClass("ExtensionEditorComponent");
export const ExtensionInputComponent = unavailableClass("ExtensionInputComponent");
export const ExtensionSelectorComponent = unavailableClass("ExtensionSelectorComponent");
export const FooterComponent = unavailableClass("FooterComponent");
export const InteractiveMode = unavailableClass("InteractiveMode");
export const LoginDialogComponent = unavailableClass("LoginDialogComponent");
export const ModelSelectorComponent = unavailableClass("ModelSelectorComponent");
export const OAuthSelectorComponent = unavailableClass("OAuthSelectorComponent");
export const SessionSelectorComponent = unavailableClass("SessionSelectorComponent");
export const SettingsSelectorComponent = unavailableClass("SettingsSelectorComponent");
export const ShowImagesSelectorComponent = unavailableClass("ShowImagesSelectorComponent");
export const SkillInvocationMessageComponent = unavailableClass("SkillInvocationMessageComponent");
export const ThemeSelectorComponent = unavailableClass("ThemeSelectorComponent");
export const ThinkingSelectorComponent = unavailableClass("ThinkingSelectorComponent");
export const ToolExecutionComponent = unavailableClass("ToolExecutionComponent");
export const TreeSelectorComponent = unavailableClass("TreeSelectorComponent");
export const UserMessageComponent = unavailableClass("UserMessageComponent");
export const UserMessageSelectorComponent = unavailableClass("UserMessageSelectorComponent");
