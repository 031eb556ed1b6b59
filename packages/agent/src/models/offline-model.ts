/**
 * parley's built-in offline model (provider "parley", id "offline", api "parley-offline"): what
 * `parley --mode rpc` talks to when no provider is configured and no API key is in the environment.
 *
 * It is a small rule-based demo that behaves like a coding agent's model, tools included:
 * - a message naming files or directories that exist under the working directory ("what's in
 *   package.json?", "read src/index.ts and README.md", "ls src") makes it call `read` for each file
 *   (and `ls` for each directory);
 * - "list files" / "ls" / "what files are here" makes it call `ls` on the working directory;
 * - on the next call, with the tool results in the context, it summarises what came back: line
 *   count, first heading, top-level JSON keys (name/version/scripts for package.json), exported
 *   names for source files, entries for a listing;
 * - a file it is asked about that does not exist gets "I couldn't find …";
 * - anything else gets an explanation of what it is and how to configure a real model.
 * Without the `ls` tool (off by default) it lists through `bash`; without either (or without
 * `read`) it looks itself and says which tool was missing.
 *
 * The Model's `baseUrl` is the `file://` URL of the working directory it looks at.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type {
  Api,
  AssistantMessage,
  AssistantMessageEventStream,
  Context,
  Message,
  Model,
  SimpleStreamOptions,
  ToolResultMessage,
} from "@earendil-works/pi-ai";
import type { PiAiCore } from "./pi-ai.js";
import { localModel, type PlannedReply, type PlannedToolCall, type ReplyStreamSettings, requestTools, streamPlannedReply } from "./reply-stream.js";
import { PARLEY_PROVIDER } from "./script-model.js";

export const OFFLINE_MODEL_ID = "offline";
export const OFFLINE_API = "parley-offline";

const MAX_PATHS = 8;
const MAX_TOKENS_SCANNED = 400;
const MAX_DIRECT_READ_BYTES = 256 * 1024;

const settingsByBaseUrl = new Map<string, ReplyStreamSettings>();

export interface OfflineModelOptions extends ReplyStreamSettings {
  /** Directory whose files it talks about; defaults to process.cwd(). */
  cwd?: string;
}

/** The offline Model object for a working directory. */
export function createOfflineModel(options: OfflineModelOptions = {}): Model<Api> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const baseUrl = pathToFileURL(cwd).href;
  settingsByBaseUrl.set(baseUrl, { delayMs: options.delayMs ?? 0 });
  return localModel({ id: OFFLINE_MODEL_ID, name: "parley offline demo (no API key)", api: OFFLINE_API, provider: PARLEY_PROVIDER, baseUrl });
}

function cwdOf(model: Model<Api>): string {
  try {
    return fileURLToPath(model.baseUrl);
  } catch {
    return process.cwd();
  }
}

/** pi-ai stream function for api "parley-offline". */
export function streamOfflineModel(pi: PiAiCore, model: Model<Api>, context: Context, options?: SimpleStreamOptions): AssistantMessageEventStream {
  return streamPlannedReply(pi, model, context, options, () => planOfflineReply(context, cwdOf(model)), settingsByBaseUrl.get(model.baseUrl));
}

// ---- planning ------------------------------------------------------------------------------------

/** Decide the reply for a context. Pure apart from reading the file system under `cwd`. */
export function planOfflineReply(context: Context, cwd: string): PlannedReply {
  const messages = context.messages;
  const last = messages[messages.length - 1];
  if (last?.role === "toolResult") return { text: summariseToolResults(messages) };

  const request = latestUserText(messages);
  if (request === undefined) return { text: helpText(cwd) };

  const targets = findPathsIn(request, cwd);
  const files = targets.filter((t) => t.kind === "file");
  const dirs = targets.filter((t) => t.kind === "dir");
  const wantsListing = LIST_INTENT.test(request);
  const listDirs = dirs.length > 0 ? dirs.map((d) => d.path) : wantsListing && files.length === 0 ? ["."] : [];
  const missing = READ_INTENT.test(request) || targets.length === 0 ? findMissingPathsIn(request, cwd) : [];
  const notFound = missing.length > 0 ? `I couldn't find ${andList(missing.map((m) => `\`${m}\``))} in the working directory (${cwd}).` : "";
  if (files.length === 0 && listDirs.length === 0) {
    return { text: notFound ? `${notFound} Ask about a file that exists there, or “list files” to see what is there.` : helpText(cwd, request) };
  }

  const toolNames = new Set(requestTools(context).map((t) => t.name));
  const calls: PlannedToolCall[] = [];
  const direct: string[] = [];
  const lookedMyself = new Set<string>();
  for (const file of files) {
    if (toolNames.has("read")) calls.push({ name: "read", arguments: { path: file.path } });
    else {
      direct.push(summariseFile(file.path, readDirect(resolve(cwd, file.path))));
      lookedMyself.add("read");
    }
  }
  for (const dir of listDirs) {
    // The ls tool is off by default (extensions enable it); bash's ls gives the same listing.
    if (toolNames.has("ls")) calls.push({ name: "ls", arguments: { path: dir } });
    else if (toolNames.has("bash")) calls.push({ name: "bash", arguments: { command: listCommand(dir) } });
    else {
      direct.push(summariseListing(dir, listDirect(resolve(cwd, dir))));
      lookedMyself.add("ls");
    }
  }
  const note =
    lookedMyself.size > 0
      ? `(This session has no ${andList([...lookedMyself].map((t) => `\`${t}\``))} tool${lookedMyself.size > 1 ? "s" : ""}, so I looked ${lookedMyself.has("read") ? "at the files" : "at the folder"} directly.)`
      : "";
  if (calls.length === 0) return { text: [notFound, direct.join("\n\n"), note].filter((t) => t !== "").join("\n\n") };
  const intro = `Let me ${describeCalls(calls)}.`;
  return { text: [notFound, direct.join("\n\n"), note, intro].filter((t) => t !== "").join("\n\n"), toolCalls: calls };
}

/** A listing through bash: one entry a line, folders marked with a slash, like the ls tool's. */
function listCommand(dir: string): string {
  return `ls -1Ap -- '${dir.replace(/'/g, "'\\''")}'`;
}

const LIST_COMMAND = /^ls -1Ap -- '((?:[^']|'\\'')*)'$/;

/** A request to look at a file: "read x", "open x", "what's in x", "show me x", "cat x", "summarise x". */
const READ_INTENT = /\b(read|open|show|cat|view|look at|summari[sz]e|describe|explain|what(?:'s| is) in)\b/i;
/** Looks like a file name: has a path separator or an extension (not an abbreviation such as "e.g."). */
const PATH_LIKE = /^(?:[\w.@-]+\/)*[\w@-][\w.-]*\.[A-Za-z0-9]{1,10}$|^(?:\.{1,2}\/)?[\w.@-]+(?:\/[\w.@-]+)+\/?$/;

/** Tokens of a message that look like paths under `cwd` but do not exist there. */
export function findMissingPathsIn(text: string, cwd: string): string[] {
  const out: string[] = [];
  let words = 0;
  for (const m of text.matchAll(/\S+/g)) {
    if (++words > MAX_TOKENS_SCANNED || out.length >= MAX_PATHS) break;
    const token = m[0]
      .replace(LEADING_JUNK, "")
      .replace(TRAILING_JUNK, "")
      .replace(/['’]s$/, "");
    if (token.includes("://") || !PATH_LIKE.test(token) || /^(e\.g|i\.e|etc)$/i.test(token)) continue;
    if (existingUnder(token, cwd) !== undefined || out.includes(token)) continue;
    const rel = relative(cwd, resolve(cwd, token));
    if (rel.startsWith("..") || isAbsolute(rel)) continue;
    out.push(token);
  }
  return out;
}

const LIST_INTENT =
  /\b(ls|dir|list(ing)?|tree)\b|\bwhat(?:'s| is| are)? (?:the )?(?:files|in (?:this|the) (?:dir|directory|folder|project|repo))\b|\b(?:which|what|show(?: me)?) (?:the )?files\b/i;

/** "read `a` and `b`, and list the working directory" */
function describeCalls(calls: PlannedToolCall[]): string {
  const where = (path: string): string => (path === "." ? "the working directory" : `\`${path}\``);
  const pathsOf = (name: string): string[] => calls.filter((c) => c.name === name).map((c) => where(String(c.arguments.path)));
  const phrases: string[] = [];
  const reads = pathsOf("read");
  const lists = pathsOf("ls");
  const bashLists = calls
    .filter((c) => c.name === "bash")
    .map((c) => LIST_COMMAND.exec(String(c.arguments.command))?.[1])
    .filter((dir): dir is string => dir !== undefined)
    .map((dir) => where(dir.replace(/'\\''/g, "'")));
  if (reads.length > 0) phrases.push(`read ${andList(reads)}`);
  if (lists.length > 0) phrases.push(`list ${andList(lists)}`);
  if (bashLists.length > 0) phrases.push(`list ${andList(bashLists)} with \`ls\` in bash (the \`ls\` tool is not enabled in this session)`);
  return phrases.join(", and ");
}

function andList(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}

function textOf(message: Message): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content.map((b) => (b.type === "text" ? b.text : "")).join("\n");
}

function latestUserText(messages: Message[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "user") return textOf(message);
  }
  return undefined;
}

export interface PathTarget {
  /** As the user wrote it (cleaned), relative to cwd when it was absolute. */
  path: string;
  kind: "file" | "dir";
}

const LEADING_JUNK = /^[([{<"'`“‘@]+/;
const TRAILING_JUNK = /[)\]}>"'`”’,;:!?.]+$/;

/**
 * Existing files and directories under `cwd` that a message mentions, in order of appearance.
 * Tokens are words, `backticked` or "quoted" spans; surrounding punctuation is dropped, "@path"
 * mentions work, paths outside `cwd` are ignored.
 */
export function findPathsIn(text: string, cwd: string): PathTarget[] {
  // Quoted spans (which may contain spaces) and plain words, in order of appearance.
  const spans: { at: number; text: string }[] = [];
  for (const m of text.matchAll(/`([^`\n]+)`|"([^"\n]+)"|(?<!\w)'([^'\n]+)'(?!\w)/g)) {
    spans.push({ at: m.index, text: m[1] ?? m[2] ?? m[3] ?? "" });
  }
  let words = 0;
  for (const m of text.matchAll(/\S+/g)) {
    if (++words > MAX_TOKENS_SCANNED) break;
    spans.push({ at: m.index, text: m[0] });
  }
  const candidates = spans.sort((a, b) => a.at - b.at).map((s) => s.text);

  const found: PathTarget[] = [];
  const seen = new Set<string>();
  for (const raw of candidates) {
    for (const token of variants(raw)) {
      const target = existingUnder(token, cwd);
      if (!target) continue;
      const key = resolve(cwd, target.path);
      if (!seen.has(key)) {
        seen.add(key);
        found.push(target);
      }
      break;
    }
    if (found.length >= MAX_PATHS) break;
  }
  return found;
}

function variants(raw: string): string[] {
  const out: string[] = [];
  const add = (s: string): void => {
    if (s !== "" && s.length <= 1024 && !out.includes(s)) out.push(s);
  };
  add(raw.trim());
  const stripped = raw.trim().replace(LEADING_JUNK, "");
  add(stripped);
  add(stripped.replace(TRAILING_JUNK, ""));
  // "package.json's" → "package.json"
  add(stripped.replace(TRAILING_JUNK, "").replace(/['’]s$/, ""));
  return out;
}

function existingUnder(token: string, cwd: string): PathTarget | undefined {
  if (token.includes("\0") || (/^[.\s]*$/.test(token) && token !== "." && token !== "./")) return undefined;
  const abs = resolve(cwd, token);
  const rel = relative(cwd, abs);
  if (rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel)) return undefined;
  let isDir: boolean;
  try {
    const stat = statSync(abs);
    if (!stat.isFile() && !stat.isDirectory()) return undefined;
    isDir = stat.isDirectory();
  } catch {
    return undefined;
  }
  const path = isAbsolute(token) ? rel || "." : token.replace(/\/+$/, "") || ".";
  return { path, kind: isDir ? "dir" : "file" };
}

// ---- summaries -----------------------------------------------------------------------------------

interface ReadOutcome {
  text: string;
  isError: boolean;
}

function readDirect(abs: string): ReadOutcome {
  try {
    const buf = readFileSync(abs);
    const text = buf.subarray(0, MAX_DIRECT_READ_BYTES).toString("utf8");
    return { text: buf.length > MAX_DIRECT_READ_BYTES ? `${text}\n\n[Showing the first ${MAX_DIRECT_READ_BYTES} bytes]` : text, isError: false };
  } catch (error) {
    return { text: (error as Error).message, isError: true };
  }
}

function listDirect(abs: string): ReadOutcome {
  try {
    const entries = readdirSync(abs, { withFileTypes: true })
      .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
      .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
    return { text: entries.length > 0 ? entries.join("\n") : "(empty directory)", isError: false };
  } catch (error) {
    return { text: (error as Error).message, isError: true };
  }
}

/** Summarise the tool results that follow the last assistant message. */
function summariseToolResults(messages: Message[]): string {
  const results: ToolResultMessage[] = [];
  let assistant: AssistantMessage | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "toolResult") results.unshift(message);
    else {
      if (message?.role === "assistant") assistant = message;
      break;
    }
  }
  const argsById = new Map<string, Record<string, unknown>>();
  for (const block of assistant?.content ?? []) {
    if (block.type === "toolCall") argsById.set(block.id, block.arguments);
  }
  const parts = results.map((result) => {
    const args = argsById.get(result.toolCallId) ?? {};
    const path = typeof args.path === "string" ? args.path : undefined;
    const outcome: ReadOutcome = { text: textOf(result), isError: result.isError };
    if (result.toolName === "read" && path) return summariseFile(path, outcome);
    if (result.toolName === "ls") return summariseListing(path ?? ".", outcome);
    const listed = result.toolName === "bash" && typeof args.command === "string" ? LIST_COMMAND.exec(args.command) : null;
    if (listed) return summariseListing((listed[1] ?? ".").replace(/'\\''/g, "'"), outcome);
    if (outcome.isError) return `\`${result.toolName}\` failed: ${firstLine(outcome.text)}`;
    return `\`${result.toolName}\` returned ${countLines(outcome.text)} line(s).`;
  });
  if (parts.length === 0) return "Done.";
  const closing =
    "\n\nI'm parley's offline demo model, so that is as deep as my analysis goes. Configure a real model " +
    "(`--provider`, `--model`, `--api-key`, or a key such as ANTHROPIC_API_KEY in the environment) for actual reasoning.";
  return parts.join("\n\n") + closing;
}

const TRUNCATION_NOTICE = /\n\n\[(?:Showing lines \d+-\d+ of (\d+)[^\]]*|(\d+) more lines in file[^\]]*|Showing the first \d+ bytes)\]$/;

function countLines(text: string): number {
  if (text === "") return 0;
  const n = text.split("\n").length;
  return text.endsWith("\n") ? n - 1 : n;
}

function firstLine(text: string): string {
  return (text.split("\n").find((l) => l.trim() !== "") ?? "").trim().slice(0, 200);
}

function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

function list(items: string[], max = 8): string {
  const shown = items.slice(0, max).map((s) => `\`${s}\``);
  return items.length > max ? `${shown.join(", ")} and ${items.length - max} more` : shown.join(", ");
}

/** A few sentences about a file's content, by kind. */
export function summariseFile(path: string, outcome: ReadOutcome): string {
  if (outcome.isError) return `**${path}**: I couldn't read it (${firstLine(outcome.text)}).`;
  let content = outcome.text;
  let totalLines: number | undefined;
  const notice = TRUNCATION_NOTICE.exec(content);
  if (notice) {
    content = content.slice(0, notice.index);
    if (notice[1]) totalLines = Number(notice[1]);
  }
  const shownLines = countLines(content);
  if (notice?.[2]) totalLines = shownLines + Number(notice[2]);
  const lines = totalLines ?? shownLines;
  const head = `**${path}**: ${plural(lines, "line")}${notice ? ` (I saw the first ${shownLines})` : ""}`;
  if (content.trim() === "") return `${head}; it is empty.`;
  if (content.startsWith("[Line ") && shownLines === 1) return `**${path}**: ${content}`;

  const ext = extname(path).toLowerCase();
  const name = basename(path).toLowerCase();
  if (ext === ".json" || name.endsWith(".jsonc")) return `${head}. ${describeJson(name, content)}`;
  if (ext === ".md" || ext === ".markdown" || ext === ".mdx") return `${head}. ${describeMarkdown(content)}`;
  if (/^\.(m|c)?(t|j)sx?$/.test(ext)) return `${head}. ${describeScript(content)}`;
  return `${head}. It starts with:\n${quoteLines(content, 3)}`;
}

function quoteLines(content: string, n: number): string {
  return content
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(0, n)
    .map((l) => `> ${l.length > 160 ? `${l.slice(0, 160)}…` : l}`)
    .join("\n");
}

function describeJson(name: string, content: string): string {
  let data: unknown;
  try {
    data = JSON.parse(content);
  } catch {
    return `It looks like JSON but does not parse (it may be truncated or JSONC). It starts with:\n${quoteLines(content, 3)}`;
  }
  if (Array.isArray(data)) return `It is a JSON array of ${plural(data.length, "item")}.`;
  if (typeof data !== "object" || data === null) return `It is a single JSON ${data === null ? "null" : typeof data}.`;
  const obj = data as Record<string, unknown>;
  const keys = Object.keys(obj);
  const out: string[] = [`Top-level keys: ${list(keys, 12)}.`];
  if (name === "package.json") {
    const ident = [obj.name, obj.version].filter((v) => typeof v === "string").join("@");
    if (ident) out.unshift(`It describes the package \`${ident}\`${typeof obj.description === "string" ? ` — “${obj.description}”` : ""}.`);
    const scripts = isRecord(obj.scripts) ? Object.keys(obj.scripts) : [];
    if (scripts.length > 0) out.push(`Scripts: ${list(scripts)}.`);
    const deps = isRecord(obj.dependencies) ? Object.keys(obj.dependencies) : [];
    const devDeps = isRecord(obj.devDependencies) ? Object.keys(obj.devDependencies) : [];
    if (deps.length + devDeps.length > 0) {
      const named = (names: string[], one: string, many: string): string =>
        `${plural(names.length, one, many)}${names.length > 0 ? ` (${list(names, 5)})` : ""}`;
      out.push(`${named(deps, "dependency", "dependencies")} and ${named(devDeps, "dev dependency", "dev dependencies")}.`);
    }
  }
  return out.join(" ");
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function describeMarkdown(content: string): string {
  const headings = [...content.matchAll(/^(#{1,6})\s+(.+?)\s*#*\s*$/gm)].map((m) => ({ level: m[1]?.length ?? 1, text: m[2] ?? "" }));
  const out: string[] = [];
  const first = headings[0];
  if (first) out.push(`Its first heading is “${first.text}”`);
  const sections = headings.filter((h) => h.level === 2).map((h) => h.text);
  if (sections.length > 0) out.push(`sections include ${list(sections, 6)}`);
  const para = content
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .find((p) => p !== "" && !p.startsWith("#") && !p.startsWith("```") && !p.startsWith("<") && !p.startsWith("!["));
  let text = out.length > 0 ? `${out.join("; ")}.` : "It has no headings.";
  if (para) {
    const flat = para.replace(/\s+/g, " ");
    text += ` It opens with: “${flat.length > 200 ? `${flat.slice(0, 200)}…` : flat}”`;
  }
  return text;
}

function describeScript(content: string): string {
  const exports = [
    ...content.matchAll(
      /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm,
    ),
  ].map((m) => m[2] ?? "");
  const reexports = [...content.matchAll(/^export\s+(?:\*|\{[^}]*\})\s+from\s+["']([^"']+)["']/gm)].map((m) => m[1] ?? "");
  const imports = [...content.matchAll(/^import\s[^;]*?from\s+["']([^"']+)["']|^import\s+["']([^"']+)["']/gm)].length;
  const out: string[] = [];
  if (exports.length > 0) out.push(`It exports ${list(exports)}`);
  if (reexports.length > 0) out.push(`re-exports from ${list(reexports, 5)}`);
  if (imports > 0) out.push(`has ${plural(imports, "import")}`);
  if (out.length === 0) return `It starts with:\n${quoteLines(content, 3)}`;
  return `${out.join(", ")}.`;
}

export function summariseListing(path: string, outcome: ReadOutcome): string {
  const where = path === "." ? "The working directory" : `\`${path}\``;
  if (outcome.isError) return `${where}: I couldn't list it (${firstLine(outcome.text)}).`;
  if (outcome.text.trim() === "(empty directory)") return `${where} is empty.`;
  const entries = outcome.text.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("["));
  const dirs = entries.filter((e) => e.endsWith("/"));
  const files = entries.filter((e) => !e.endsWith("/"));
  const parts: string[] = [];
  if (dirs.length > 0) parts.push(`${plural(dirs.length, "directory", "directories")} (${list(dirs, 10)})`);
  if (files.length > 0) parts.push(`${plural(files.length, "file")} (${list(files, 10)})`);
  const more = outcome.text.includes("limit reached") ? " The listing was cut off, so there are more." : "";
  return `${where} has ${parts.join(" and ")}.${more}`;
}

// ---- help ----------------------------------------------------------------------------------------

const NOTABLE = ["package.json", "README.md", "readme.md", "tsconfig.json", "Cargo.toml", "pyproject.toml", "go.mod", "Makefile"];

/** What it says when it cannot serve a request (`request`), or to introduce itself. */
export function helpText(cwd: string, request?: string): string {
  let example = "package.json";
  let listed: string[] = [];
  try {
    listed = readdirSync(cwd);
    example = NOTABLE.find((n) => listed.includes(n)) ?? listed.find((n) => !n.startsWith(".") && safeIsFile(resolve(cwd, n))) ?? example;
  } catch {
    // an unreadable cwd still gets the help text
  }
  const opening =
    request !== undefined && request.trim() !== ""
      ? "I can't answer that: I'm parley's built-in **offline demo model**, what parley runs when no model provider is configured and no API key is found in the environment. My replies come from a few local rules, not an LLM."
      : "Hi! I'm parley's built-in **offline demo model**, what parley runs when no model provider is configured and no API key is found in the environment. My replies come from a few local rules, not an LLM.";
  return [
    opening,
    "",
    "What I can do here:",
    `- Look at files in the working directory: ask e.g. “what's in ${example}?” or “read src/index.ts and README.md”. I call the \`read\` tool for each file and then summarise it (line count, first heading, JSON keys, exports).`,
    "- List a directory: “list files”, “ls”, or “ls src”. I call the `ls` tool, or `bash` with `ls` when `ls` is not enabled (parley enables `read`, `bash`, `edit` and `write` by default).",
    "- Tell you when a file you name is not there.",
    "",
    "To talk to a real model, start parley with a provider and key:",
    "`parley --mode rpc --provider anthropic --model claude-sonnet-4-5 --api-key sk-...`",
    "or export the provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY, GROQ_API_KEY, XAI_API_KEY, MISTRAL_API_KEY, DEEPSEEK_API_KEY, …) and parley picks the provider up on start. `--thinking LEVEL` sets the reasoning effort; `--model-script FILE` replays scripted replies for tests.",
  ].join("\n");
}

function safeIsFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
