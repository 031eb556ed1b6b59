/**
 * Theme helpers for pi extensions. parley never draws a terminal UI (RPC
 * clients render everything themselves), so every styling function returns
 * its text unchanged; the shapes match pi's so extension code runs as is.
 */
import { extname, basename } from "node:path";
import { type EditorTheme, getKeybindings, type MarkdownTheme, type SelectListTheme, type SettingsListTheme } from "@earendil-works/pi-tui";

export type ThemeColor = string;
export type ThemeBg = string;
type ColorMode = "truecolor" | "256color";

const identity = (text: string): string => text;

/** pi's Theme with all styling as the identity. */
export class Theme {
  readonly name?: string;
  readonly sourcePath?: string;
  sourceInfo?: unknown;
  private readonly mode: ColorMode;

  constructor(
    _fgColors: Record<string, string | number> = {},
    _bgColors: Record<string, string | number> = {},
    mode: ColorMode = "truecolor",
    options: { name?: string; sourcePath?: string; sourceInfo?: unknown } = {},
  ) {
    this.mode = mode;
    this.name = options.name ?? "plain";
    if (options.sourcePath !== undefined) this.sourcePath = options.sourcePath;
    if (options.sourceInfo !== undefined) this.sourceInfo = options.sourceInfo;
  }

  fg(_color: ThemeColor, text: string): string {
    return text;
  }
  bg(_color: ThemeBg, text: string): string {
    return text;
  }
  bold(text: string): string {
    return text;
  }
  italic(text: string): string {
    return text;
  }
  underline(text: string): string {
    return text;
  }
  inverse(text: string): string {
    return text;
  }
  strikethrough(text: string): string {
    return text;
  }
  getFgAnsi(_color: ThemeColor): string {
    return "";
  }
  getBgAnsi(_color: ThemeBg): string {
    return "";
  }
  getColorMode(): ColorMode {
    return this.mode;
  }
  getThinkingBorderColor(_level: string): (str: string) => string {
    return identity;
  }
  getBashModeBorderColor(): (str: string) => string {
    return identity;
  }
}

/** The single theme instance (pi exposes a global `theme` the same way). */
export const theme = new Theme();

/** No-op: there is no theme to load without a terminal. */
export function initTheme(_themeName?: string, _enableWatcher?: boolean): void {}

export function getMarkdownTheme(): MarkdownTheme {
  return {
    heading: identity,
    link: identity,
    linkUrl: identity,
    code: identity,
    codeBlock: identity,
    codeBlockBorder: identity,
    quote: identity,
    quoteBorder: identity,
    hr: identity,
    listBullet: identity,
    bold: identity,
    italic: identity,
    strikethrough: identity,
    underline: identity,
    highlightCode,
  };
}

export function getSelectListTheme(): SelectListTheme {
  return { selectedPrefix: identity, selectedText: identity, description: identity, scrollInfo: identity, noMatch: identity };
}

export function getEditorTheme(): EditorTheme {
  return { borderColor: identity, selectList: getSelectListTheme() };
}

export function getSettingsListTheme(): SettingsListTheme {
  return { label: identity, value: identity, description: identity, cursor: "> ", hint: identity };
}

/** No syntax highlighting in plain text: just the lines. */
export function highlightCode(code: string, _lang?: string): string[] {
  return code.split("\n");
}

const LANGUAGES: Record<string, string> = {
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  py: "python",
  rb: "ruby",
  rs: "rust",
  go: "go",
  java: "java",
  kt: "kotlin",
  kts: "kotlin",
  swift: "swift",
  c: "c",
  h: "c",
  cc: "cpp",
  cpp: "cpp",
  cxx: "cpp",
  hpp: "cpp",
  hh: "cpp",
  cs: "csharp",
  php: "php",
  scala: "scala",
  lua: "lua",
  r: "r",
  pl: "perl",
  pm: "perl",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  fish: "fish",
  ps1: "powershell",
  json: "json",
  jsonc: "json",
  yaml: "yaml",
  yml: "yaml",
  toml: "toml",
  ini: "ini",
  xml: "xml",
  html: "html",
  htm: "html",
  css: "css",
  scss: "scss",
  less: "less",
  md: "markdown",
  markdown: "markdown",
  sql: "sql",
  graphql: "graphql",
  gql: "graphql",
  vue: "vue",
  svelte: "svelte",
  dart: "dart",
  ex: "elixir",
  exs: "elixir",
  erl: "erlang",
  hs: "haskell",
  ml: "ocaml",
  clj: "clojure",
  zig: "zig",
  nim: "nim",
  tf: "hcl",
  proto: "protobuf",
  diff: "diff",
  patch: "diff",
};
const FILE_NAMES: Record<string, string> = { makefile: "makefile", dockerfile: "dockerfile", gnumakefile: "makefile" };

/** Language id for a file path (for code fences), or undefined if unknown. */
export function getLanguageFromPath(filePath: string): string | undefined {
  const byName = FILE_NAMES[basename(filePath).toLowerCase()];
  if (byName) return byName;
  const ext = extname(filePath).slice(1).toLowerCase();
  return ext ? LANGUAGES[ext] : undefined;
}

/** Keys bound to a keybinding id, "/"-joined; the id itself when it is unknown here. */
export function keyText(keybinding: string): string {
  try {
    const keys = getKeybindings().getKeys(keybinding as never);
    if (keys.length > 0) return keys.join("/");
  } catch {
    // app-level bindings are unknown without pi's interactive mode
  }
  return keybinding;
}

export function keyHint(keybinding: string, description: string): string {
  return `${keyText(keybinding)} ${description}`;
}

export function rawKeyHint(key: string, description: string): string {
  return `${key} ${description}`;
}

/** Diff text as is: colouring is the client's job. */
export function renderDiff(diffText: string, _options?: { filePath?: string }): string {
  return diffText;
}

export interface VisualTruncateResult {
  visualLines: string[];
  skippedCount: number;
}

/** Wrap to `width` columns (minus padding) and keep the last `maxVisualLines` rows. */
export function truncateToVisualLines(text: string, maxVisualLines: number, width: number, paddingX = 0): VisualTruncateResult {
  const usable = Math.max(1, width - paddingX * 2);
  const rows: string[] = [];
  for (const line of text.split("\n")) {
    if (line.length === 0) rows.push("");
    for (let i = 0; i < line.length; i += usable) rows.push(line.slice(i, i + usable));
  }
  const skippedCount = Math.max(0, rows.length - maxVisualLines);
  return { visualLines: rows.slice(skippedCount), skippedCount };
}
