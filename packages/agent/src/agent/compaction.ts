/**
 * Compaction: summarise older context with the model so the conversation fits the window.
 *
 * The session keeps everything; a `compaction` entry records a summary and the id of the first
 * entry kept verbatim (`firstKeptEntryId`), and `buildContext()` then yields the summary followed
 * by the entries from that id on. Choosing the cut:
 *
 * - Only entries since the previous compaction's kept boundary are considered (a previous summary
 *   is handed to the model so the new one carries it forward).
 * - Walking back from the newest message, estimated tokens (characters / 4) are added up until
 *   `keepRecentTokens` is reached; the cut is the nearest valid cut point at or after that message.
 *   Valid cut points are user, assistant, bashExecution and custom messages, custom_message and
 *   branch_summary entries; never a tool result, so a tool call always keeps its results.
 * - When everything fits the budget (or the cut would leave nothing to summarise), the cut moves to
 *   the start of the latest turn, so a compaction always shrinks the context; with a single turn it
 *   lands on an assistant message (a "split turn", as pi calls it).
 *
 * Extensions see `session_before_compact` (they may cancel or supply the summary) and
 * `session_compact` afterwards. Wire events: `compaction_start`, then exactly one `compaction_end`.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { AssistantMessage, Message, Usage } from "@mariozechner/pi-ai";
import type { SessionEntry } from "@parley/protocol";
import {
  calculateContextTokens,
  convertToLlm,
  DEFAULT_COMPACTION_SETTINGS,
  estimateTokens,
  serializeConversation,
  type CompactionSettings,
} from "../extensions/compat/messages.js";
import { loadPiAi } from "../models/pi-ai.js";
import { registerParleyProviders } from "../models/register.js";
import { branchSummaryMessage, buildSessionContext, customMessage } from "../session/context.js";
import type { AgentSession } from "./agent-session.js";
import { errorMessage } from "../error-text.js";

export type { CompactionSettings };

export interface CompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  /** Heuristic size (characters / 4) of the rebuilt context right after compaction. */
  estimatedTokensAfter?: number;
  /** What the summarising call cost; absent when an extension supplied the summary. */
  usage?: Usage;
  details?: unknown;
}

export type CompactionReason = "manual" | "threshold" | "overflow";

/** File operations seen in the summarised messages (pi's shape, handed to extensions). */
export interface FileOperations {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

/** What `session_before_compact` handlers receive as `preparation` (pi's CompactionPreparation). */
export interface CompactionPreparation {
  firstKeptEntryId: string;
  /** Messages that the summary replaces (before the kept part, or before a split turn). */
  messagesToSummarize: AgentMessage[];
  /** When the cut splits a turn: that turn's messages before the cut. */
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  tokensBefore: number;
  previousSummary?: string;
  fileOps: FileOperations;
  settings: CompactionSettings;
}

/** A compaction that did not happen because it was cancelled (extension or abort). */
export class CompactionCancelledError extends Error {
  override readonly name = "CompactionCancelledError";
  constructor(message = "Compaction cancelled") {
    super(message);
  }
}

const SUMMARY_SYSTEM_PROMPT =
  "You write hand-over notes for an AI coding assistant. You are given the transcript of a conversation " +
  "between a user and the assistant. Do not reply to it, do not continue it and do not answer questions " +
  "asked in it: write only the structured summary that is asked for.";

const SUMMARY_INSTRUCTIONS = `Write a summary of the conversation above that lets the assistant carry on the work without the transcript. Use exactly these sections (Markdown headings), be concrete (names, paths, commands, error messages), and leave a section empty rather than invent:

## Goal
What the user wants to achieve.

## Constraints & Preferences
Requirements, conventions and preferences the user stated.

## Progress
### Done
- [x] Finished work.
### In Progress
- [ ] Work that was under way.
### Blocked
- Open problems, if any.

## Key Decisions
- **Decision**: why it was taken.

## Files
Files read, created or changed, with one line on each.

## Next Steps
1. What should happen next, in order.

## Critical Context
Anything else needed to continue (values, identifiers, partial results).`;

const UPDATE_NOTE =
  "A summary of the conversation before this transcript is given in <previous-summary>. Produce one updated summary " +
  "that merges it with the transcript: keep what still holds, move finished items to Done, and add what is new.";

const SPLIT_TURN_NOTE =
  "The transcript ends in the middle of a turn: the rest of that turn is kept verbatim after your summary, " +
  "so make sure the summary says what the user asked for in that turn and what has been done for it so far.";

// ---- token estimates -----------------------------------------------------------------------

/** Context size: the last completed reply's reported usage plus estimates for what came after it. */
export function estimateContextTokens(messages: readonly unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Partial<AssistantMessage> | undefined;
    if (m?.role === "assistant" && m.usage && m.stopReason !== "aborted" && m.stopReason !== "error") {
      let tokens = calculateContextTokens(m.usage);
      for (let j = i + 1; j < messages.length; j++) tokens += estimateTokens(messages[j]);
      return tokens;
    }
  }
  return messages.reduce<number>((sum, m) => sum + estimateTokens(m), 0);
}

// ---- preparation ---------------------------------------------------------------------------

type MessageEntry = Extract<SessionEntry, { type: "message" }>;

/** The message an entry contributes to a summary (compaction entries are handled separately). */
export function entryMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return entry.message as unknown as AgentMessage;
    case "custom_message":
      return customMessage(entry) as unknown as AgentMessage;
    case "branch_summary":
      return entry.summary ? (branchSummaryMessage(entry) as unknown as AgentMessage) : undefined;
    default:
      return undefined;
  }
}

/** Where the kept part may start: never at a tool result (its call must stay), nor at a failed reply. */
function isCutPoint(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const message = (entry as MessageEntry).message as { role: string; stopReason?: string };
  return message.role !== "toolResult" && !(message.role === "assistant" && message.stopReason === "error");
}

/** Where a turn starts: a user message, a user's shell command, or an injected message. */
function isTurnStart(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const role = (entry as MessageEntry).message.role;
  return role === "user" || role === "bashExecution";
}

export function createFileOps(): FileOperations {
  return { read: new Set(), written: new Set(), edited: new Set() };
}

export function collectFileOps(message: AgentMessage, ops: FileOperations): void {
  if (message.role !== "assistant") return;
  for (const block of message.content) {
    if (block.type !== "toolCall") continue;
    const path = (block.arguments as { path?: unknown } | undefined)?.path;
    if (typeof path !== "string" || path === "") continue;
    if (block.name === "read") ops.read.add(path);
    else if (block.name === "write") ops.written.add(path);
    else if (block.name === "edit") ops.edited.add(path);
  }
}

export function fileLists(ops: FileOperations): { readFiles: string[]; modifiedFiles: string[] } {
  const modified = new Set([...ops.written, ...ops.edited]);
  return {
    readFiles: [...ops.read].filter((p) => !modified.has(p)).sort(),
    modifiedFiles: [...modified].sort(),
  };
}

export function fileListsText(readFiles: string[], modifiedFiles: string[]): string {
  let text = "";
  if (readFiles.length > 0) text += `\n\n<read-files>\n${readFiles.join("\n")}\n</read-files>`;
  if (modifiedFiles.length > 0) text += `\n\n<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`;
  return text;
}

/**
 * Decides what to summarise and what to keep, from the active branch's entries. Throws when there
 * is nothing to compact.
 */
export function prepareCompaction(path: readonly SessionEntry[], settings: CompactionSettings = DEFAULT_COMPACTION_SETTINGS): CompactionPreparation {
  if (path.at(-1)?.type === "compaction") throw new Error("Already compacted");

  let previousIndex = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]?.type === "compaction") {
      previousIndex = i;
      break;
    }
  }
  const previous = path[previousIndex];
  const prior = previous?.type === "compaction" ? previous : undefined;
  let start = 0;
  // Messages a previous compaction kept outside the path (newer format): always summarised now.
  const retained: AgentMessage[] = [];
  if (prior) {
    if (prior.retainedTail !== undefined) {
      retained.push(...(prior.retainedTail as unknown as AgentMessage[]));
      start = previousIndex + 1;
    } else {
      const kept = path.findIndex((e, i) => i < previousIndex && e.id === prior.firstKeptEntryId);
      start = kept >= 0 ? kept : previousIndex + 1;
    }
  }

  const cuts: number[] = [];
  for (let i = start; i < path.length; i++) if (isCutPoint(path[i]!)) cuts.push(i);
  // A cut is useful only when something lies before it to summarise.
  const firstMessage = path.findIndex((e, i) => i >= start && e.type !== "compaction" && entryMessage(e) !== undefined);
  const useful = (cut: number): boolean => retained.length > 0 || (firstMessage !== -1 && firstMessage < cut);

  let cut = -1;
  let tokens = 0;
  for (let i = path.length - 1; i >= start; i--) {
    const entry = path[i]!;
    if (entry.type === "compaction") continue;
    const message = entryMessage(entry);
    if (!message) continue;
    tokens += estimateTokens(message);
    if (tokens >= settings.keepRecentTokens) {
      cut = cuts.find((c) => c >= i) ?? -1;
      break;
    }
  }
  if (cut === -1 || !useful(cut)) {
    // Everything fits the budget: keep only the latest turn (or, with one turn, its last reply).
    const turnStarts = cuts.filter((c) => isTurnStart(path[c]!) && useful(c));
    cut = turnStarts.at(-1) ?? cuts.filter(useful).at(-1) ?? -1;
  }
  if (cut === -1) throw new Error("Nothing to compact (session too small)");

  // Does the cut split a turn? Then the turn's start is where the summarised history ends.
  const cutEntry = path[cut]!;
  let turnStart = -1;
  if (!isTurnStart(cutEntry)) {
    for (let i = cut - 1; i >= start; i--) {
      if (isTurnStart(path[i]!)) {
        turnStart = i;
        break;
      }
    }
  }
  const isSplitTurn = turnStart !== -1;
  const historyEnd = isSplitTurn ? turnStart : cut;
  const firstKeptIndex = cut;
  // Settings entries (model, thinking level, labels) right before the cut stay with the kept part.
  while (cut > start) {
    const before = path[cut - 1]!;
    if (before.type === "compaction" || entryMessage(before) !== undefined) break;
    cut--;
  }

  const messagesToSummarize: AgentMessage[] = [...retained];
  for (let i = start; i < historyEnd; i++) {
    const message = entryMessage(path[i]!);
    if (message) messagesToSummarize.push(message);
  }
  const turnPrefixMessages: AgentMessage[] = [];
  if (isSplitTurn) {
    for (let i = turnStart; i < firstKeptIndex; i++) {
      const message = entryMessage(path[i]!);
      if (message) turnPrefixMessages.push(message);
    }
  }

  // File operations accumulate across compactions (unless an extension wrote the last one).
  const fileOps = createFileOps();
  const priorDetails = prior && !prior.fromHook ? (prior.details as { readFiles?: unknown; modifiedFiles?: unknown } | undefined) : undefined;
  if (Array.isArray(priorDetails?.readFiles)) for (const p of priorDetails.readFiles) if (typeof p === "string") fileOps.read.add(p);
  if (Array.isArray(priorDetails?.modifiedFiles)) for (const p of priorDetails.modifiedFiles) if (typeof p === "string") fileOps.edited.add(p);
  for (const message of [...messagesToSummarize, ...turnPrefixMessages]) collectFileOps(message, fileOps);

  return {
    firstKeptEntryId: path[cut]!.id,
    messagesToSummarize,
    turnPrefixMessages,
    isSplitTurn,
    tokensBefore: estimateContextTokens(buildSessionContext(path).messages),
    ...(prior ? { previousSummary: prior.summary } : {}),
    fileOps,
    settings,
  };
}

// ---- summarising ----------------------------------------------------------------------------

async function generateSummary(
  agent: AgentSession,
  preparation: CompactionPreparation,
  customInstructions: string | undefined,
  signal: AbortSignal,
): Promise<{ summary: string; usage: Usage }> {
  const transcript = serializeConversation(convertToLlm([...preparation.messagesToSummarize, ...preparation.turnPrefixMessages]));
  let text = `<conversation>\n${transcript}\n</conversation>\n\n`;
  if (preparation.previousSummary) text += `<previous-summary>\n${preparation.previousSummary}\n</previous-summary>\n\n${UPDATE_NOTE}\n\n`;
  if (preparation.isSplitTurn) text += `${SPLIT_TURN_NOTE}\n\n`;
  text += SUMMARY_INSTRUCTIONS;
  if (customInstructions?.trim()) text += `\n\nAdditional focus: ${customInstructions.trim()}`;
  return completeSummary(agent, text, Math.floor(preparation.settings.reserveTokens * 0.8), signal);
}

/**
 * One summarisation call with the agent's current model: `prompt` (transcript and instructions)
 * in, the reply's text out. Throws CompactionCancelledError when `signal` aborts it.
 */
export async function completeSummary(agent: AgentSession, prompt: string, maxTokens: number, signal: AbortSignal): Promise<{ summary: string; usage: Usage }> {
  const pi = await loadPiAi();
  const model = agent.model;
  const messages: Message[] = [{ role: "user", content: [{ type: "text", text: prompt }], timestamp: Date.now() }];
  const apiKey = agent.models.getApiKey(model.provider);
  const level = agent.thinkingLevel;
  // The summary may come from a local model before any run loaded the loop (which registers them).
  await registerParleyProviders();
  const response = await pi.completeSimple(
    model,
    { systemPrompt: SUMMARY_SYSTEM_PROMPT, messages },
    {
      signal,
      maxTokens,
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(model.reasoning && level !== "off" ? { reasoning: level } : {}),
    },
  );
  if (response.stopReason === "aborted" || signal.aborted) throw new CompactionCancelledError();
  if (response.stopReason === "error") throw new Error(`Summarization failed: ${response.errorMessage || "unknown error"}`);
  const summary = response.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n")
    .trim();
  if (!summary) throw new Error("Summarization failed: the model returned no text");
  return { summary, usage: response.usage };
}

interface ExtensionCompaction {
  summary?: unknown;
  firstKeptEntryId?: unknown;
  tokensBefore?: unknown;
  details?: unknown;
}

/** Compactions in progress, so they can be aborted. */
const running = new WeakMap<AgentSession, AbortController>();

/** Aborts the agent's compaction in progress, if any (it ends with `aborted: true`). */
export function abortCompaction(agent: AgentSession): void {
  running.get(agent)?.abort();
}

/**
 * The whole compaction with its events. Throws on failure or cancellation (compaction_end has
 * been emitted by then).
 */
async function runCompaction(
  agent: AgentSession,
  options: { reason: CompactionReason; customInstructions?: string | undefined; willRetry: boolean; settings?: Partial<CompactionSettings> | undefined },
): Promise<CompactionResult> {
  if (agent.isCompacting) throw new Error("A compaction is already running");
  const { reason } = options;
  const settings: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...options.settings };
  const controller = new AbortController();
  running.set(agent, controller);
  agent.isCompacting = true;
  agent.emit({ type: "compaction_start", reason });
  let supplied: ExtensionCompaction | undefined;
  try {
    const session = agent.session;
    const path = session.branch();
    const preparation = prepareCompaction(path, settings);

    if (agent.runtime.hasHandlers("session_before_compact")) {
      const verdict = await agent.runtime.emit({
        type: "session_before_compact",
        preparation,
        branchEntries: path,
        customInstructions: options.customInstructions,
        reason,
        willRetry: options.willRetry,
        signal: controller.signal,
      });
      if (verdict?.cancel === true) throw new CompactionCancelledError();
      if (verdict?.compaction && typeof verdict.compaction === "object") supplied = verdict.compaction;
    }

    let summary: string;
    let firstKeptEntryId = preparation.firstKeptEntryId;
    let tokensBefore = preparation.tokensBefore;
    let details: unknown;
    let usage: Usage | undefined;
    if (supplied) {
      if (typeof supplied.summary !== "string" || supplied.summary.trim() === "") {
        throw new Error("session_before_compact returned a compaction without a summary (a non-empty string)");
      }
      summary = supplied.summary;
      if (supplied.firstKeptEntryId !== undefined) {
        const kept: unknown = supplied.firstKeptEntryId;
        if (typeof kept !== "string" || !path.some((e) => e.id === kept)) {
          throw new Error(`session_before_compact returned firstKeptEntryId ${JSON.stringify(kept)}, which is not an entry on the current branch`);
        }
        firstKeptEntryId = kept;
      }
      if (typeof supplied.tokensBefore === "number" && Number.isFinite(supplied.tokensBefore)) tokensBefore = supplied.tokensBefore;
      details = supplied.details;
    } else {
      const generated = await generateSummary(agent, preparation, options.customInstructions, controller.signal);
      const { readFiles, modifiedFiles } = fileLists(preparation.fileOps);
      summary = generated.summary + fileListsText(readFiles, modifiedFiles);
      usage = generated.usage;
      details = { readFiles, modifiedFiles };
    }
    if (controller.signal.aborted) throw new CompactionCancelledError();

    const entry = session.append({
      type: "compaction",
      summary,
      firstKeptEntryId,
      tokensBefore,
      ...(details !== undefined ? { details } : {}),
      ...(usage !== undefined ? { usage } : {}),
      ...(supplied ? { fromHook: true } : {}),
    });
    // The agent continues from the compacted context.
    agent.messages = session.buildContext() as AgentMessage[];
    const estimatedTokensAfter = agent.messages.reduce((sum, m) => sum + estimateTokens(m), 0);
    await agent.runtime.emit({ type: "session_compact", compactionEntry: entry, fromExtension: supplied !== undefined, reason, willRetry: options.willRetry });

    const result: CompactionResult = {
      summary,
      firstKeptEntryId,
      tokensBefore,
      estimatedTokensAfter,
      ...(usage !== undefined ? { usage } : {}),
      ...(details !== undefined ? { details } : {}),
    };
    agent.emit({ type: "compaction_end", reason, result, aborted: false, willRetry: options.willRetry });
    return result;
  } catch (error) {
    const aborted = error instanceof CompactionCancelledError || controller.signal.aborted || (error instanceof Error && error.name === "AbortError");
    const message = errorMessage(error);
    const prefix = reason === "manual" ? "Compaction failed" : reason === "overflow" ? "Context overflow recovery failed" : "Auto-compaction failed";
    agent.emit({
      type: "compaction_end",
      reason,
      result: null,
      aborted,
      willRetry: false,
      ...(aborted ? {} : { errorMessage: `${prefix}: ${message}` }),
    });
    // The newest pi tells extensions too (nothing can be cancelled any more, so it is not awaited).
    void agent.runtime.emit({
      type: "session_compact_failed",
      reason,
      aborted,
      willRetry: false,
      fromExtension: supplied !== undefined,
      ...(aborted ? {} : { errorMessage: `${prefix}: ${message}` }),
    });
    throw aborted && !(error instanceof CompactionCancelledError) ? new CompactionCancelledError() : error;
  } finally {
    agent.isCompacting = false;
    if (running.get(agent) === controller) running.delete(agent);
  }
}

/**
 * Compacts now (the `compact` command, `ctx.compact()`). Like pi, a run in progress is aborted
 * first, for the command as for ctx.compact(). Resolves with the result; rejects with
 * the reason when it fails or is cancelled ("Compaction cancelled").
 */
export async function compactSession(
  agent: AgentSession,
  options: { customInstructions?: string | undefined; reason: CompactionReason; settings?: Partial<CompactionSettings> },
): Promise<CompactionResult> {
  if (agent.isCompacting) throw new Error("A compaction is already running");
  if (agent.isStreaming) await agent.abort();
  return runCompaction(agent, { ...options, willRetry: false });
}

/**
 * After a run: compacts when the model reported a context overflow (reason "overflow"; the run is
 * then retried once from the compacted context) or when the context is nearly full (reason
 * "threshold": more than `contextWindow - reserveTokens` tokens). Never throws.
 */
export async function maybeAutoCompact(agent: AgentSession, last: AssistantMessage, settings: Partial<CompactionSettings> = {}): Promise<void> {
  const effective: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...settings };
  if (!effective.enabled || last.stopReason === "aborted" || agent.isCompacting) return;
  const model = agent.model;
  const contextWindow = model.contextWindow ?? 0;
  // An answer from before the latest compaction says nothing about the current context.
  const latest = [...agent.session.branch()].reverse().find((e) => e.type === "compaction");
  const compactedAt = latest ? Date.parse(latest.timestamp) : undefined;
  if (compactedAt !== undefined && last.timestamp <= compactedAt) return;

  const pi = await loadPiAi();
  const sameModel = last.provider === model.provider && last.model === model.id;
  if (sameModel && pi.isContextOverflow(last, contextWindow)) {
    dropTrailingAssistant(agent);
    try {
      await runCompaction(agent, { reason: "overflow", willRetry: true, settings: effective });
    } catch {
      return; // compaction_end said why
    }
    dropTrailingAssistant(agent);
    await continueQuietly(agent);
    return;
  }

  let tokens: number;
  if (last.stopReason === "error") {
    // No usage on a failed reply: estimate from the last good one, if it is newer than the compaction.
    const messages = agent.messages;
    const good = [...messages].reverse().find((m): m is AssistantMessage => m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted");
    if (!good || (compactedAt !== undefined && good.timestamp <= compactedAt)) return;
    tokens = estimateContextTokens(messages);
  } else {
    tokens = calculateContextTokens(last.usage);
  }
  if (!contextWindow || tokens <= contextWindow - effective.reserveTokens) return;
  try {
    await runCompaction(agent, { reason: "threshold", willRetry: false, settings: effective });
  } catch {
    return;
  }
  // Messages queued while compacting would otherwise wait for the next prompt.
  if (agent.hasPendingMessages()) await continueQuietly(agent);
}

function dropTrailingAssistant(agent: AgentSession): void {
  const messages = agent.messages;
  if (messages.at(-1)?.role === "assistant") agent.messages = messages.slice(0, -1);
}

async function continueQuietly(agent: AgentSession): Promise<void> {
  try {
    await agent.continueRun();
  } catch {
    // Nothing to continue from: the next prompt starts from the compacted context.
  }
}
