/**
 * rpc-extension-ui: a terminal client for an agent in RPC mode, built on @parley/client.
 *
 *   ./node_modules/.bin/jiti examples/rpc-extension-ui.ts                  # parley + examples/extensions/rpc-demo.ts
 *   ./node_modules/.bin/jiti examples/rpc-extension-ui.ts -- CMD ARGS...   # any agent command line (pi, parley -e …)
 *
 * The screen, from the top: the transcript (prompts, streamed assistant text, tool calls,
 * notifications, notes on dialogs), the widgets placed above the editor, the input line (or the
 * open dialog), the widgets placed below it, and a status bar (title, statuses by key, model).
 * Widgets and statuses come from a UiStore, so they stay in place instead of being logged.
 *
 * Keys, as in pi's terminal UI: Enter sends the line (a `/command` or a message); while the
 * agent works, Enter queues the message as a steer (delivered after the current tool calls) and
 * Alt+Enter as a follow-up (delivered when the agent would stop); queued messages wait below the
 * transcript until the agent takes them, and the status bar counts them. Esc aborts the running
 * turn (queued messages come back to the input line); on an idle, empty line a second Esc quits.
 * Ctrl-C clears the line, and a second Ctrl-C in a row quits; so do Ctrl-D on an empty line and
 * `/quit`. Tab completes a command name, ↑/↓ walk the history, PgUp/PgDn scroll the transcript.
 * Dialogs: select ↑/↓ + Enter; confirm y/n (or ←/→ + Enter); input Enter; editor: Enter adds a
 * line, Ctrl-S or Ctrl-D submits. Esc cancels any dialog. A dialog with a timeout shows its
 * countdown; one the agent withdraws (timeout, the extension's AbortSignal, shutdown) closes
 * by itself with a note. Against pi (no `get_ui_state`, no dismiss records) the same works:
 * detectCapabilities tells them apart and the client ends timed dialogs at their deadline.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Markdown, StdinBuffer, parseKey, truncateToWidth, visibleWidth, wrapTextWithAnsi, type MarkdownTheme } from "@earendil-works/pi-tui";
import {
  ConnectionClosedError,
  DialogEndedError,
  RpcClient,
  RpcError,
  UiStore,
  detectCapabilities,
  spawnTransport,
  type CloseInfo,
  type DialogMethod,
  type DialogRequestOf,
  type DialogResult,
} from "@parley/client";

type SlashCommand = Awaited<ReturnType<RpcClient["getCommands"]>>[number];

// ---- command line ------------------------------------------------------------------------

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const USAGE = `Usage: rpc-extension-ui [-- CMD ARGS...]

Without arguments, runs ${join("node_modules", ".bin", "parley")} --mode rpc --no-session -e examples/extensions/rpc-demo.ts
(paths resolved from the repository root). With \`-- CMD ARGS...\`, runs that agent command line
instead, e.g. \`-- pi --mode rpc -e my-extension.ts\` (a pi on your PATH).`;

function agentCommandLine(argv: string[]): { command: string; args: string[] } {
  const rest = argv[0] === "--" ? argv.slice(1) : argv;
  if (rest.length > 0) return { command: rest[0]!, args: rest.slice(1) };
  return {
    command: join(REPO_ROOT, "node_modules", ".bin", "parley"),
    args: ["--mode", "rpc", "--no-session", "-e", join(REPO_ROOT, "examples", "extensions", "rpc-demo.ts")],
  };
}

// ---- styling and text ----------------------------------------------------------------------

const sgr = (on: string, off: string) => (text: string) => `\x1b[${on}m${text}\x1b[${off}m`;
const bold = sgr("1", "22");
const dim = sgr("2", "22");
const italic = sgr("3", "23");
const red = sgr("31", "39");
const green = sgr("32", "39");
const yellow = sgr("33", "39");
const blue = sgr("34", "39");
const magenta = sgr("35", "39");
const cyan = sgr("36", "39");
const INVERSE = "\x1b[7m";
const INVERSE_OFF = "\x1b[27m";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const graphemes = (text: string): string[] => Array.from(segmenter.segment(text), (s) => s.segment);

/** Agent-supplied text must not move the cursor or restyle the terminal: controls go, tabs become spaces. */
function clean(text: string, keepNewlines = false): string {
  const noTabs = text.replace(/\t/g, "  ").replace(/\r\n?/g, "\n");
  return noTabs.replace(keepNewlines ? /[\x00-\x09\x0b-\x1f\x7f-\x9f]/g : /[\x00-\x1f\x7f-\x9f]/g, "");
}

/** Cuts a (possibly styled) line to `width` columns. */
function fit(line: string, width: number): string {
  if (width <= 0) return "";
  return visibleWidth(line) <= width ? line : truncateToWidth(line, width, "…");
}

const pad = (text: string, width: number): string => text + " ".repeat(Math.max(0, width - visibleWidth(text)));

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.split("\n")) {
    if (paragraph === "") out.push("");
    else out.push(...wrapTextWithAnsi(paragraph, Math.max(1, width)));
  }
  return out;
}

/** Printable input (typed or pasted text), as opposed to a control key or an escape sequence. */
const isPrintable = (data: string): boolean => data.length > 0 && !/[\x00-\x1f\x7f-\x9f]/.test(data);

/** Key names from pi-tui's parser, plus the Home/End forms it does not name (tmux, rxvt). */
function keyName(data: string): string | undefined {
  const legacy: Record<string, string> = { "\x1b[1~": "home", "\x1b[7~": "home", "\x1b[4~": "end", "\x1b[8~": "end" };
  return legacy[data] ?? parseKey(data);
}

// ---- editing: one line, and many ------------------------------------------------------------

const isWordChar = (g: string): boolean => /[\p{L}\p{N}_]/u.test(g);

/** A single-line editor over grapheme clusters. */
class LineEditor {
  chars: string[] = [];
  cursor = 0;

  get text(): string {
    return this.chars.join("");
  }

  set(text: string): void {
    this.chars = graphemes(text.replace(/\n/g, " "));
    this.cursor = this.chars.length;
  }

  /**
   * Inserts at the cursor and segments again around it: input may arrive in pieces (half a
   * surrogate pair, a base letter and then its combining mark, an emoji and then a ZWJ), and
   * the pieces must join the cluster they belong to.
   */
  insert(text: string): void {
    const before = this.chars.slice(0, this.cursor).join("") + text.replace(/\r?\n/g, " ");
    const after = this.chars.slice(this.cursor).join("");
    const head = graphemes(before);
    this.chars = graphemes(before + after);
    // The cursor goes after what was typed: as many clusters as `before` makes, unless the join merged across it.
    this.cursor = Math.min(head.length, this.chars.length);
  }

  /** Applies an editing key; false when the key is not an editing key. */
  edit(key: string | undefined, data: string): boolean {
    const c = this.chars;
    switch (key) {
      case "left":
      case "ctrl+b":
        this.cursor = Math.max(0, this.cursor - 1);
        return true;
      case "right":
      case "ctrl+f":
        this.cursor = Math.min(c.length, this.cursor + 1);
        return true;
      case "home":
      case "ctrl+a":
        this.cursor = 0;
        return true;
      case "end":
      case "ctrl+e":
        this.cursor = c.length;
        return true;
      case "backspace":
      case "ctrl+h":
        if (this.cursor > 0) c.splice(--this.cursor, 1);
        return true;
      case "delete":
        c.splice(this.cursor, 1);
        return true;
      case "ctrl+u":
        c.splice(0, this.cursor);
        this.cursor = 0;
        return true;
      case "ctrl+k":
        c.splice(this.cursor);
        return true;
      case "ctrl+w":
      case "alt+backspace": {
        const start = this.wordLeft();
        c.splice(start, this.cursor - start);
        this.cursor = start;
        return true;
      }
      case "alt+left":
      case "ctrl+left":
        this.cursor = this.wordLeft();
        return true;
      case "alt+right":
      case "ctrl+right": {
        let i = this.cursor;
        while (i < c.length && !isWordChar(c[i]!)) i++;
        while (i < c.length && isWordChar(c[i]!)) i++;
        this.cursor = i;
        return true;
      }
    }
    if (isPrintable(data)) {
      this.insert(data);
      return true;
    }
    return false;
  }

  /** The visible window of the text in `width` columns and the cursor's column in it. */
  view(width: number): { text: string; cursorCol: number } {
    const widths = this.chars.map((g) => visibleWidth(g));
    let start = 0;
    let before = widths.slice(0, this.cursor).reduce((a, b) => a + b, 0);
    while (before > width - 1 && start < this.cursor) before -= widths[start++]!;
    let text = "";
    let used = 0;
    for (let i = start; i < this.chars.length && used + widths[i]! <= width; i++) {
      text += this.chars[i];
      used += widths[i]!;
    }
    return { text, cursorCol: before };
  }

  private wordLeft(): number {
    let i = this.cursor;
    while (i > 0 && !isWordChar(this.chars[i - 1]!)) i--;
    while (i > 0 && isWordChar(this.chars[i - 1]!)) i--;
    return i;
  }
}

/** A multi-line editor: a LineEditor per line, the cursor on one of them. */
class TextArea {
  lines: LineEditor[] = [new LineEditor()];
  row = 0;
  private top = 0;

  get text(): string {
    return this.lines.map((line) => line.text).join("\n");
  }

  set(text: string): void {
    this.lines = text.split("\n").map((line) => {
      const editor = new LineEditor();
      editor.set(line);
      return editor;
    });
    this.row = this.lines.length - 1;
  }

  private get line(): LineEditor {
    return this.lines[this.row]!;
  }

  insert(text: string): void {
    const parts = text.replace(/\r\n?/g, "\n").split("\n");
    parts.forEach((part, i) => {
      if (i > 0) this.newline();
      this.line.insert(part);
    });
  }

  private newline(): void {
    const line = this.line;
    const after = new LineEditor();
    after.chars = line.chars.splice(line.cursor);
    after.cursor = 0;
    this.lines.splice(++this.row, 0, after);
  }

  private moveRow(to: number): void {
    const col = this.line.cursor;
    this.row = to;
    this.line.cursor = Math.min(col, this.line.chars.length);
  }

  edit(key: string | undefined, data: string): boolean {
    const line = this.line;
    switch (key) {
      case "enter":
        this.newline();
        return true;
      case "up":
        if (this.row > 0) this.moveRow(this.row - 1);
        return true;
      case "down":
        if (this.row < this.lines.length - 1) this.moveRow(this.row + 1);
        return true;
      case "left":
        if (line.cursor === 0 && this.row > 0) {
          this.row--;
          this.line.cursor = this.line.chars.length;
          return true;
        }
        break;
      case "right":
        if (line.cursor === line.chars.length && this.row < this.lines.length - 1) {
          this.row++;
          this.line.cursor = 0;
          return true;
        }
        break;
      case "backspace":
        if (line.cursor === 0 && this.row > 0) {
          const previous = this.lines[this.row - 1]!;
          previous.cursor = previous.chars.length;
          previous.chars.push(...line.chars);
          this.lines.splice(this.row--, 1);
          return true;
        }
        break;
      case "delete":
        if (line.cursor === line.chars.length && this.row < this.lines.length - 1) {
          line.chars.push(...this.lines[this.row + 1]!.chars);
          this.lines.splice(this.row + 1, 1);
          return true;
        }
        break;
    }
    return line.edit(key, data);
  }

  /** Up to `height` rows, scrolled to keep the cursor visible, and the cursor's place in them. */
  view(width: number, height: number): { rows: string[]; cursor: { row: number; col: number } } {
    if (this.row < this.top) this.top = this.row;
    if (this.row >= this.top + height) this.top = this.row - height + 1;
    this.top = Math.max(0, Math.min(this.top, Math.max(0, this.lines.length - height)));
    const rows: string[] = [];
    let cursor = { row: 0, col: 0 };
    for (let i = this.top; i < Math.min(this.lines.length, this.top + height); i++) {
      const line = this.lines[i]!;
      if (i === this.row) {
        const { text, cursorCol } = line.view(width);
        cursor = { row: rows.length, col: cursorCol };
        rows.push(text);
      } else {
        rows.push(fit(line.text, width));
      }
    }
    return { rows, cursor };
  }
}

// ---- dialogs ----------------------------------------------------------------------------

/** What a dialog's view does with a key: keep going, or end with a value (undefined cancels). */
type KeyOutcome = { done: true; value: string | boolean | undefined } | undefined;

interface DialogView {
  /** Key help shown under the dialog. */
  readonly keys: string;
  body(width: number, maxRows: number): { rows: string[]; cursor?: { row: number; col: number } };
  key(key: string | undefined, data: string): KeyOutcome;
  paste(text: string): void;
}

const CANCEL: KeyOutcome = { done: true, value: undefined };

class SelectView implements DialogView {
  readonly keys = "↑/↓ move · Enter choose · Esc cancel";
  private index = 0;
  private top = 0;
  constructor(private readonly options: string[]) {}

  body(width: number, maxRows: number): { rows: string[] } {
    const height = Math.max(1, Math.min(this.options.length, maxRows));
    if (this.index < this.top) this.top = this.index;
    if (this.index >= this.top + height) this.top = this.index - height + 1;
    const rows = this.options.slice(this.top, this.top + height).map((option, i) => {
      const selected = this.top + i === this.index;
      const text = fit(clean(option), width - 2);
      return selected ? cyan(bold(`❯ ${text}`)) : `  ${text}`;
    });
    if (rows.length === 0) rows.push(dim("(no options)"));
    return { rows };
  }

  key(key: string | undefined): KeyOutcome {
    const last = this.options.length - 1;
    if (key === "up" || key === "ctrl+p") this.index = this.index <= 0 ? last : this.index - 1;
    else if (key === "down" || key === "ctrl+n" || key === "tab") this.index = this.index >= last ? 0 : this.index + 1;
    else if (key === "home" || key === "pageUp") this.index = 0;
    else if (key === "end" || key === "pageDown") this.index = last;
    else if (key === "enter" && this.options.length > 0) return { done: true, value: this.options[this.index] };
    else if (key === "escape") return CANCEL;
    return undefined;
  }

  paste(): void {}
}

class ConfirmView implements DialogView {
  readonly keys = "y yes · n no · ←/→ + Enter · Esc cancel";
  private yes = true;
  constructor(private readonly message: string) {}

  body(width: number, maxRows: number): { rows: string[] } {
    const rows = wrap(clean(this.message, true), width).slice(0, Math.max(0, maxRows - 1));
    const choice = (label: string, on: boolean): string => (on ? cyan(bold(`❯ ${label}`)) : `  ${label}`);
    rows.push(`${choice("[y] Yes", this.yes)}   ${choice("[n] No", !this.yes)}`);
    return { rows };
  }

  key(key: string | undefined, data: string): KeyOutcome {
    const letter = data.toLowerCase();
    if (letter === "y") return { done: true, value: true };
    if (letter === "n") return { done: true, value: false };
    if (key === "left" || key === "right" || key === "tab") this.yes = !this.yes;
    else if (key === "enter") return { done: true, value: this.yes };
    else if (key === "escape") return CANCEL;
    return undefined;
  }

  paste(): void {}
}

class InputView implements DialogView {
  readonly keys = "Enter submit · Esc cancel";
  private readonly editor = new LineEditor();
  constructor(private readonly placeholder: string | undefined) {}

  body(width: number): { rows: string[]; cursor: { row: number; col: number } } {
    if (this.editor.chars.length === 0) {
      return { rows: [`› ${dim(fit(clean(this.placeholder ?? ""), width - 2))}`], cursor: { row: 0, col: 2 } };
    }
    const { text, cursorCol } = this.editor.view(width - 2);
    return { rows: [`› ${text}`], cursor: { row: 0, col: 2 + cursorCol } };
  }

  key(key: string | undefined, data: string): KeyOutcome {
    if (key === "enter") return { done: true, value: this.editor.text };
    if (key === "escape") return CANCEL;
    this.editor.edit(key, data);
    return undefined;
  }

  paste(text: string): void {
    this.editor.insert(text);
  }
}

class EditorView implements DialogView {
  readonly keys = "Enter new line · Ctrl-S or Ctrl-D submit · Esc cancel";
  private readonly area = new TextArea();
  constructor(prefill: string | undefined) {
    this.area.set(prefill ?? "");
  }

  body(width: number, maxRows: number): { rows: string[]; cursor: { row: number; col: number } } {
    const height = Math.max(1, Math.min(maxRows, Math.max(4, this.area.lines.length)));
    const view = this.area.view(width, height);
    while (view.rows.length < Math.min(height, 4)) view.rows.push(dim("~"));
    return view;
  }

  key(key: string | undefined, data: string): KeyOutcome {
    if (key === "ctrl+s" || key === "ctrl+d") return { done: true, value: this.area.text };
    if (key === "escape") return CANCEL;
    this.area.edit(key, data);
    return undefined;
  }

  paste(text: string): void {
    this.area.insert(text);
  }
}

interface OpenDialog {
  readonly id: string;
  readonly method: DialogMethod;
  readonly title: string;
  readonly view: DialogView;
  /** Date.now() when the agent stops waiting; undefined without a timeout. */
  readonly deadline: number | undefined;
  answer(value: string | boolean | undefined): void;
}

// ---- the transcript ------------------------------------------------------------------------

type EntryKind = "user" | "assistant" | "thinking" | "tool" | "info" | "warning" | "error" | "note" | "system" | "stderr";

interface Entry {
  kind: EntryKind;
  text: string;
  /** Drawn before the text on the first row; the text's further rows are indented to align under it (a command list). */
  head?: string;
  cache?: { width: number; text: string; lines: string[] };
}

const underline = sgr("4", "24");
const strike = sgr("9", "29");
/** Assistant text is markdown: pi-tui's renderer, in the terminal's own colours. */
const MARKDOWN_THEME: MarkdownTheme = {
  heading: (t) => bold(cyan(t)),
  link: underline,
  linkUrl: dim,
  code: yellow,
  codeBlock: (t) => t,
  codeBlockBorder: dim,
  quote: italic,
  quoteBorder: dim,
  hr: dim,
  listBullet: cyan,
  bold,
  italic,
  strikethrough: strike,
  underline,
};

const PREFIX: Record<EntryKind, [string, (text: string) => string]> = {
  user: [bold(green("› ")), bold],
  assistant: ["  ", (t) => t],
  thinking: ["  ", (t) => dim(italic(t))],
  tool: [blue("⚙ "), blue],
  info: [cyan("ℹ "), cyan],
  warning: [yellow("⚠ "), yellow],
  error: [red("✖ "), red],
  note: [magenta("↳ "), magenta],
  system: ["", (t) => t],
  stderr: [dim("│ "), dim],
};

class Transcript {
  readonly entries: Entry[] = [];
  /** Rows scrolled up from the bottom (PgUp/PgDn). */
  scroll = 0;

  add(kind: EntryKind, text: string, head?: string): Entry {
    const entry: Entry = head === undefined ? { kind, text } : { kind, text, head };
    this.entries.push(entry);
    if (this.entries.length > 2000) this.entries.splice(0, this.entries.length - 2000);
    return entry;
  }

  remove(entry: Entry): void {
    const i = this.entries.indexOf(entry);
    if (i >= 0) this.entries.splice(i, 1);
  }

  /** Every row at this width (each entry's wrapping is cached). */
  rows(width: number): string[] {
    const out: string[] = [];
    for (const entry of this.entries) {
      if (entry.cache?.width !== width || entry.cache.text !== entry.text) {
        const [prefix, style] = PREFIX[entry.kind];
        const indent = visibleWidth(prefix) + (entry.head === undefined ? 0 : visibleWidth(entry.head));
        const first = prefix + (entry.head ?? "");
        const body =
          entry.kind === "assistant"
            ? new Markdown(entry.text, 0, 0, MARKDOWN_THEME).render(Math.max(1, width - indent))
            : wrap(entry.text, width - indent).map(style);
        const lines = (body.length > 0 ? body : [""]).map((line, i) => (i === 0 ? first : " ".repeat(indent)) + line);
        entry.cache = { width, text: entry.text, lines };
      }
      out.push(...entry.cache.lines);
    }
    return out;
  }
}

// ---- the terminal --------------------------------------------------------------------------

class Screen {
  private active = false;

  enter(): void {
    if (this.active) return;
    this.active = true;
    process.stdin.setRawMode(true);
    process.stdin.setEncoding("utf8");
    process.stdin.resume();
    // Save the window title, alternate screen, bracketed paste on.
    process.stdout.write("\x1b[22;0t\x1b[?1049h\x1b[?2004h\x1b[H\x1b[2J");
  }

  /** Restores the terminal; safe to call more than once. */
  leave(): void {
    if (!this.active) return;
    this.active = false;
    process.stdout.write("\x1b[?2004l\x1b[?25h\x1b[0m\x1b[?1049l\x1b[23;0t");
    try {
      process.stdin.setRawMode(false);
    } catch {
      // stdin already gone
    }
    process.stdin.pause();
  }

  get size(): { width: number; height: number } {
    return { width: process.stdout.columns || 80, height: process.stdout.rows || 24 };
  }

  /** Draws a whole frame, one positioned row at a time, then places (or hides) the cursor. */
  draw(rows: string[], cursor: { row: number; col: number } | undefined): void {
    if (!this.active) return;
    const { width } = this.size;
    let frame = "\x1b[?2026h\x1b[?25l";
    rows.forEach((row, i) => {
      const line = fit(row, width);
      frame += `\x1b[${i + 1};1H\x1b[0m${line}\x1b[0m${visibleWidth(line) < width ? "\x1b[K" : ""}`;
    });
    if (rows.length < this.size.height) frame += `\x1b[${rows.length + 1};1H\x1b[J`;
    if (cursor) frame += `\x1b[${cursor.row + 1};${cursor.col + 1}H\x1b[?25h`;
    frame += "\x1b[?2026l";
    process.stdout.write(frame);
  }

  setTitle(title: string): void {
    if (this.active) process.stdout.write(`\x1b]0;${clean(title)}\x07`);
  }
}

// ---- the app -----------------------------------------------------------------------------

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

function describeExit(info: CloseInfo): string {
  if (info.reason === "error") return `could not run: ${info.error?.message ?? "I/O error"}`;
  if (info.signal) return `killed by ${info.signal}`;
  return `exit code ${info.exitCode ?? "unknown"}`;
}

function shellLine(words: string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(" ");
}

/** "a select dialog", "an editor dialog". */
const article = (word: string): string => (/^[aeiou]/i.test(word) ? "an" : "a");

function summarizeArgs(args: unknown): string {
  if (args === undefined || args === null) return "";
  const text = typeof args === "object" ? JSON.stringify(args) : String(args);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

function main(): void {
  const argv = process.argv.slice(2);
  if (argv[0] === "-h" || argv[0] === "--help") {
    console.log(USAGE);
    return;
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    console.error("rpc-extension-ui needs a terminal (stdin and stdout must be a TTY).\n\n" + USAGE);
    process.exitCode = 2;
    return;
  }

  const { command, args } = agentCommandLine(argv);
  const transport = spawnTransport(command, args);
  const client = new RpcClient(transport);
  // Connected before anything is awaited, so the records an agent writes at startup are folded
  // even when it has no get_ui_state to ask (pi).
  const store = new UiStore();
  store.connect(client);

  const screen = new Screen();
  const log = new Transcript();
  const input = new LineEditor();
  const history: string[] = [];
  let historyIndex = 0;
  const dialogs: OpenDialog[] = [];
  let commands: SlashCommand[] = [];
  let completions: string[] = [];
  let model = "";
  let agentKind = "";
  let streaming = false;
  let promptsAwaitingStart = 0;
  let quitting = false;
  let assistantEntry: Entry | undefined;
  let thinkingEntry: Entry | undefined;
  let stderrPartial = "";
  /** Messages sent while the agent works, until it takes them (a user message_start). */
  let queued: { kind: "steer" | "followUp"; text: string }[] = [];
  /** Prompts sent while idle (shown at once) whose user message_start has not come yet. */
  let awaitingStart: string[] = [];
  /** The key pressed last when it was a first Esc or Ctrl-C on nothing to clear: the same key again quits. */
  let armed: "escape" | "ctrl+c" | undefined;
  let aborting = false;

  // ---- drawing ----

  let renderTimer: NodeJS.Timeout | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const busy = (): boolean => streaming || promptsAwaitingStart > 0;
  const render = (): void => {
    renderTimer ??= setTimeout(() => {
      renderTimer = undefined;
      draw();
    }, 12);
  };

  function statusBar(width: number): string {
    const state = store.state;
    const sep = dim(" │ ");
    const left = [bold(clean(state.title ?? "rpc-extension-ui"))];
    for (const [key, text] of Object.entries(state.statuses)) left.push(`${clean(key)}: ${clean(text)}`);
    const dialog = dialogs[0];
    const spinner = SPINNER[Math.floor(Date.now() / 100) % SPINNER.length];
    const [activity, short] = quitting
      ? ["closing the agent…", "closing…"]
      : dialog !== undefined
        ? [
            yellow(`⏸ ${dialogs.length > 1 ? `${dialogs.length} dialogs wait` : `${article(dialog.method)} ${dialog.method} dialog waits`} for you`),
            yellow(`⏸ ${dialog.method}`),
          ]
        : aborting
          ? [`${spinner} aborting…`, `${spinner} aborting`]
          : busy()
            ? [`${spinner} working${queueSummary()}`, `${spinner}${queued.length > 0 ? ` +${queued.length}` : ""}`]
            : armed !== undefined
              ? [yellow(`${armed === "escape" ? "Esc" : "Ctrl-C"} again quits`), yellow("again quits")]
              : ["idle", "idle"];
    // The activity and the model stay (shortened if need be); the title and statuses give way, cut with an ellipsis.
    const candidates = [`${activity}${sep}${model}`, `${short}${sep}${model}`];
    let rightText = `${candidates.find((c) => visibleWidth(c) <= width - 14) ?? `${short}${sep}${fit(model, Math.max(1, width - 14 - visibleWidth(short) - 3))}`} `;
    if (!model) rightText = `${activity} `;
    const room = width - visibleWidth(rightText);
    const leftText = room > 2 ? fit(` ${left.join(sep)}`, room - 1) : "";
    const bar = leftText + INVERSE + " ".repeat(Math.max(0, width - visibleWidth(leftText) - visibleWidth(rightText))) + rightText;
    return INVERSE + bar + INVERSE_OFF;
  }

  /** " · 1 steer, 2 follow-ups queued", or "" when nothing waits. */
  function queueSummary(): string {
    const steers = queued.filter((q) => q.kind === "steer").length;
    const followUps = queued.length - steers;
    const parts = [
      ...(steers > 0 ? [`${steers} steer${steers === 1 ? "" : "s"}`] : []),
      ...(followUps > 0 ? [`${followUps} follow-up${followUps === 1 ? "" : "s"}`] : []),
    ];
    return parts.length === 0 ? "" : ` · ${parts.join(", ")} queued`;
  }

  /** The queued messages, each on a row of its own between the transcript and the input line. */
  function queueRows(width: number): string[] {
    return queued.map((q) => fit(`${dim(q.kind === "steer" ? "  ⏳ steer: " : "  ⏳ follow-up: ")}${clean(q.text)}`, width));
  }

  function widgetRows(placement: "aboveEditor" | "belowEditor", width: number): string[] {
    const rows: string[] = [];
    for (const widget of Object.values(store.state.widgets)) {
      if (widget.placement !== placement) continue;
      for (const line of widget.lines.slice(0, 12)) rows.push(fit(`${magenta("▍")} ${clean(line)}`, width));
    }
    return rows;
  }

  function dialogRows(dialog: OpenDialog, width: number, maxRows: number): { rows: string[]; cursor?: { row: number; col: number } } {
    const waiting = dialogs.length > 1 ? dim(` (+${dialogs.length - 1} waiting)`) : "";
    let countdown = "";
    if (dialog.deadline !== undefined) {
      const left = Math.max(0, dialog.deadline - Date.now());
      const text = `⏱ ${(left / 1000).toFixed(1)}s left`;
      countdown = left < 1000 ? red(bold(text)) : yellow(text);
    }
    const head = `${cyan("┌─")} ${bold(clean(dialog.title))} ${dim(`(${dialog.method})`)}${waiting} `;
    const fill = Math.max(1, width - visibleWidth(head) - visibleWidth(countdown) - 1);
    const header = fit(head + cyan("─".repeat(fill)) + " " + countdown, width);
    const body = dialog.view.body(width - 2, Math.max(1, maxRows - 2));
    const rows = [header, ...body.rows.map((row) => `${cyan("│")} ${row}`), `${cyan("└─")} ${dim(dialog.view.keys)}`];
    const cursor = body.cursor ? { row: body.cursor.row + 1, col: body.cursor.col + 2 } : undefined;
    return { rows, ...(cursor ? { cursor } : {}) };
  }

  function draw(): void {
    const { width, height } = screen.size;
    // The input line, or the oldest open dialog.
    let area: string[];
    let areaCursor: { row: number; col: number } | undefined;
    const dialog = dialogs[0];
    if (dialog) {
      const drawn = dialogRows(dialog, width, Math.max(3, height - 5));
      area = drawn.rows;
      areaCursor = drawn.cursor;
    } else {
      const prompt = quitting ? dim("› ") : bold(green("› "));
      area = completions.length > 0 ? [fit(dim(`  ${completions.join("  ")}`), width)] : [];
      if (input.chars.length === 0) {
        const hint = busy()
          ? "the agent is working: Enter steers · Alt+Enter queues a follow-up · Esc aborts"
          : "a message or /command · Tab completes · Ctrl-C twice quits";
        area.push(prompt + dim(fit(hint, width - 2)));
        areaCursor = { row: area.length - 1, col: 2 };
      } else {
        const { text, cursorCol } = input.view(width - 2);
        area.push(prompt + text);
        areaCursor = { row: area.length - 1, col: 2 + cursorCol };
      }
    }
    // Queued messages sit right under the transcript (the reply they wait for), above the widgets.
    const queue = queueRows(width).slice(0, Math.max(0, height - 1 - area.length - 1 - 2));
    // Widgets take what is left after the status bar, the input area, the queue, a rule and two transcript rows.
    let budget = Math.max(0, height - 1 - area.length - queue.length - 1 - 2);
    const above = widgetRows("aboveEditor", width).slice(0, budget);
    budget -= above.length;
    const below = widgetRows("belowEditor", width).slice(0, budget);
    const logHeight = Math.max(0, height - 1 - area.length - 1 - queue.length - above.length - below.length);

    const all = log.rows(width);
    log.scroll = Math.max(0, Math.min(log.scroll, all.length - logHeight));
    const end = all.length - log.scroll;
    const visible = all.slice(Math.max(0, end - logHeight), end);
    if (log.scroll > 0 && visible.length > 0) visible[visible.length - 1] = dim(`  ↓ ${log.scroll} more rows (PgDn)`);
    while (visible.length < logHeight) visible.push("");

    const rule = dim("─".repeat(width));
    const rows = [...visible, rule, ...queue, ...above, ...area, ...below, statusBar(width)].slice(-height);
    const before = visible.length + 1 + queue.length + above.length;
    const areaTop = before - Math.max(0, before + area.length + below.length + 1 - height);
    screen.draw(rows, areaCursor && !quitting ? { row: areaTop + areaCursor.row, col: Math.min(width - 1, areaCursor.col) } : undefined);

    // Tick while something on screen moves: a countdown or the spinner.
    const moving = dialogs.some((d) => d.deadline !== undefined) || busy() || quitting;
    if (moving && ticker === undefined) ticker = setInterval(render, 100);
    if (!moving && ticker !== undefined) {
      clearInterval(ticker);
      ticker = undefined;
    }
  }

  // ---- leaving ----

  function finish(code: number, lines: string[]): never {
    if (ticker !== undefined) clearInterval(ticker);
    if (renderTimer !== undefined) clearTimeout(renderTimer);
    screen.leave();
    for (const line of lines) process.stdout.write(`${line}\n`);
    process.exit(code);
  }

  async function quit(): Promise<void> {
    if (quitting) return;
    quitting = true;
    draw();
    // EOF on the agent's stdin; signals only if it does not exit in time.
    void transport.close({ killAfterMs: 3000 });
    await client.close().catch(() => {});
    const info = await client.closed;
    finish(0, [`rpc-extension-ui: agent closed (${describeExit(info)})`]);
  }

  void client.closed.then((info) => {
    if (quitting) return;
    const tail = (info.stderrTail ?? "").trimEnd().split("\n").filter(Boolean).slice(-12);
    finish(info.exitCode === 0 ? 0 : 1, [
      `rpc-extension-ui: the agent exited (${describeExit(info)}): ${shellLine([command, ...args])}`,
      ...(tail.length > 0 ? ["last lines of its stderr:", ...tail.map((line) => `  ${line}`)] : []),
    ]);
  });

  for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"] as const) process.on(signal, () => void quit());
  process.on("exit", () => screen.leave());
  process.on("uncaughtException", (error) => {
    transport.kill();
    finish(1, [`rpc-extension-ui crashed: ${error.stack ?? error.message}`]);
  });

  // ---- dialogs: one handler per method, each a Promise the user (or the agent) settles ----

  function openDialog<M extends DialogMethod>(
    request: DialogRequestOf<M>,
    signal: AbortSignal,
    view: DialogView,
    describe: (value: DialogResult<M>) => string,
  ): Promise<DialogResult<M>> {
    return new Promise((resolve) => {
      const title = clean(request.title) || request.method;
      let settled = false;
      const settle = (value: DialogResult<M>): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        const i = dialogs.indexOf(dialog);
        if (i >= 0) dialogs.splice(i, 1);
        resolve(value);
        render();
      };
      const onAbort = (): void => {
        const reason: unknown = signal.reason;
        if (reason instanceof DialogEndedError && reason.reason !== "answered" && reason.reason !== "closed") {
          const why =
            reason.reason === "timeout" || reason.dismissReason === "timeout"
              ? "timed out"
              : reason.dismissReason === "aborted"
                ? "was withdrawn by the extension"
                : reason.dismissReason === "shutdown"
                  ? "closed: the agent is shutting down"
                  : reason.dismissReason === "answered"
                    ? "was answered by another client"
                    : `was dismissed by the agent${reason.dismissReason ? ` (${reason.dismissReason})` : ""}`;
          log.add("note", `“${title}” ${why}; the dialog closed by itself`);
        }
        settle(undefined as DialogResult<M>);
      };
      const dialog: OpenDialog = {
        id: request.id,
        method: request.method,
        title,
        view,
        deadline: client.ui.get(request.id)?.deadline,
        answer: (value) => {
          log.add("note", `“${title}”: ${value === undefined ? "cancelled" : describe(value as DialogResult<M>)}`);
          settle(value as DialogResult<M>);
        },
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      dialogs.push(dialog);
      render();
    });
  }

  client.ui.handle("select", (request, signal) => openDialog(request, signal, new SelectView(request.options), (v) => clean(v ?? "")));
  client.ui.handle("confirm", (request, signal) => openDialog(request, signal, new ConfirmView(request.message), (v) => (v ? "yes" : "no")));
  client.ui.handle("input", (request, signal) => openDialog(request, signal, new InputView(request.placeholder), (v) => JSON.stringify(v)));
  client.ui.handle("editor", (request, signal) =>
    openDialog(request, signal, new EditorView(request.prefill), (v) => {
      const n = (v ?? "").split("\n").length;
      return `${n} line${n === 1 ? "" : "s"} submitted`;
    }),
  );

  // ---- what the agent says ----

  store.onChange((change) => {
    if (change.kind === "record") {
      const record = change.record;
      if (record.method === "notify") log.add(record.notifyType ?? "info", clean(record.message, true));
      else if (record.method === "setTitle") screen.setTitle(record.title);
      else if (record.method === "set_editor_text") {
        input.set(record.text);
        completions = [];
      }
    } else if (change.kind === "seed") {
      const { title, editorText } = store.state;
      if (title !== undefined) screen.setTitle(title);
      if (editorText !== undefined && input.chars.length === 0) input.set(editorText);
    }
    render();
  });

  client.on("agent_start", () => {
    streaming = true;
    render();
  });
  const idle = (): void => {
    streaming = false;
    aborting = false;
    // Whatever was queued was delivered (or dropped with an aborted run) by now.
    queued = [];
    awaitingStart = [];
    assistantEntry = thinkingEntry = undefined;
    render();
  };
  client.on("agent_end", (event) => {
    if (!event.willRetry) idle();
  });
  client.on("agent_settled", idle);
  client.on("message_start", (event) => {
    const message = event.message;
    if (message.role === "assistant") assistantEntry = thinkingEntry = undefined;
    if (message.role !== "user") return;
    const text = typeof message.content === "string" ? message.content : message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    // A prompt sent while idle is in the transcript already.
    const sentIdle = awaitingStart.indexOf(text.trim());
    if (sentIdle >= 0) return void awaitingStart.splice(sentIdle, 1);
    if (queued.length === 0) return;
    const match = queued.findIndex((q) => q.text === text.trim());
    if (match < 0 && awaitingStart.length > 0) return void awaitingStart.shift();
    // A queued message the agent takes now: it joins the transcript here, below the reply so far.
    const at = Math.max(0, match);
    const [taken] = queued.splice(at, 1);
    log.add("user", clean(text, true) + dim(taken?.kind === "followUp" ? "  (follow-up)" : "  (steer)"));
    assistantEntry = thinkingEntry = undefined;
    render();
  });
  client.on("message_update", ({ assistantMessageEvent: e }) => {
    if (e.type === "text_delta") {
      assistantEntry ??= log.add("assistant", "");
      assistantEntry.text += clean(e.delta, true);
    } else if (e.type === "thinking_delta") {
      thinkingEntry ??= log.add("thinking", "");
      thinkingEntry.text += clean(e.delta, true);
    }
    render();
  });
  client.on("message_end", (event) => {
    const message = event.message;
    if (message.role !== "assistant") return;
    if (assistantEntry?.text.trim() === "") log.remove(assistantEntry);
    if ((message.stopReason === "error" || message.stopReason === "aborted") && message.errorMessage) {
      log.add("error", `${message.stopReason === "aborted" ? "aborted" : "model error"}: ${clean(message.errorMessage, true)}`);
    }
    assistantEntry = thinkingEntry = undefined;
    render();
  });
  client.on("tool_execution_start", (event) => {
    log.add("tool", `${clean(event.toolName)} ${clean(summarizeArgs(event.args))}`);
    render();
  });
  client.on("tool_execution_end", (event) => {
    if (event.isError) log.add("error", `${clean(event.toolName)} failed: ${clean(summarizeArgs(event.result))}`);
    render();
  });
  client.on("extension_error", (event) => {
    log.add("error", `extension ${clean(event.extensionPath)} (${clean(event.event)}): ${clean(event.error, true)}`);
    render();
  });
  client.on("extension_ui_error", (event) => {
    log.add("warning", `the agent refused an answer: ${clean(event.error)}`);
    render();
  });
  client.onError((error) => {
    log.add("warning", clean(error.message, true));
    render();
  });
  transport.onStderr((text) => {
    const lines = (stderrPartial + text).split("\n");
    stderrPartial = lines.pop() ?? "";
    for (const line of lines) if (line.trim() !== "") log.add("stderr", clean(line));
    render();
  });

  // ---- what the user types ----

  function submit(kind: "steer" | "followUp" = "steer"): void {
    const text = input.text.trim();
    completions = [];
    if (text === "") return;
    history.push(text);
    historyIndex = history.length;
    input.set("");
    if (text === "/quit") {
      void quit();
      return;
    }
    const name = text.startsWith("/") ? text.slice(1).split(/\s/, 1)[0] : undefined;
    const isCommand = name !== undefined && commands.some((c) => c.name === name);
    const queue = busy() && !isCommand;
    // A message for a working agent waits below the transcript until the agent takes it (message_start).
    if (queue) queued.push({ kind, text });
    else {
      log.add("user", text);
      if (!isCommand) awaitingStart.push(text);
      assistantEntry = undefined;
    }
    // Until the agent accepts it, a plain prompt counts as a run (a quick second line steers it).
    const counted = !isCommand;
    if (counted) promptsAwaitingStart++;
    client
      .prompt(text, queue ? { streamingBehavior: kind } : {})
      .catch((error: unknown) => {
        if (error instanceof ConnectionClosedError) return;
        const i = queued.findIndex((q) => q.text === text);
        if (i >= 0) queued.splice(i, 1);
        log.add("error", error instanceof RpcError ? clean(error.error, true) : String(error));
      })
      .finally(() => {
        if (counted) promptsAwaitingStart = Math.max(0, promptsAwaitingStart - 1);
        render();
      });
  }

  function complete(): void {
    const text = input.text;
    if (!text.startsWith("/") || /\s/.test(text)) return;
    const names = [...commands.map((c) => `/${c.name}`), "/quit"].filter((n) => n.startsWith(text));
    if (names.length === 1) {
      input.set(`${names[0]} `);
      completions = [];
    } else if (names.length > 1) {
      let prefix = names[0]!;
      for (const n of names) while (!n.startsWith(prefix)) prefix = prefix.slice(0, -1);
      input.set(prefix);
      completions = names;
    }
  }

  /** Esc while the agent works: abort the turn; what was queued comes back to the input line, as in pi. */
  function abortTurn(): void {
    if (aborting) return;
    aborting = true;
    const restored = queued.map((q) => q.text);
    queued = [];
    if (restored.length > 0) input.set([...restored, input.text].filter((t) => t !== "").join(" "));
    log.add("note", "aborted by Esc");
    void client
      .clearQueue()
      .catch(() => {})
      .then(() => client.abort())
      .catch((error: unknown) => {
        if (!(error instanceof ConnectionClosedError)) log.add("error", `abort failed: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        aborting = false;
        render();
      });
  }

  function onKey(data: string): void {
    const key = keyName(data);
    if (quitting) return;
    // Esc on an idle, empty line and Ctrl-C arm quitting: the same key pressed next quits; any other key disarms.
    const wasArmed = armed;
    armed = undefined;
    if (key === "ctrl+c") {
      if (wasArmed === "ctrl+c") return void quit();
      armed = "ctrl+c";
      if (dialogs.length === 0) input.set("");
      completions = [];
      return render();
    }
    const { height } = screen.size;
    if (key === "pageUp" || key === "pageDown") {
      const step = Math.max(1, height - 8);
      log.scroll = Math.max(0, log.scroll + (key === "pageUp" ? step : -step));
      return render();
    }
    const dialog = dialogs[0];
    if (dialog) {
      const outcome = dialog.view.key(key, data);
      if (outcome) dialog.answer(outcome.value);
      return render();
    }
    if (key !== "tab") completions = [];
    if (key === "enter") submit("steer");
    else if (key === "alt+enter") submit("followUp");
    else if (key === "tab") complete();
    else if (key === "ctrl+d" && input.chars.length === 0) return void quit();
    else if (key === "ctrl+d") input.edit("delete", data);
    else if (key === "up" || key === "down") {
      historyIndex = Math.max(0, Math.min(history.length, historyIndex + (key === "up" ? -1 : 1)));
      input.set(history[historyIndex] ?? "");
    } else if (key === "escape") {
      if (busy()) abortTurn();
      else if (input.chars.length > 0) input.set("");
      else if (wasArmed === "escape") return void quit();
      else armed = "escape";
    } else input.edit(key, data);
    render();
  }

  function onPaste(text: string): void {
    if (quitting) return;
    const dialog = dialogs[0];
    if (dialog) dialog.view.paste(text);
    else input.insert(text);
    render();
  }

  // ---- start ----

  const keys = new StdinBuffer();
  keys.on("data", onKey);
  keys.on("paste", onPaste);
  process.stdin.on("data", (data: string) => keys.process(data));
  process.stdout.on("resize", render);
  screen.enter();

  log.add("system", `${bold("rpc-extension-ui")} ${dim(`· ${shellLine([command, ...args])}`)}`);
  render();

  void (async () => {
    try {
      // Generous: an agent loads its extensions before it answers. A silent one is reported, not fatal.
      const timeoutMs = 30_000;
      const capabilities = await detectCapabilities(client, { timeoutMs });
      agentKind = capabilities.uiState
        ? "parley (get_ui_state seeds the UI; dialogs the agent withdraws close by themselves)"
        : "pi-compatible (no get_ui_state: the UI is built from records; no dismiss records: a timed dialog " +
          "closes at its deadline, one the extension withdraws stays open until answered)";
      const [found, state] = await Promise.all([client.getCommands({ timeoutMs }), client.getState({ timeoutMs })]);
      commands = found;
      const offline = (state as { offlineModel?: boolean }).offlineModel === true;
      model = state.model ? clean(state.model.name || `${state.model.provider}/${state.model.id}`) : "no model";
      if (offline && !/offline/i.test(model)) model += " (offline)";
      log.add("system", dim(`agent: ${agentKind}`));
      if (commands.length === 0) log.add("system", "The agent has no commands. Type a message and press Enter.");
      else {
        log.add("system", bold(`Commands (${commands.length}):`));
        const widest = Math.min(24, Math.max(...commands.map((c) => c.name.length + 1)));
        for (const c of commands) log.add("system", dim(clean(c.description ?? "")), `  ${cyan(pad(`/${clean(c.name)}`, widest))}  `);
      }
      log.add(
        "system",
        dim(
          "Enter sends (steers while the agent works) · Alt+Enter queues a follow-up · Esc aborts · Tab completes · ↑/↓ history · PgUp/PgDn scroll · Ctrl-C twice or /quit exits",
        ),
      );
    } catch (error) {
      if (error instanceof ConnectionClosedError) return; // the exit handler reports it
      log.add("error", `could not talk to the agent: ${error instanceof Error ? error.message : String(error)}`);
    }
    render();
  })();
}

main();
