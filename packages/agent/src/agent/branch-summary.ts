/**
 * Leaving a branch of the session tree (ctx.navigateTree): which entries the move abandons, and
 * the summary of them that can be left at the new position, as pi does. The summary is written by
 * the current model, with the same call compaction uses.
 */
import type { Usage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@parley/protocol";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { DEFAULT_COMPACTION_SETTINGS, convertToLlm, estimateTokens, serializeConversation } from "../extensions/compat/messages.js";
import type { Session } from "../session/session.js";
import { entryMessage } from "./compaction-cut.js";
import { collectFileOps, createFileOps, fileLists, fileListsText } from "./file-operations.js";
import { completeSummary, type SummaryHost } from "./summary-call.js";

export { CompactionCancelledError } from "./summary-call.js";

/**
 * The entries between the old leaf and the deepest entry the old and the new position share
 * (oldest first): what the move leaves behind.
 */
export function collectBranchEntries(
  session: Session,
  oldLeafId: string | null,
  targetId: string,
): { entries: SessionEntry[]; commonAncestorId: string | null } {
  if (oldLeafId === null) return { entries: [], commonAncestorId: null };
  const onOldPath = new Set(session.branch(oldLeafId).map((e) => e.id));
  const targetPath = session.branch(targetId);
  let commonAncestorId: string | null = null;
  for (let i = targetPath.length - 1; i >= 0; i--) {
    if (onOldPath.has(targetPath[i]!.id)) {
      commonAncestorId = targetPath[i]!.id;
      break;
    }
  }
  const entries: SessionEntry[] = [];
  for (let id: string | null = oldLeafId; id !== null && id !== commonAncestorId; ) {
    const entry = session.entry(id);
    if (!entry) break;
    entries.push(entry);
    id = entry.parentId;
  }
  return { entries: entries.reverse(), commonAncestorId };
}

const BRANCH_INSTRUCTIONS = `The conversation above is a branch the user is leaving to continue from an earlier point. Summarise it so that the assistant, working on from that earlier point, knows what was tried there. Use these sections (Markdown headings), be concrete (names, paths, commands, results), and leave a section empty rather than invent:

## Goal
What the branch set out to do.

## What Was Done
- Steps taken and their results.

## Findings
- What was learnt, including what did not work and why.

## Files
Files read, created or changed in the branch, with one line on each.`;

export interface BranchSummary {
  summary: string;
  readFiles: string[];
  modifiedFiles: string[];
  /** What the summary call cost (saved on the branch_summary entry, as pi does). */
  usage: Usage;
}

/** A context window to budget with when the model does not say (pi's assumption). */
const ASSUMED_CONTEXT_WINDOW = 128_000;

/**
 * The newest of the abandoned messages that fit in `budget` tokens, oldest first, as pi picks
 * them: the walk stops at the first that does not fit, except that an earlier summary (compaction
 * or branch) still gets in while less than 90% of the budget is used.
 */
export function messagesWithinBudget(entries: readonly SessionEntry[], budget: number): AgentMessage[] {
  const kept: AgentMessage[] = [];
  let total = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    const message = entryMessage(entry);
    if (!message) continue;
    const tokens = estimateTokens(message);
    if (budget > 0 && total + tokens > budget) {
      if ((entry.type === "compaction" || entry.type === "branch_summary") && total < budget * 0.9) kept.unshift(message);
      break;
    }
    kept.unshift(message);
    total += tokens;
  }
  return kept;
}

/** Summarise abandoned entries. Throws CompactionCancelledError when `signal` aborts it. */
/**
 * What the recorded summary starts with, as pi's does: the model reading it later learns that it
 * stands for a branch the user left, not for the conversation it continues.
 */
const BRANCH_PREAMBLE = "The user followed another branch of this conversation and then came back here. What happened on that branch:\n\n";

export async function generateBranchSummary(
  agent: SummaryHost,
  entries: readonly SessionEntry[],
  options: {
    customInstructions?: string | undefined;
    replaceInstructions?: boolean | undefined;
    /** settings.json `branchSummary.reserveTokens`: the part of the context window left for the prompt and the reply. */
    reserveTokens?: number | undefined;
    signal: AbortSignal;
  },
): Promise<BranchSummary> {
  const reserveTokens = options.reserveTokens ?? DEFAULT_COMPACTION_SETTINGS.reserveTokens;
  const messages = messagesWithinBudget(entries, (agent.model.contextWindow || ASSUMED_CONTEXT_WINDOW) - reserveTokens);
  const ops = createFileOps();
  // Files touched anywhere in the branch are listed, even in the part the budget leaves out.
  for (const message of entries.map(entryMessage)) if (message) collectFileOps(message, ops);
  const { readFiles, modifiedFiles } = fileLists(ops);
  const custom = options.customInstructions?.trim();
  const instructions = custom && options.replaceInstructions ? custom : custom ? `${BRANCH_INSTRUCTIONS}\n\nAdditional focus: ${custom}` : BRANCH_INSTRUCTIONS;
  const prompt = `<conversation>\n${serializeConversation(convertToLlm(messages))}\n</conversation>\n\n${instructions}`;
  const { summary, usage } = await completeSummary(agent, prompt, options.signal, "Branch summarization", { source: "branchSummary" });
  return { summary: BRANCH_PREAMBLE + summary + fileListsText(readFiles, modifiedFiles), readFiles, modifiedFiles, usage };
}
