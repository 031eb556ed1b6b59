/**
 * pi's command line, so a client can swap the binary: every flag of the newest pi, with its short
 * forms and its meaning, read from one table. Unknown `--flags` are kept for a second pass:
 * extensions may register them (pi.registerFlag), and only then can they be judged.
 */
import type { ThinkingLevel } from "@parley/protocol";
import { THINKING_LEVELS } from "@parley/protocol/constants";
import { toolListError } from "../agent/tool-selection.js";
import { UsageError } from "../core/usage-error.js";
import { likelyFlag } from "./flag-typos.js";

/**
 * The modes parley serves: rpc (pi's JSON-lines protocol on stdio), acp (the Agent Client
 * Protocol on stdio, src/acp/), web (the RPC protocol over WebSockets with a browser UI, src/web/),
 * and pi's one-shot modes (src/modes/print/): json (`--mode json`, every event as a JSON line)
 * and print (`-p`, the final text). `--mode text` is pi's name for print's output. A new mode is
 * one entry here and one branch in main.
 */
export const MODES = ["rpc", "acp", "web", "json"] as const;
/** What `--mode` takes: the modes, and pi's `text`. */
const MODE_NAMES = [...MODES, "text"] as const;
type ModeName = (typeof MODE_NAMES)[number];
export type Mode = (typeof MODES)[number] | "print";

/** Whether stdin and stdout are terminals: without a mode, pi runs print mode unless both are. */
export interface Terminals {
  stdin: boolean;
  stdout: boolean;
}

/** pi's thinking levels on the command line: the wire's, plus `max` (the model's highest). */
export type CliThinkingLevel = ThinkingLevel | "max";
export const CLI_THINKING_LEVELS: readonly CliThinkingLevel[] = [...THINKING_LEVELS, "max"];

export interface CliOptions {
  /** The mode this run serves: `--mode`, else print mode (pi's rule: `-p`, or stdin or stdout not a terminal). */
  mode: Mode;
  /** --web-* flags (used with --mode web). token undefined: a random one per start. */
  web: { host: string; port: number; token?: string; allowedOrigins: string[]; open: boolean };
  // sessions
  noSession: boolean;
  sessionDir?: string;
  /** A session file path or a (partial) session id. */
  session?: string;
  /** An exact session id: opened in this project if it exists, else a new session with that id. */
  sessionId?: string;
  /** A session file path or (partial) id to fork into a new session. */
  fork?: string;
  continue: boolean;
  /** pi's session picker; without a terminal, parley continues the latest session. */
  resume: boolean;
  name?: string;
  // model
  provider?: string;
  model?: string;
  apiKey?: string;
  thinking?: CliThinkingLevel;
  /** --models: patterns of the models to cycle through (overrides settings.enabledModels). */
  models?: string[];
  modelScript?: string;
  // prompt
  systemPrompt?: string;
  /** --append-system-prompt, each a text or the path of a file holding it. */
  appendSystemPrompt: string[];
  noContextFiles: boolean;
  // tools
  tools?: string[];
  excludeTools?: string[];
  noTools: boolean;
  noBuiltinTools: boolean;
  // resources: parsed here, loaded by their own modules
  extensions: string[];
  noExtensions: boolean;
  /** --no-mcp: the built-in MCP extension does not load. */
  noMcp: boolean;
  skills: string[];
  noSkills: boolean;
  promptTemplates: string[];
  noPromptTemplates: boolean;
  /** Terminal-UI flags: accepted, and they do nothing, as in pi's RPC mode. */
  themes: string[];
  useTheme?: string;
  noThemes: boolean;
  tuiMode?: "regular" | "fullscreen";
  verbose: boolean;
  /** --print/-p: pi's print mode; a --mode other than text wins over it, as in pi. */
  print: boolean;
  /** --approve (true) / --no-approve (false): whether the project's .pi/ files are used. */
  projectTrust?: boolean;
  offline: boolean;
  // one-shot commands
  /** --export FILE: write the session file as HTML (to the first message, if any) and exit. */
  export?: string;
  /** --list-models [search]: print the models that can be used and exit. */
  listModels?: string | true;
  maxLineBytes?: number;
  help: boolean;
  version: boolean;
  /** Positional arguments (pi's initial messages; RPC mode does not send them). */
  messages: string[];
  /** `@file` arguments (pi refuses them in RPC mode, and so does parley). */
  fileArgs: string[];
  /** Warnings to print once the flags are known to be valid (pi's "warning" diagnostics). */
  warnings: string[];
  /** `--name[=value]` tokens no built-in flag claimed, with the bare token after each, if any. */
  unknown: { name: string; inlineValue?: string; next?: string }[];
  argv: string[];
}

export { UsageError };

type BooleanKey = {
  [K in keyof CliOptions]-?: CliOptions[K] extends boolean ? K : never;
}[keyof CliOptions];
type StringKey = "sessionDir" | "session" | "sessionId" | "fork" | "provider" | "model" | "apiKey" | "systemPrompt" | "modelScript" | "export";
type ListKey = "appendSystemPrompt" | "extensions" | "skills" | "promptTemplates" | "themes";
type CsvKey = "models" | "tools" | "excludeTools";

/** What a flag does with its value (if it takes one). */
type Flag =
  | { kind: "on"; key: BooleanKey }
  | { kind: "string"; key: StringKey }
  | { kind: "append"; key: ListKey }
  | { kind: "csv"; key: CsvKey; dropEmpty: boolean }
  | { kind: "value"; apply: (value: string, options: CliOptions) => void }
  /** Takes the next token only when it fits (`--list-models [search]`), or reads none. */
  | { kind: "special"; apply: (next: string | undefined, options: CliOptions) => boolean };

/** pi's flags. Aliases share an entry; the first name is the one help shows. */
const FLAG_TABLE: [names: string[], flag: Flag][] = [
  [["--mode"], { kind: "value", apply: (v) => void parseMode(v) }],
  [["--help", "-h"], { kind: "on", key: "help" }],
  [["--version", "-v"], { kind: "on", key: "version" }],
  // sessions
  [["--continue", "-c"], { kind: "on", key: "continue" }],
  [["--resume", "-r"], { kind: "on", key: "resume" }],
  [["--session"], { kind: "string", key: "session" }],
  [["--session-id"], { kind: "string", key: "sessionId" }],
  [["--fork"], { kind: "string", key: "fork" }],
  [["--session-dir"], { kind: "string", key: "sessionDir" }],
  [["--no-session"], { kind: "on", key: "noSession" }],
  [["--name", "-n"], { kind: "value", apply: (v, o) => (o.name = v) }],
  // model
  [["--provider"], { kind: "string", key: "provider" }],
  [["--model"], { kind: "string", key: "model" }],
  [["--api-key"], { kind: "string", key: "apiKey" }],
  [["--models"], { kind: "csv", key: "models", dropEmpty: false }],
  [["--thinking"], { kind: "value", apply: parseThinking }],
  [["--model-script"], { kind: "string", key: "modelScript" }],
  // prompt
  [["--system-prompt"], { kind: "string", key: "systemPrompt" }],
  [["--append-system-prompt"], { kind: "append", key: "appendSystemPrompt" }],
  [["--no-context-files", "-nc"], { kind: "on", key: "noContextFiles" }],
  // tools
  [["--tools", "-t"], { kind: "csv", key: "tools", dropEmpty: true }],
  [["--exclude-tools", "-xt"], { kind: "csv", key: "excludeTools", dropEmpty: true }],
  [["--no-tools", "-nt"], { kind: "on", key: "noTools" }],
  [["--no-builtin-tools", "-nbt"], { kind: "on", key: "noBuiltinTools" }],
  // resources
  [["--extension", "-e"], { kind: "append", key: "extensions" }],
  [["--no-extensions", "-ne"], { kind: "on", key: "noExtensions" }],
  [["--skill"], { kind: "append", key: "skills" }],
  [["--no-skills", "-ns"], { kind: "on", key: "noSkills" }],
  [["--prompt-template"], { kind: "append", key: "promptTemplates" }],
  [["--no-prompt-templates", "-np"], { kind: "on", key: "noPromptTemplates" }],
  [["--theme"], { kind: "append", key: "themes" }],
  [["--use-theme"], { kind: "value", apply: (v, o) => (o.useTheme = v) }],
  [["--no-themes"], { kind: "on", key: "noThemes" }],
  [["--tui-mode"], { kind: "value", apply: parseTuiMode }],
  [["--verbose"], { kind: "on", key: "verbose" }],
  [["--offline"], { kind: "on", key: "offline" }],
  // The newest pi's "no MCP servers, no MCP tools": parley has no MCP support, so it holds already.
  [["--no-mcp"], { kind: "on", key: "noMcp" }],
  [["--approve", "-a"], { kind: "special", apply: (_next, o) => ((o.projectTrust = true), false) }],
  [["--no-approve", "-na"], { kind: "special", apply: (_next, o) => ((o.projectTrust = false), false) }],
  // pi's print mode: `-p "message"` takes the next token as a message when it is one.
  [["--print", "-p"], { kind: "special", apply: takePrintMessage }],
  // one-shot commands
  [["--export"], { kind: "string", key: "export" }],
  [["--list-models"], { kind: "special", apply: takeListModelsSearch }],
  // parley's own
  [["--max-line-bytes"], { kind: "value", apply: parseMaxLineBytes }],
  // web mode
  [["--web-host"], { kind: "value", apply: (v, o) => (o.web.host = v) }],
  [["--web-port"], { kind: "value", apply: parseWebPort }],
  [["--web-token"], { kind: "value", apply: (v, o) => (o.web.token = v) }],
  [
    ["--web-allowed-origins"],
    {
      kind: "value",
      apply: (v, o) =>
        o.web.allowedOrigins.push(
          ...v
            .split(",")
            .map((x) => x.trim())
            .filter((x) => x !== ""),
        ),
    },
  ],
  [["--web-open"], { kind: "special", apply: (_next, o) => ((o.web.open = true), false) }],
];

const FLAGS = new Map<string, Flag>(FLAG_TABLE.flatMap(([names, flag]) => names.map((name): [string, Flag] => [name, flag])));

function parseMode(value: string): ModeName {
  const mode = MODE_NAMES.find((m) => m === value);
  if (mode) return mode;
  throw new UsageError(`--mode ${value} is not a mode parley has; use ${MODE_NAMES.map((m) => `--mode ${m}`).join(", ")}`);
}

/** As in pi, an unknown level is a warning and the flag is ignored. */
function parseThinking(value: string, options: CliOptions): void {
  const level = CLI_THINKING_LEVELS.find((l) => l === value);
  if (level) options.thinking = level;
  else options.warnings.push(`Invalid thinking level "${value}". Valid values: ${CLI_THINKING_LEVELS.join(", ")}; the flag is ignored`);
}

function parseTuiMode(value: string, options: CliOptions): void {
  if (value !== "regular" && value !== "fullscreen") throw new UsageError(`Invalid TUI mode "${value}". Valid values: regular, fullscreen`);
  options.tuiMode = value;
}

function parseWebPort(raw: string, options: CliOptions): void {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 65535) throw new UsageError(`--web-port ${raw} must be a port number (0 picks a free one)`);
  options.web.port = n;
}

function parseMaxLineBytes(raw: string, options: CliOptions): void {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--max-line-bytes ${raw} must be a positive whole number of bytes`);
  options.maxLineBytes = n;
}

function takePrintMessage(next: string | undefined, options: CliOptions): boolean {
  options.print = true;
  if (next === undefined || next.startsWith("@") || (next.startsWith("-") && !next.startsWith("---"))) return false;
  options.messages.push(next);
  return true;
}

function takeListModelsSearch(next: string | undefined, options: CliOptions): boolean {
  if (next !== undefined && !next.startsWith("-") && !next.startsWith("@")) {
    options.listModels = next;
    return true;
  }
  options.listModels = true;
  return false;
}

function positional(token: string, options: CliOptions): void {
  if (token.startsWith("@")) options.fileArgs.push(token.slice(1));
  else options.messages.push(token);
}

export function parseArgs(argv: string[], terminals: Terminals = { stdin: process.stdin.isTTY === true, stdout: process.stdout.isTTY === true }): CliOptions {
  const options: CliOptions = {
    mode: "print",
    web: { host: "127.0.0.1", port: 4781, allowedOrigins: [], open: false },
    noSession: false,
    continue: false,
    resume: false,
    appendSystemPrompt: [],
    noContextFiles: false,
    noTools: false,
    noBuiltinTools: false,
    extensions: [],
    noExtensions: false,
    noMcp: false,
    skills: [],
    noSkills: false,
    promptTemplates: [],
    noPromptTemplates: false,
    themes: [],
    noThemes: false,
    verbose: false,
    print: false,
    offline: false,
    help: false,
    version: false,
    messages: [],
    fileArgs: [],
    warnings: [],
    unknown: [],
    argv,
  };
  let modeGiven: ModeName | undefined;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === "--") {
      for (const rest of argv.slice(i + 1)) positional(rest, options);
      break;
    }
    // `--flag=value` works for every flag that takes a value (pi: only for extension flags).
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    const name = eq > 0 ? token.slice(0, eq) : token;
    const inline = eq > 0 ? token.slice(eq + 1) : undefined;
    const flag = FLAGS.get(name);
    if (flag === undefined) {
      if (name.startsWith("--") && name.length > 2) {
        // Whether the next token is this flag's value depends on the type an extension gives it.
        const next = inline === undefined ? argv[i + 1] : undefined;
        const takesNext = next !== undefined && !next.startsWith("-") && !next.startsWith("@");
        if (takesNext) i++;
        options.unknown.push({ name: name.slice(2), ...(inline !== undefined ? { inlineValue: inline } : {}), ...(takesNext ? { next } : {}) });
      } else if (token.startsWith("-") && token.length > 1) {
        throw new UsageError(`Unknown option: ${token}`);
      } else {
        positional(token, options);
      }
      continue;
    }
    if (flag.kind === "on" || flag.kind === "special") {
      if (inline !== undefined) throw new UsageError(`${name} takes no value (got ${JSON.stringify(token)})`);
      if (flag.kind === "on") options[flag.key] = true;
      else if (flag.apply(argv[i + 1], options)) i++;
      continue;
    }
    // As in pi, a flag's value is the next token, whatever it looks like (`--append-system-prompt "- be brief"`).
    let value: string;
    if (inline !== undefined) value = inline;
    else if (i + 1 < argv.length) value = argv[++i] as string;
    else throw new UsageError(`${name} needs a value`);
    switch (flag.kind) {
      case "string":
        options[flag.key] = value;
        break;
      case "append":
        options[flag.key].push(value);
        break;
      case "csv": {
        const items = value.split(",").map((s) => s.trim());
        options[flag.key] = flag.dropEmpty ? items.filter((s) => s.length > 0) : items;
        // As in the newest pi: an allowlist, or only +name/-name entries, never both.
        const problem = flag.key === "tools" ? toolListError(options.tools ?? []) : undefined;
        if (problem !== undefined) throw new UsageError(`${name}: ${problem}`);
        break;
      }
      case "value":
        flag.apply(value, options);
        if (name === "--mode") modeGiven = parseMode(value);
        break;
    }
  }
  validate(options, modeGiven, terminals);
  return options;
}

/**
 * pi's choice of mode: `--mode rpc|json` (and parley's acp, web) as given; else print mode with
 * `-p`, or when stdin or stdout is not a terminal. Both terminals and no `-p` is pi's terminal
 * UI, which parley does not have: then it says what to run instead.
 */
function chooseMode(options: CliOptions, given: ModeName | undefined, terminals: Terminals): Mode {
  if (given !== undefined && given !== "text") return given;
  if (options.print || !terminals.stdin || !terminals.stdout) return "print";
  const typo = options.unknown.map((u) => closeFlag(u.name)).find((match) => match !== undefined);
  throw new UsageError(
    `${given === "text" ? "--mode text in a terminal is pi's terminal UI, which parley does not have" : "no --mode given"}` +
      `${typo !== undefined ? ` (${typo})` : ""}. Ask one question with \`parley -p "question"\` (or pipe it: \`echo question | parley -p\`); ` +
      "for programs, run `parley --mode rpc` and speak pi's RPC protocol (JSON lines) on stdin/stdout, " +
      "`parley --mode acp` for an ACP editor, or `parley --mode web` for the browser UI.",
  );
}

/** The built-in long flags, for "did you mean": pi's and parley's own. */
const LONG_FLAGS = FLAG_TABLE.flatMap(([names]) => names.filter((n) => n.startsWith("--")).map((n) => n.slice(2)));

/** `unknown option --mdoe (did you mean --mode?)` when a built-in flag is a close match, else undefined. */
export function closeFlag(name: string, others: readonly string[] = []): string | undefined {
  const match = likelyFlag(name, [...LONG_FLAGS, ...others]);
  return match === undefined ? undefined : `unknown option --${name} (did you mean --${match}?)`;
}

/** Combinations pi refuses, refused the same way, before anything starts. */
function validate(options: CliOptions, modeGiven: ModeName | undefined, terminals: Terminals): void {
  if (options.help || options.version || options.export !== undefined || options.listModels !== undefined) return;
  options.mode = chooseMode(options, modeGiven, terminals);
  const oneShot = options.mode === "print" || options.mode === "json";
  if (options.name !== undefined) {
    const trimmed = options.name.trim();
    if (trimmed === "") throw new UsageError("--name requires a non-empty value");
    options.name = trimmed;
  }
  if (options.fileArgs.length > 0 && !oneShot)
    throw new UsageError("@file arguments are not supported in RPC mode (send the files' contents in a prompt, or use -p / --mode json)");
  const conflicts = (flag: string, others: [boolean, string][]): void => {
    const given = others.filter(([on]) => on).map(([, n]) => n);
    if (given.length > 0) throw new UsageError(`${flag} cannot be combined with ${given.join(", ")}`);
  };
  if (options.fork !== undefined) {
    conflicts("--fork", [
      [options.session !== undefined, "--session"],
      [options.continue, "--continue"],
      [options.resume, "--resume"],
      [options.noSession, "--no-session"],
    ]);
  }
  if (options.sessionId !== undefined) {
    conflicts("--session-id", [
      [options.session !== undefined, "--session"],
      [options.continue, "--continue"],
      [options.resume, "--resume"],
    ]);
    if (options.sessionId.length > 256 || !/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(options.sessionId)) {
      throw new UsageError(
        `--session-id ${JSON.stringify(options.sessionId)}: a session id uses letters, digits, ".", "_" and "-", with a letter or digit at each end`,
      );
    }
  }
  // pi lets --no-session silently win over these; a session the user named would be lost.
  if (options.noSession) {
    conflicts("--no-session", [
      [options.session !== undefined, "--session"],
      [options.continue, "--continue"],
      [options.resume, "--resume"],
    ]);
  }
  if (options.session !== undefined && (options.continue || options.resume)) {
    throw new UsageError(`--session cannot be combined with ${options.continue ? "--continue" : "--resume"}`);
  }
  if (options.messages.length > 0 && !oneShot) {
    options.warnings.push(
      `RPC mode does not send messages given on the command line (as in pi); ignored: ${options.messages.map((m) => JSON.stringify(m)).join(" ")}`,
    );
  }
}

/**
 * Second pass, once extensions have registered their flags: every unknown token must be one of
 * them. A boolean flag takes no value unless written `--flag=value`; a string flag takes the next token.
 */
export function resolveExtensionFlags(options: CliOptions, registered: ReadonlyMap<string, { type: "boolean" | "string" }>): Map<string, string | boolean> {
  const values = new Map<string, string | boolean>();
  for (const { name, inlineValue, next } of options.unknown) {
    const flag = registered.get(name);
    if (!flag) {
      // A close match of a flag (built-in or an extension's) is most likely a typo of it.
      const typo = closeFlag(name, [...registered.keys()]);
      if (typo !== undefined) throw new UsageError(typo);
      const known = [...registered.keys()].map((n) => `--${n}`);
      throw new UsageError(`Unknown option --${name}${known.length ? ` (extension flags: ${known.join(", ")})` : ""}`);
    }
    if (flag.type === "boolean") {
      if (next !== undefined)
        throw new UsageError(`Unexpected argument ${JSON.stringify(next)}: --${name} is a boolean flag (write --${name}=false to turn it off)`);
      values.set(name, inlineValue === undefined ? true : inlineValue !== "false");
      continue;
    }
    const value = inlineValue ?? next;
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    values.set(name, value);
  }
  return values;
}

export const USAGE = `Usage: parley --mode rpc|acp|web [options]
       parley -p [options] [@files...] [messages...]          one question, the answer's text on stdout
       parley --mode json [options] [@files...] [messages...] one run, every event as a JSON line
       parley mcp list [--json]      connect mcp.json's servers and say their state
       parley mcp add|remove <server> ...   change mcp.json as pi mcp add|remove do
       parley install|remove|update|list|config ...  pi's package commands (each takes --help)
       parley auth login|logout|check|print-api-key|print-bearer-token   pi's credentials (parley auth --help)

parley is a drop-in for pi's headless modes: --mode rpc speaks pi's protocol, JSON lines on
stdin/stdout, takes pi's flags and reads pi's files. --mode acp speaks the Agent Client Protocol
on stdin/stdout instead; --mode web serves pi's protocol over WebSockets with a browser UI.
-p (print mode) and --mode json run the prompts given on the command line once and exit; piped
stdin and @file arguments go first into the first prompt. Without --mode, parley runs print mode
when stdin or stdout is not a terminal, as pi does. Diagnostics go to stderr.

Examples:
  ANTHROPIC_API_KEY=sk-ant-… parley --mode rpc --model claude-sonnet-4-5
  ANTHROPIC_API_KEY=sk-ant-… parley -p --model claude-sonnet-4-5 "What does this repository do?"
  git diff | parley -p "Review this change"
  parley --mode json "List the files" > events.jsonl

Options (pi's, with pi's meaning):
  --mode rpc|acp|web|json|text   the mode (text: print mode's output)
  --print, -p [message]          print mode: run the prompts, print the last reply's text, exit
  --provider <name>              model provider
  --model <pattern>              model id or pattern ("provider/id", optional ":<thinking>")
  --api-key <key>                API key for the chosen model's provider
  --thinking <level>             ${CLI_THINKING_LEVELS.join(", ")}
  --models <patterns>            comma-separated models to cycle through (globs allowed)
  --system-prompt <text|file>    replace the system prompt
  --append-system-prompt <text|file>  append to the system prompt (repeatable)
  --no-context-files, -nc        do not load AGENTS.md / CLAUDE.md
  --continue, -c                 continue the latest session of this folder
  --resume, -r                   without a terminal to pick in: the same as --continue
  --session <path|id>            open a session file, or a session by (partial) id
  --session-id <id>              open this project's session with that id, or start one with it
  --fork <path|id>               fork a session (file or partial id) into a new one
  --session-dir <dir>            where session files live
  --no-session                   keep the session in memory only
  --name, -n <name>              name the session
  --tools, -t <names>            comma-separated allowlist of tools (names or * patterns),
                                 or only +name/-name entries to add to or remove from the defaults
  --exclude-tools, -xt <names>   comma-separated tools (names or * patterns) to disable
  --no-tools, -nt                no tools (built-in or extension) enabled at start
  --no-builtin-tools, -nbt       no built-in tools enabled at start (extension tools stay)
  --extension, -e <path>         load an extension (repeatable); a missing file stops parley
  --no-extensions, -ne           skip extension discovery (-e still loads)
  --no-mcp                       no MCP servers connect (the built-in MCP support is off)
  --skill <path>                 load a skill file or folder (repeatable)
  --no-skills, -ns               skip skill discovery
  --prompt-template <path>       load a prompt template file or folder (repeatable)
  --no-prompt-templates, -np     skip prompt template discovery
  --approve, -a / --no-approve, -na   use / ignore the project's .pi/ settings and extensions
  --export <file> [out.html]     write a session file as HTML and exit
  --list-models [search]         list the models that can be used and exit
  --help, -h / --version, -v
  Accepted and without effect, as in pi's RPC mode (they concern pi's terminal UI):
  --theme <path>, --use-theme <name>, --no-themes, --tui-mode <mode>, --verbose, --offline.
  Extensions may register more flags (pi.registerFlag).

parley's own:
  --model-script <file>          offline scripted model for tests and demos (JSON array of turns)
  --max-line-bytes <n>           largest accepted input line (default 134217728)
  --web-host <host>              web mode: address to listen on (default 127.0.0.1)
  --web-port <port>              web mode: port (default 4781; 0 picks a free one)
  --web-token <token>            web mode: access token (default: random per start)
  --web-allowed-origins <list>   web mode: comma-separated origins that may open the WebSocket
  --web-open                     web mode: open the page in the default browser

Models: without --model, parley takes settings.json's defaultProvider/defaultModel, else the first
model that has a key (environment, auth.json, models.json, extension providers). With none, it
answers with a built-in offline demo model (parley/offline) that reads and lists local files.

Files (pi's layout):
  PI_CODING_AGENT_DIR              agent directory (default ~/.pi/agent): settings.json, auth.json,
                                   models.json, sessions/, extensions/, skills/, prompts/,
                                   AGENTS.md, SYSTEM.md, APPEND_SYSTEM.md
  PI_CODING_AGENT_SESSION_DIR      session directory (overridden by --session-dir)
  ./.pi/                           the project's settings.json, extensions/, SYSTEM.md, …
  ~/.parley/                       earlier parley data: its sessions and extensions are still read

API keys (environment; or auth.json, or --api-key):
  ANTHROPIC_API_KEY, ANTHROPIC_OAUTH_TOKEN, OPENAI_API_KEY, AZURE_OPENAI_API_KEY, GEMINI_API_KEY,
  GROQ_API_KEY, CEREBRAS_API_KEY, XAI_API_KEY, OPENROUTER_API_KEY, AI_GATEWAY_API_KEY,
  ZAI_API_KEY, MISTRAL_API_KEY, MINIMAX_API_KEY, MOONSHOT_API_KEY, DEEPSEEK_API_KEY,
  FIREWORKS_API_KEY, HF_TOKEN, OPENCODE_API_KEY, KIMI_API_KEY, AWS_PROFILE / AWS_ACCESS_KEY_ID /
  AWS_BEARER_TOKEN_BEDROCK (Amazon Bedrock), and the other variables pi-ai reads.
  PARLEY_STREAM_DELAY_MS           slow the local models' replies (demos, tests)
`;
