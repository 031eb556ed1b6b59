/**
 * From a root-to-leaf path of entries to the messages the model sees, the way pi builds its
 * session context: compaction replaces older history with a summary, branch summaries and
 * extension messages become messages of their own, everything else stays out.
 */
import type { AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, SessionEntry, SystemMessage } from "@parley/protocol";
import type { EntryOfType } from "./format.js";

/** Entry timestamps are ISO strings; message timestamps are epoch milliseconds. */
function epochMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 0 : ms;
}

export function compactionSummaryMessage(entry: EntryOfType<"compaction">): CompactionSummaryMessage {
  return { role: "compactionSummary", summary: entry.summary, tokensBefore: entry.tokensBefore, timestamp: epochMs(entry.timestamp) };
}

export function branchSummaryMessage(entry: EntryOfType<"branch_summary">): BranchSummaryMessage {
  return { role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: epochMs(entry.timestamp) };
}

export function customMessage(entry: EntryOfType<"custom_message">): CustomMessage {
  return {
    role: "custom",
    customType: entry.customType,
    content: entry.content,
    display: entry.display,
    ...(entry.details !== undefined ? { details: entry.details } : {}),
    timestamp: epochMs(entry.timestamp),
  };
}

/** The message an entry contributes to the context, if any (pi drops empty branch summaries). */
function contextMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return entry.message;
    case "custom_message":
      return customMessage(entry);
    case "branch_summary":
      return entry.summary ? branchSummaryMessage(entry) : undefined;
    default:
      return undefined;
  }
}

type ContextEdit = EntryOfType<"context_edit">;
type EditedBlock = Extract<NonNullable<ContextEdit["replacement"]>["content"], unknown[]>[number];
const isUserBlock = (b: EditedBlock): b is Extract<EditedBlock, { type: "text" | "image" }> => b.type === "text" || b.type === "image";
const isAssistantBlock = (b: EditedBlock): b is Extract<EditedBlock, { type: "text" | "thinking" | "toolCall" }> =>
  b.type === "text" || b.type === "thinking" || b.type === "toolCall";

/**
 * A message as a context_edit entry (newest pi) shows it to the model: left out (null), or with
 * new content. Text given to an assistant or a tool result becomes a text block, as in pi; a
 * block its role cannot hold is left out. Other roles keep their content.
 */
function edited(message: AgentMessage, edit: ContextEdit | undefined): AgentMessage[] {
  if (edit === undefined) return [message];
  if (edit.replacement === null) return [];
  const content = edit.replacement.content;
  const blocks = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
  switch (message.role) {
    case "user":
      return [{ ...message, content: typeof content === "string" ? content : blocks.filter(isUserBlock) }];
    case "custom":
      return [{ ...message, content: typeof content === "string" ? content : blocks.filter(isUserBlock) }];
    case "toolResult":
      return [{ ...message, content: blocks.filter(isUserBlock) }];
    case "assistant":
      return [{ ...message, content: blocks.filter(isAssistantBlock) }];
    default:
      return [message];
  }
}

export interface SessionContext {
  messages: AgentMessage[];
  /** The latest thinking_level_change on the path; "off" when none. */
  thinkingLevel: string;
  /** The latest model_change or assistant message's model on the path. */
  model: { provider: string; modelId: string } | null;
}

/** One entry's contribution to the context: its messages (none for state-only entries). */
export interface ProjectedEntry {
  sourceEntry: SessionEntry;
  messages: AgentMessage[];
}

/**
 * Context of a root-to-leaf path. With a compaction on the path (the latest one wins):
 * its system message (the newest pi's) and its summary first; then, for the newer format, its `retainedTail` messages, or, for the
 * older format, the path's entries from `firstKeptEntryId` up to the compaction (nothing if
 * that id is not on the path); then everything after the compaction.
 */
export function buildSessionContext(path: readonly SessionEntry[]): SessionContext {
  const { entries, thinkingLevel, model } = buildSessionProjection(path);
  return { messages: entries.flatMap((e) => e.messages), thinkingLevel, model };
}

/**
 * The same context with the entry each message comes from (the newest pi's projection): the
 * compaction entry owns its summary and, for the newer format, its retained messages. `kept`:
 * the path's context entries, when the caller has them already.
 */
export function buildSessionProjection(
  path: readonly SessionEntry[],
  kept: readonly SessionEntry[] = contextEntries(path),
): { entries: ProjectedEntry[]; thinkingLevel: string; model: SessionContext["model"] } {
  let thinkingLevel = "off";
  let model: SessionContext["model"] = null;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "message" && entry.message.role === "assistant") {
      model = { provider: entry.message.provider, modelId: entry.message.model };
    }
  }

  // The entries whose messages the context holds, after what a compaction owns (its summary and,
  // for the newer format, its retained messages).
  const entries: ProjectedEntry[] = [];
  let rest = kept;
  const compaction = kept[0];
  if (compaction !== undefined && compaction.type === "compaction") {
    // As the newest pi: a compaction's system message (the prompt it recorded) comes before its
    // summary. It is transcript only: system messages never reach the model (convertToLlm and
    // context_with_system leave them out; the request carries parley's own prompt).
    const system = compaction.systemMessage !== undefined ? [compaction.systemMessage] : [];
    entries.push({ sourceEntry: compaction, messages: [...system, compactionSummaryMessage(compaction), ...(compaction.retainedTail ?? [])] });
    rest = kept.slice(1);
  }
  // As pi: the context edits among those entries apply to them, the latest per target.
  const edits = new Map<string, ContextEdit>();
  for (const entry of rest) if (entry.type === "context_edit") edits.set(entry.targetId, entry);
  for (const entry of rest) {
    const message = contextMessage(entry);
    if (message !== undefined) entries.push({ sourceEntry: entry, messages: edited(message, edits.get(entry.id)) });
  }
  return { entries, thinkingLevel, model };
}

/**
 * The entries the context is built from, as the newest pi's `buildContextEntries()` lists them:
 * the whole path without a compaction; with one (the latest wins), the compaction entry, the
 * entries it keeps before it, then everything after it. Entries without messages (model and
 * level changes, labels, …) are listed too.
 */
export function contextEntries(path: readonly SessionEntry[]): SessionEntry[] {
  const compactionIndex = path.findLastIndex((entry) => entry.type === "compaction");
  const compaction = path[compactionIndex];
  if (compaction === undefined || compaction.type !== "compaction") return [...path];
  // The newer format carries its retained messages itself; the older keeps the path's entries
  // from firstKeptEntryId on (none if that id is not on the path), without the newest pi's
  // system messages (the summary holds them).
  let before: readonly SessionEntry[] = [];
  if (compaction.retainedTail === undefined) {
    const firstKept = path.findIndex((e, i) => i < compactionIndex && e.id === compaction.firstKeptEntryId);
    if (firstKept >= 0) before = path.slice(firstKept, compactionIndex).filter((e) => !(e.type === "message" && e.message.role === "system"));
  }
  return [compaction, ...before, ...path.slice(compactionIndex + 1)];
}

/**
 * The newest pi's `SessionManager.buildSessionProjection()`: every context entry with the
 * messages it contributes (none for a state-only entry), the messages in order, the level and model.
 */
export function sessionProjection(path: readonly SessionEntry[]): {
  entries: ProjectedEntry[];
  messages: AgentMessage[];
  thinkingLevel: string;
  model: SessionContext["model"];
} {
  const kept = contextEntries(path);
  const { entries, thinkingLevel, model } = buildSessionProjection(path, kept);
  const contributed = new Map(entries.map((e) => [e.sourceEntry, e.messages]));
  return {
    entries: kept.map((sourceEntry) => ({ sourceEntry, messages: contributed.get(sourceEntry) ?? [] })),
    messages: entries.flatMap((e) => e.messages),
    thinkingLevel,
    model,
  };
}

/**
 * Every message an entry on the path carries, in path order, without compaction's pruning:
 * the full visible history of the branch (compactions appear as their summary message).
 */
export function branchMessages(path: readonly SessionEntry[]): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (const entry of path) {
    const message = entry.type === "compaction" ? compactionSummaryMessage(entry) : contextMessage(entry);
    if (message !== undefined) messages.push(message);
  }
  return messages;
}

/** The text of a user message's content (text blocks joined), as pi shows it for forking. */
export function userText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : [])).join("");
}

/**
 * The recorded system messages of a context replayed into one, as pi-ai 1.6's
 * `getCurrentSystemMessage` does (content appended, sections patched by name, tools added and
 * removed; the first one's timestamp): what a compaction entry snapshots, so the context after it
 * still starts from the prompt and tools the transcript recorded. Undefined without any.
 * (Here rather than from pi-ai, which the session layer does not load.)
 */
export function currentSystemMessage(messages: readonly AgentMessage[]): SystemMessage | undefined {
  const content: string[] = [];
  const sections = new Map<string, string>();
  const tools = new Map<string, unknown>();
  let timestamp: number | undefined;
  for (const message of messages) {
    if (message.role !== "system") continue;
    timestamp ??= message.timestamp;
    const text = typeof message.content === "string" ? message.content : message.content.map((block) => block.text).join("\n");
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
    // Declarations come from files and extension code: one without a name is left out.
    for (const tool of message.toolsRemoved ?? []) {
      const name = toolName(tool);
      if (name !== undefined) tools.delete(name);
    }
    for (const tool of message.toolsAdded ?? []) {
      const name = toolName(tool);
      if (name !== undefined) tools.set(name, tool);
    }
  }
  if (timestamp === undefined && tools.size === 0) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.size > 0 ? { toolsAdded: [...tools.values()] } : {}),
    timestamp: timestamp ?? 0,
  };
}

/** A tool declaration's name; undefined for a malformed one (declarations come from files and extension code). */
export function toolName(tool: unknown): string | undefined {
  return typeof tool === "object" && tool !== null && "name" in tool && typeof tool.name === "string" ? tool.name : undefined;
}
