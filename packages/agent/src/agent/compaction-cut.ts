/**
 * Where a compaction cuts: which entries of the active branch a summary replaces and which are
 * kept verbatim. Pure: entries in, a preparation out (no model, no session writes).
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
 * - When everything fits the budget, nothing is summarised and the compaction is refused, as pi 1.6
 *   refuses it ("Nothing to compact (session too small)"); a single turn larger than the budget is
 *   cut at an assistant message (a "split turn", as pi calls it).
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { loopMessage, loopMessages } from "./loop-messages.js";
import type { SessionEntry } from "@parley/protocol";
import { calculateContextTokens, DEFAULT_COMPACTION_SETTINGS, estimateTokens, type CompactionSettings } from "../extensions/compat/messages.js";
import { branchSummaryMessage, buildSessionContext, customMessage } from "../session/context.js";
import { collectFileOps, createFileOps, type FileOperations } from "./file-operations.js";

export type { CompactionSettings, FileOperations };

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
      return loopMessage(entry.message);
    case "custom_message":
      return loopMessage(customMessage(entry));
    case "branch_summary":
      return entry.summary ? loopMessage(branchSummaryMessage(entry)) : undefined;
    default:
      return undefined;
  }
}

/**
 * Where the kept part may start: never at a tool result (its call must stay), nor at a failed
 * reply, nor at a recorded system message (prompt state, not conversation, as in pi 1.6).
 */
function isCutPoint(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const message = (entry as MessageEntry).message as { role: string; stopReason?: string };
  return message.role !== "toolResult" && message.role !== "system" && !(message.role === "assistant" && message.stopReason === "error");
}

/** What a summary is made of: the conversation, without the recorded system messages (the compaction entry snapshots those, as pi 1.6's does). */
function summarised(entry: SessionEntry): AgentMessage | undefined {
  const message = entryMessage(entry);
  return message?.role === "system" ? undefined : message;
}

/** Where a turn starts: a user message, a user's shell command, or an injected message. */
function isTurnStart(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "branch_summary") return true;
  if (entry.type !== "message") return false;
  const role = (entry as MessageEntry).message.role;
  return role === "user" || role === "bashExecution";
}

/** pi 1.6's words when the kept part would be the whole context. */
export const NOTHING_TO_COMPACT = "Nothing to compact (session too small)";

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
      retained.push(...loopMessages(prior.retainedTail));
      start = previousIndex + 1;
    } else {
      const kept = path.findIndex((e, i) => i < previousIndex && e.id === prior.firstKeptEntryId);
      start = kept >= 0 ? kept : previousIndex + 1;
    }
  }

  const cuts: number[] = [];
  for (let i = start; i < path.length; i++) if (isCutPoint(path[i]!)) cuts.push(i);

  // Everything within the budget keeps everything (the first cut point), so there is nothing to
  // summarise: pi 1.6 refuses such a compaction rather than shrink a small context.
  let cut = cuts[0] ?? start;
  let tokens = 0;
  for (let i = path.length - 1; i >= start; i--) {
    const entry = path[i]!;
    if (entry.type === "compaction") continue;
    const message = entryMessage(entry);
    if (!message) continue;
    tokens += estimateTokens(message);
    if (tokens >= settings.keepRecentTokens) {
      cut = cuts.find((c) => c >= i) ?? cuts.at(-1) ?? start;
      break;
    }
  }
  // Settings entries (model, thinking level, labels) right before the cut stay with the kept part.
  while (cut > start) {
    const before = path[cut - 1]!;
    if (before.type === "compaction" || entryMessage(before) !== undefined) break;
    cut--;
  }
  if (cut >= path.length) throw new Error(NOTHING_TO_COMPACT);

  // Does the kept part start inside a turn? Then the turn's start is where the summarised history
  // ends, and the turn's beginning gets a checkpoint of its own (decided, as pi does, at the kept
  // part's first entry, settings entries included).
  let turnStart = -1;
  if (!isTurnStart(path[cut]!)) {
    for (let i = cut; i >= start; i--) {
      if (isTurnStart(path[i]!)) {
        turnStart = i;
        break;
      }
    }
  }
  const isSplitTurn = turnStart !== -1;
  const historyEnd = isSplitTurn ? turnStart : cut;
  const firstKeptIndex = cut;

  const messagesToSummarize: AgentMessage[] = [...retained];
  for (let i = start; i < historyEnd; i++) {
    const message = summarised(path[i]!);
    if (message) messagesToSummarize.push(message);
  }
  const turnPrefixMessages: AgentMessage[] = [];
  if (isSplitTurn) {
    for (let i = turnStart; i < firstKeptIndex; i++) {
      const message = summarised(path[i]!);
      if (message) turnPrefixMessages.push(message);
    }
  }

  if (messagesToSummarize.length === 0 && turnPrefixMessages.length === 0) throw new Error(NOTHING_TO_COMPACT);

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
