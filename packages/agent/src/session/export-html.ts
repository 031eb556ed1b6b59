/**
 * export_html: the active branch as one self-contained page a person can read and share.
 *
 * Everything is rendered here, in HTML, so the page works with scripts disabled and can be
 * archived or mailed: inline CSS, no scripts, images as data: URLs, and a Content-Security-Policy
 * that forbids scripts should anything slip through. Every string from the session is escaped.
 *
 * Default path, pi's name for it so that a script written for pi finds the page:
 * `pi-session-<file basename>.html`; for an in-memory session, `pi-session-<session id>.html`
 * (export_html refuses those, as pi; in-process callers may export them). It and a relative `outputPath` are
 * taken relative to the folder the caller names (front doors: the process's, as pi writes them),
 * and reported as pi 1.6 reports them (`reportedExportPath`).
 */
import { closeSync, existsSync, fstatSync, fsyncSync, linkSync, openSync, readSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import type { AgentMessage, SessionEntry } from "@parley/protocol";
import type { Session } from "./session.js";
import { READ_NO_WAIT, sniffFile } from "./sniff.js";
import { carriesSystemState, type ShownSystem, type ShownTool, shownSystem, shownTool } from "./export-system.js";
import { expandHome, fromFileUrl } from "../resources/paths.js";

/**
 * The path pi 1.6 reports for an export (export_html's `path`, `--export`'s "Exported to:"): the
 * one given, with `~` and a file URL expanded but a relative one left relative (to the folder the
 * export is written from), or, given none (or ""), the default page's name alone.
 */
export function reportedExportPath(session: Session, outputPath?: string): string {
  if (!outputPath) return `pi-session-${session.file !== undefined ? basename(session.file, ".jsonl") : session.id}.html`;
  const expanded = expandHome(outputPath);
  return /^file:\/\//.test(expanded) ? (fromFileUrl(expanded) ?? expanded) : expanded;
}

/** An export refused because of what is at the target path; the message says why. */
export class ExportTargetError extends Error {
  override name = "ExportTargetError";
}

/**
 * Writes the page and returns its absolute path. The target must not exist, or be a page an
 * earlier export wrote (parley's generator tag in its head): parley never writes over a file it
 * did not create, and above all never over a session (the current one or any other).
 */
export function exportHtml(session: Session, outputPath?: string, baseDir: string = session.cwd || process.cwd(), current?: CurrentSystem): string {
  // A relative path is the user's, as in pi: front doors pass their working directory, never the
  // folder a loaded session was recorded in (another project, or one that no longer exists).
  const path = resolve(baseDir, reportedExportPath(session, outputPath));
  const content = renderSessionHtml(session, current);
  if (session.file !== undefined && sameFile(path, session.file)) {
    throw new ExportTargetError(`${path} is the current session file; exporting there would destroy the session. Choose another outputPath`);
  }
  const target = sniffFile(path);
  if (target.kind === "session")
    throw new ExportTargetError(`${path} holds a session; parley never writes an export over a session. Choose another outputPath`);
  // pi writes straight to the path and fails as the file system does: the folder is not created.
  if (!existsSync(dirname(path))) throw new Error(`ENOENT: no such file or directory, open '${reportedExportPath(session, outputPath)}'`);
  if (target.kind === "missing") {
    // Written whole beside it, then linked in place: a kill never leaves half a page, and a file
    // that appeared at the path meanwhile is not overwritten either (link fails with EEXIST).
    const temp = writeTemp(path, content);
    try {
      linkSync(temp, path);
    } catch (error) {
      // A file system without hard links: created exclusively in place instead.
      if ((error as NodeJS.ErrnoException).code === "EEXIST") throw error;
      writeFileSync(path, content, { encoding: "utf8", flag: "wx" });
    } finally {
      rmSync(temp, { force: true });
    }
    return path;
  }
  if (!isParleyExport(path)) {
    const what = target.kind === "other" && !target.reason.startsWith("its first line") ? ` (${target.reason})` : "";
    throw new ExportTargetError(
      `${path} already exists${what} and is not a page parley exported; parley does not overwrite files it did not create. Choose another outputPath or remove the file`,
    );
  }
  // An earlier export: replaced whole (a temporary file renamed over it), never left half written.
  const temp = writeTemp(path, content);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true }); // ours: wx created it just above
    throw error;
  }
  return path;
}

/** The page in a new file beside `path`, flushed to disk; returns its path. */
function writeTemp(path: string, content: string): string {
  const temp = `${path}.${process.pid}.${Date.now()}.tmp`;
  // wx: created here, so removing it after is never removing someone else's file.
  const fd = openSync(temp, "wx", 0o666);
  try {
    writeFileSync(fd, content, "utf8");
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  return temp;
}

/** The generator tag every page from renderSessionHtml carries in its head. */
const GENERATOR_TAG = '<meta name="generator" content="parley">';

/** A regular file whose head (first 4 KiB) carries parley's generator tag. */
function isParleyExport(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, READ_NO_WAIT);
    if (!fstatSync(fd).isFile()) return false;
    const head = Buffer.alloc(4096);
    const read = readSync(fd, head, 0, head.length, 0);
    const text = head.toString("utf8", 0, read);
    return text.startsWith("<!DOCTYPE html>") && text.includes(GENERATOR_TAG);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Same file after following symlinks (the session file may not exist yet: then compare paths). */
function sameFile(a: string, b: string): boolean {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return real(a) === real(b);
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * The exporting agent's tools: shown, as pi 1.6 shows them, for a session whose branch records no
 * system message (one written before they were recorded). Its prompt, as pi replays it from that
 * transcript, is empty: none is shown.
 */
export interface CurrentSystem {
  tools: readonly unknown[];
}

/** The page, as a string. */
export function renderSessionHtml(session: Session, current?: CurrentSystem): string {
  const branch = session.branch();
  const stats = session.stats();
  const offBranch = session.entries().length - branch.length;
  const title = session.name ?? `Session ${session.id}`;
  const created = session.header.timestamp ? formatTime(session.header.timestamp) : "";

  const facts: [string, string][] = [
    ["Session", session.id],
    ["Directory", session.cwd],
    ["Created", created],
    ...(session.file !== undefined ? ([["File", session.file]] as [string, string][]) : []),
    ...(session.header.parentSession !== undefined ? ([["Forked from", session.header.parentSession]] as [string, string][]) : []),
    ["Messages", `${stats.userMessages} user, ${stats.assistantMessages} assistant, ${stats.toolCalls} tool calls`],
    ["Tokens", `${stats.tokens.input} in, ${stats.tokens.output} out, ${stats.tokens.cacheRead} cache read, ${stats.tokens.cacheWrite} cache write`],
    ["Cost", `$${stats.cost.toFixed(4)}`],
  ];
  // The first entry that sets the prompt starts it; later system messages change it.
  const leading = branch.find(carriesSystemState);
  const recorded = branch.some((entry) => entry.type === "message" && entry.message.role === "system");
  const fallback = !recorded && current ? renderCurrentSystem(current) : "";
  const body = fallback + branch.map((entry) => renderEntry(entry, session.label(entry.id), entry === leading)).join("\n");
  const note =
    offBranch > 0
      ? `<p class="note">Showing the active branch (${branch.length} entries). ${offBranch} entr${offBranch === 1 ? "y is" : "ies are"} on other branches and not shown.</p>`
      : "";

  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
${GENERATOR_TAG}
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1>${escapeHtml(title)}</h1>
<dl>${facts.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join("")}</dl>
${note}
</header>
<main>
${body || '<p class="note">This session has no entries yet.</p>'}
</main>
</body>
</html>
`;
}

function renderEntry(entry: SessionEntry, label: string | undefined, leading: boolean): string {
  const badge = label ? ` <span class="label">${escapeHtml(label)}</span>` : "";
  const time = `<time datetime="${escapeHtml(entry.timestamp)}">${escapeHtml(formatTime(entry.timestamp))}</time>`;
  const anchor = ` id="entry-${escapeHtml(entry.id)}"`;
  switch (entry.type) {
    case "message":
      if (entry.message.role === "system") return renderSystem(shownSystem(entry.message, leading), anchor, time, badge);
      return renderMessage(entry.message, anchor, time, badge);
    case "custom_message":
      if (!entry.display) return "";
      return block("custom", `Extension message · ${entry.customType}`, anchor, time, badge, renderContent(entry.content));
    case "compaction":
      return block(
        "summary",
        `Compacted earlier context (${entry.tokensBefore} tokens)`,
        anchor,
        time,
        badge,
        `<div class="text">${renderText(entry.summary)}</div>`,
      );
    case "branch_summary":
      return block("summary", "Summary of another branch", anchor, time, badge, `<div class="text">${renderText(entry.summary)}</div>`);
    case "model_change":
      return event(`Model changed to ${entry.provider}/${entry.modelId}`, anchor, time, badge);
    case "thinking_level_change":
      return event(`Thinking level set to ${entry.thinkingLevel}`, anchor, time, badge);
    case "session_info":
      return entry.name ? event(`Session named “${entry.name}”`, anchor, time, badge) : event("Session name cleared", anchor, time, badge);
    case "custom":
    case "label":
    case "usage":
    case "context_edit":
      // Extension state, bookmarks, side calls' usage and context edits (the newest pi's): not
      // conversation (labels show as badges on their targets; the edited message as written).
      return "";
  }
}

function renderMessage(message: AgentMessage, anchor: string, time: string, badge: string): string {
  switch (message.role) {
    case "user":
      return block("user", "User", anchor, time, badge, renderContent(message.content));
    case "assistant": {
      const parts = message.content.map((part) => {
        if (part.type === "text") return `<div class="text">${renderText(part.text)}</div>`;
        if (part.type === "thinking") {
          const text = part.redacted || !part.thinking ? "<em>(reasoning withheld by the provider)</em>" : renderText(part.thinking);
          return `<details class="thinking"><summary>Thinking</summary><div class="text">${text}</div></details>`;
        }
        return `<div class="toolcall"><div class="toolname">→ ${escapeHtml(part.name)}</div><pre><code>${escapeHtml(json(part.arguments))}</code></pre></div>`;
      });
      if (message.stopReason === "error" || message.stopReason === "aborted") {
        const what = message.stopReason === "aborted" ? "Aborted" : "Error";
        parts.push(`<div class="error">${what}${message.errorMessage ? `: ${escapeHtml(message.errorMessage)}` : ""}</div>`);
      }
      const model = message.model ? ` · ${message.provider}/${message.model}` : "";
      return block("assistant", `Assistant${model}`, anchor, time, badge, parts.join("\n"));
    }
    case "toolResult":
      return block(
        message.isError ? "tool failed" : "tool",
        `${message.isError ? "Tool error" : "Tool result"} · ${message.toolName}`,
        anchor,
        time,
        badge,
        renderContent(message.content, true),
      );
    case "bashExecution": {
      const status = message.cancelled ? "cancelled" : message.exitCode === undefined ? "killed" : `exit ${message.exitCode}`;
      const failed = message.cancelled || message.exitCode !== 0;
      const out = `<pre class="command"><code>$ ${escapeHtml(message.command)}</code></pre><pre><code>${escapeHtml(message.output)}</code></pre>${
        message.truncated ? '<p class="note">Output truncated.</p>' : ""
      }`;
      return block(failed ? "tool failed" : "tool", `Shell · ${status}`, anchor, time, badge, out);
    }
    case "custom":
      if (!message.display) return "";
      return block("custom", `Extension message · ${message.customType}`, anchor, time, badge, renderContent(message.content));
    case "branchSummary":
      return block("summary", "Summary of another branch", anchor, time, badge, `<div class="text">${renderText(message.summary)}</div>`);
    case "compactionSummary":
      return block("summary", "Compacted earlier context", anchor, time, badge, `<div class="text">${renderText(message.summary)}</div>`);
    case "system":
      // Rendered from its entry (renderSystem): whether it starts the prompt depends on the branch.
      return "";
  }
}

/** A system message: the whole prompt and the tools, or what a later one changes. */
function renderSystem(shown: ShownSystem, anchor: string, time: string, badge: string): string {
  const heading = shown.leading ? "System prompt" : `System prompt update${shown.changes ? ` · ${shown.changes}` : ""}`;
  const parts = [
    shown.text
      ? `<details class="prompt"${shown.leading ? "" : " open"}><summary>${shown.leading ? "Prompt" : "Changes"}</summary><pre><code>${escapeHtml(shown.text)}</code></pre></details>`
      : "",
    renderTools(shown.leading ? "Available tools" : "Tools added", shown.added),
    shown.removed.length > 0
      ? `<div class="tools"><h3>Tools removed</h3><ul>${shown.removed.map((name) => `<li><code>${escapeHtml(name)}</code></li>`).join("")}</ul></div>`
      : "",
  ];
  return block("system", heading, anchor, time, badge, parts.filter((part) => part.length > 0).join("\n"));
}

function renderTools(title: string, tools: readonly ShownTool[]): string {
  if (tools.length === 0) return "";
  const items = tools.map((tool) => {
    const params = tool.parameters.map(
      (p) =>
        `<li><code>${escapeHtml(p.name)}</code> <span class="note">${escapeHtml(p.type)}, ${p.required ? "required" : "optional"}</span>${p.description ? ` — ${escapeHtml(p.description)}` : ""}</li>`,
    );
    const head = `<code>${escapeHtml(tool.name)}</code> — ${escapeHtml(tool.description)}`;
    return params.length > 0 ? `<li><details><summary>${head}</summary><ul>${params.join("")}</ul></details></li>` : `<li>${head}</li>`;
  });
  return `<div class="tools"><h3>${escapeHtml(title)}</h3><ul>${items.join("")}</ul></div>`;
}

/** The exporting agent's tools, for a branch that records no system message. */
function renderCurrentSystem(current: CurrentSystem): string {
  const tools = current.tools.flatMap(shownTool);
  if (tools.length === 0) return "";
  return `${block("system", "Tools (the exporting agent's; this session records no system prompt)", "", "", "", renderTools("Available tools", tools))}\n`;
}

function block(kind: string, heading: string, anchor: string, time: string, badge: string, inner: string): string {
  return `<section class="msg ${kind}"${anchor}><h2>${escapeHtml(heading)}${badge} ${time}</h2>\n${inner}\n</section>`;
}

function event(text: string, anchor: string, time: string, badge: string): string {
  return `<p class="event"${anchor}>${escapeHtml(text)}${badge} ${time}</p>`;
}

type Content = string | readonly ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[];

function renderContent(content: Content, preformatted = false): string {
  if (typeof content === "string") return renderTextBlock(content, preformatted);
  return content
    .map((part) => {
      if (part.type === "text") return renderTextBlock(part.text, preformatted);
      // Only well-formed base64 of a raster type: an attacker-controlled mimeType must not reach the page.
      if (/^image\/(png|jpeg|gif|webp)$/.test(part.mimeType) && /^[A-Za-z0-9+/]*={0,2}$/.test(part.data)) {
        return `<img alt="image" src="data:${part.mimeType};base64,${part.data}">`;
      }
      return `<p class="note">[image: ${escapeHtml(part.mimeType)}]</p>`;
    })
    .join("\n");
}

function renderTextBlock(text: string, preformatted: boolean): string {
  return preformatted ? `<pre><code>${escapeHtml(text)}</code></pre>` : `<div class="text">${renderText(text)}</div>`;
}

/** Prose with ``` fenced code as <pre>; everything else keeps its line breaks via CSS. */
function renderText(text: string): string {
  const out: string[] = [];
  const fence = /^```[^\n]*\n([\s\S]*?)^```[ \t]*$/gm;
  let last = 0;
  for (let match = fence.exec(text); match !== null; match = fence.exec(text)) {
    out.push(prose(text.slice(last, match.index)));
    out.push(`<pre><code>${escapeHtml((match[1] ?? "").replace(/\n$/, ""))}</code></pre>`);
    last = match.index + match[0].length;
  }
  out.push(prose(text.slice(last)));
  return out.join("");
}

function prose(text: string): string {
  const trimmed = text.replace(/^\n+|\n+$/g, "");
  return trimmed ? `<p>${escapeHtml(trimmed)}</p>` : "";
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, " UTC");
}

const CSS = `
:root{--bg:#fbfbfa;--fg:#1d1f21;--muted:#6a6f76;--card:#fff;--border:#e2e3e5;--user:#eef4ff;--user-b:#7aa2f7;
--assistant:#fff;--assistant-b:#9aa0a6;--tool:#f6f7f8;--tool-b:#b0b4ba;--error:#fdecec;--error-b:#d93025;
--summary:#fff8e6;--summary-b:#e0a800;--custom:#f3effc;--custom-b:#8e6fd8;--code:#f2f3f5;--label:#e7f5ea;--label-fg:#1e7b34}
@media (prefers-color-scheme: dark){:root{--bg:#16181c;--fg:#e3e5e8;--muted:#9aa0a6;--card:#1e2126;--border:#30343a;
--user:#1c2638;--user-b:#7aa2f7;--assistant:#1e2126;--assistant-b:#6b7280;--tool:#1a1d21;--tool-b:#4b5058;
--error:#3a1f1f;--error-b:#f28b82;--summary:#2e2817;--summary-b:#e0b44a;--custom:#251f33;--custom-b:#a78bfa;
--code:#111317;--label:#183222;--label-fg:#81c995}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
header,main{max-width:60rem;margin:0 auto;padding:1rem 1.25rem}
header{border-bottom:1px solid var(--border)}
h1{font-size:1.4rem;margin:.5rem 0 .75rem;overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:0;font-size:.85rem}
dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.msg{background:var(--card);border:1px solid var(--border);border-left:4px solid var(--assistant-b);border-radius:6px;padding:.6rem .9rem;margin:.9rem 0}
.msg h2{font-size:.8rem;font-weight:600;color:var(--muted);margin:0 0 .35rem;text-transform:none}
.msg.user{background:var(--user);border-left-color:var(--user-b)}
.msg.tool{background:var(--tool);border-left-color:var(--tool-b)}
.msg.failed{background:var(--error);border-left-color:var(--error-b)}
.msg.summary{background:var(--summary);border-left-color:var(--summary-b)}
.msg.custom{background:var(--custom);border-left-color:var(--custom-b)}
.msg.system{border-left-color:var(--muted)}
.msg.system h3{font-size:.8rem;font-weight:600;color:var(--muted);margin:.5rem 0 .2rem}
.msg.system ul{margin:.2rem 0;padding-left:1.2rem;font-size:.85rem}
details.prompt summary{cursor:pointer;font-size:.85rem;color:var(--muted)}
.text p{margin:.35rem 0;white-space:pre-wrap;overflow-wrap:anywhere}
pre{background:var(--code);border:1px solid var(--border);border-radius:4px;padding:.5rem .7rem;overflow-x:auto;margin:.4rem 0;
font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.toolcall .toolname{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem;font-weight:600;margin-top:.4rem}
details.thinking{color:var(--muted);margin:.3rem 0}
details.thinking summary{cursor:pointer;font-size:.85rem}
.error{background:var(--error);border:1px solid var(--error-b);color:var(--fg);border-radius:4px;padding:.4rem .6rem;margin:.4rem 0;font-weight:600}
.event{color:var(--muted);font-size:.8rem;text-align:center;margin:.6rem 0}
.note{color:var(--muted);font-size:.85rem}
.label{background:var(--label);color:var(--label-fg);border-radius:3px;padding:0 .35rem;font-size:.75rem;font-weight:600}
time{font-weight:400;font-size:.75rem;color:var(--muted);margin-left:.4rem}
img{max-width:100%;border-radius:4px;margin:.4rem 0}
`;
