/**
 * One compaction, with its events: `compaction_start`, extensions' `session_before_compact` (they
 * may cancel or supply the summary), the summary from the model, the `compaction` entry, the
 * compacted context, `session_compact`, and exactly one `compaction_end`. Also the check after a
 * run that decides whether the context needs compacting. Which entries are summarised is decided
 * by compaction-cut.ts; one compaction at a time is the Compactor's rule (compactor.ts).
 */
import type { AssistantMessage, Usage } from "@earendil-works/pi-ai";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import {
  calculateContextTokens,
  convertToLlm,
  DEFAULT_COMPACTION_SETTINGS,
  estimateTokens,
  serializeConversation,
  type CompactionSettings,
} from "../extensions/compat/messages.js";
import { loadPiAi } from "../models/pi-ai.js";
import { errorMessage } from "../error-text.js";
import { estimateContextTokens, prepareCompaction, type CompactionPreparation } from "./compaction-cut.js";
import type { CompactionHost, CompactionReason, CompactionResult } from "./compaction-host.js";
import { fileLists, fileListsText } from "./file-operations.js";
import { CompactionCancelledError, completeSummary, type SummaryHost } from "./summary-call.js";
import type { SummarySource } from "./summary-retry.js";
import { addUsage } from "./usage-shape.js";

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

const TURN_PREFIX_INSTRUCTIONS = `The transcript above is the beginning of a turn that is still under way. The rest of the turn is kept word for word after your note, so do not reconstruct it. Write a short checkpoint of this beginning, with exactly these sections (Markdown headings), using only what the transcript says:

## Request
What the user asked for in this turn.

## Done So Far
- Work completed and decisions taken in the transcript.

## Needed To Continue
- Facts from the transcript that the rest of the turn relies on.`;

/**
 * Where a split turn's checkpoint starts in a compaction's summary. pi joins its two summaries
 * with this line, so tools that read pi's session files find the parts in parley's too.
 */
const SPLIT_TURN_MARKER = "\n\n---\n\n**Turn Context (split turn):**\n\n";

const transcriptOf = (messages: AgentMessage[]): string => `<conversation>\n${serializeConversation(convertToLlm(messages))}\n</conversation>\n\n`;

/** The conversation before the kept part (or before a split turn), merged with the previous summary. */
function historySummary(
  agent: SummaryHost,
  preparation: CompactionPreparation,
  focus: string,
  signal: AbortSignal,
  source: SummarySource,
): Promise<{ summary: string; usage: Usage }> {
  let text = transcriptOf(preparation.messagesToSummarize);
  if (preparation.previousSummary) text += `<previous-summary>\n${preparation.previousSummary}\n</previous-summary>\n\n${UPDATE_NOTE}\n\n`;
  return completeSummary(agent, text + SUMMARY_INSTRUCTIONS + focus, signal, "Summarization", source);
}

/**
 * The summary a compaction records. When the cut splits a turn, the history before the turn and
 * the turn's beginning are summarised by two calls and joined, as pi does: the checkpoint of the
 * turn stands right before the turn's kept rest.
 */
async function generateSummary(
  agent: SummaryHost,
  preparation: CompactionPreparation,
  customInstructions: string | undefined,
  signal: AbortSignal,
  reason: CompactionReason,
): Promise<{ summary: string; usage: Usage }> {
  const source: SummarySource = { source: "compaction", reason };
  const focus = customInstructions?.trim() ? `\n\nAdditional focus: ${customInstructions.trim()}` : "";
  if (!preparation.isSplitTurn || preparation.turnPrefixMessages.length === 0) return historySummary(agent, preparation, focus, signal, source);
  const prefixCall = () =>
    completeSummary(agent, transcriptOf(preparation.turnPrefixMessages) + TURN_PREFIX_INSTRUCTIONS + focus, signal, "Turn prefix summarization", source);
  // Nothing before the turn (its only turn, larger than the budget): pi 1.6 says so in the history's place.
  const history =
    preparation.messagesToSummarize.length > 0
      ? await historySummary(agent, preparation, focus, signal, source)
      : { summary: preparation.previousSummary ?? "No prior history.", usage: undefined };
  const prefix = await prefixCall();
  return {
    summary: history.summary + SPLIT_TURN_MARKER + prefix.summary,
    usage: history.usage ? addUsage(history.usage, prefix.usage) : prefix.usage,
  };
}

interface ExtensionCompaction {
  summary?: unknown;
  firstKeptEntryId?: unknown;
  tokensBefore?: unknown;
  details?: unknown;
}

/**
 * The whole compaction with its events; `signal` aborts it (the Compactor owns it). Throws on
 * failure or cancellation (compaction_end has been emitted by then).
 */
export async function runCompaction(
  agent: CompactionHost,
  signal: AbortSignal,
  options: { reason: CompactionReason; customInstructions?: string | undefined; willRetry: boolean; settings?: Partial<CompactionSettings> | undefined },
): Promise<CompactionResult> {
  const { reason } = options;
  const settings: CompactionSettings = { ...DEFAULT_COMPACTION_SETTINGS, ...options.settings };
  const session = agent.session;
  const path = session.branch();
  // An automatic compaction starts only when there is something to compact, as in pi 1.6: a context
  // too small to cut (or just compacted) ends the check without any record. Asked for, it fails.
  const automatic = reason === "manual" ? undefined : prepareCompaction(path, settings);
  agent.emit({ type: "compaction_start", reason });
  let supplied: ExtensionCompaction | undefined;
  try {
    const preparation = automatic ?? prepareCompaction(path, settings);

    if (agent.runtime.hasHandlers("session_before_compact")) {
      const verdict = await agent.runtime.emit({
        type: "session_before_compact",
        preparation,
        branchEntries: path,
        customInstructions: options.customInstructions,
        reason,
        willRetry: options.willRetry,
        signal: signal,
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
      const generated = await generateSummary(agent, preparation, options.customInstructions, signal, reason);
      const { readFiles, modifiedFiles } = fileLists(preparation.fileOps);
      summary = generated.summary + fileListsText(readFiles, modifiedFiles);
      usage = generated.usage;
      details = { readFiles, modifiedFiles };
    }
    if (signal.aborted) throw new CompactionCancelledError();
    // A session switch that came while the summary was made (one started after the switch aborted
    // compactions) leaves this compaction behind: written nowhere, and the next session's context
    // is not replaced by this one's.
    if (agent.session !== session) throw new CompactionCancelledError();

    const entry = session.append({
      type: "compaction",
      summary,
      firstKeptEntryId,
      tokensBefore,
      ...(details !== undefined ? { details } : {}),
      ...(usage !== undefined ? { usage } : {}),
      // Written either way, as pi writes it.
      fromHook: supplied !== undefined,
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
    const aborted = error instanceof CompactionCancelledError || signal.aborted || (error instanceof Error && error.name === "AbortError");
    const message = errorMessage(error);
    const prefix = reason === "manual" ? "Compaction failed" : reason === "overflow" ? "Context overflow recovery failed" : "Auto-compaction failed";
    // No result at all, as pi 1.6 sends it (not `null`).
    agent.emit({
      type: "compaction_end",
      reason,
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
  }
}

/**
 * After a run: whether the context needs compacting. "overflow" when the model reported a context
 * overflow (the run is then retried from the compacted context), "threshold" when the context is
 * nearly full (more than `contextWindow - reserveTokens` tokens), undefined otherwise.
 */
export async function autoCompactionReason(
  agent: CompactionHost,
  last: AssistantMessage,
  settings: CompactionSettings,
): Promise<"overflow" | "threshold" | undefined> {
  const contextWindow = agent.limitsModel.contextWindow ?? 0;
  // An answer from before the latest compaction says nothing about the current context.
  const latest = [...agent.session.branch()].reverse().find((e) => e.type === "compaction");
  const compactedAt = latest ? Date.parse(latest.timestamp) : undefined;
  if (compactedAt !== undefined && last.timestamp <= compactedAt) return undefined;

  const pi = await loadPiAi();
  // Only the model that answered can say its context overflowed (under a virtual selection, the routed one).
  const answered = agent.modelForMessage(last);
  if (answered && pi.isContextOverflow(last, answered.contextWindow ?? 0)) return "overflow";

  let tokens: number;
  if (last.stopReason === "error") {
    // No usage on a failed reply: estimate from the last good one, if it is newer than the compaction.
    const messages = agent.messages;
    const good = [...messages].reverse().find((m): m is AssistantMessage => m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted");
    if (!good || (compactedAt !== undefined && good.timestamp <= compactedAt)) return undefined;
    tokens = estimateContextTokens(messages);
  } else {
    tokens = calculateContextTokens(last.usage);
  }
  if (!contextWindow || tokens <= contextWindow - settings.reserveTokens) return undefined;
  return "threshold";
}
