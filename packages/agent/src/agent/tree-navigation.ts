/**
 * Moving within a session's tree (ctx.navigateTree): the leaf goes to another entry, and the
 * branch left behind may be summarised into a branch_summary entry at the new position. Extensions
 * see session_before_tree (they may cancel, change the instructions or label, or supply the
 * summary) and session_tree. Not tied to a front door: every mode's extension host calls it.
 */
import type { Usage } from "@earendil-works/pi-ai";
import { asUsage } from "./usage-shape.js";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { NavigateTreeOptions, TreePreparation } from "../extensions/types.js";
import { userText } from "../session/context.js";
import type { Session, SessionEntry } from "../session/session.js";
import type { SummaryHost } from "./summary-call.js";

/** What navigation needs from the agent (AgentSession is one): its session, and its model for a summary. */
export interface TreeNavigationHost extends SummaryHost {
  readonly session: Session;
  /** settings.json `branchSummary.reserveTokens`, when set. */
  readonly branchSummaryReserveTokens?: number | undefined;
  /** Takes up the session's context again once the leaf has moved (model and level stay, as in pi). */
  refreshContext(): void;
  /** Takes up the tools the new branch's transcript records (pi 1.6). */
  restoreTools(atStart: boolean): void;
}

export interface TreeNavigationResult {
  cancelled: boolean;
  /** The summary was aborted (the move did not happen). */
  aborted?: boolean;
  /** The text of the user message that was the target, to be edited and sent again. */
  editorText?: string;
}

/**
 * Moves the active branch to another entry of the same session, as pi does: a user message as
 * target puts the leaf on its parent and hands its text back as `editorText`; with `summarize`
 * the branch left behind is summarised (by a session_before_tree handler's `summary`, or by the
 * model) into a branch_summary entry at the new position; `label` names that entry, or the
 * target when there is no summary.
 */
export async function navigateTree(
  agent: TreeNavigationHost,
  runtime: Pick<ExtensionRuntime, "emit">,
  targetId: string,
  options: NavigateTreeOptions = {},
): Promise<TreeNavigationResult> {
  const session = agent.session;
  const oldLeafId = session.leafId;
  if (targetId === oldLeafId) return { cancelled: false };
  const target = session.entry(targetId);
  if (!target) throw new Error(`No entry with id ${targetId}`);
  // Loaded here: the summariser shares compaction's model call, which start-up does not need.
  const { collectBranchEntries, generateBranchSummary, CompactionCancelledError } = await import("./branch-summary.js");
  const { entries, commonAncestorId } = collectBranchEntries(session, oldLeafId, targetId);
  const wantsSummary = options.summarize === true;
  let { customInstructions, replaceInstructions, label } = options;
  const preparation: TreePreparation = {
    targetId,
    oldLeafId,
    commonAncestorId,
    entriesToSummarize: entries,
    userWantsSummary: wantsSummary,
    ...(customInstructions !== undefined ? { customInstructions } : {}),
    ...(replaceInstructions !== undefined ? { replaceInstructions } : {}),
    ...(label !== undefined ? { label } : {}),
  };
  const controller = new AbortController();
  const verdict = await runtime.emit({ type: "session_before_tree", preparation, signal: controller.signal });
  if (verdict?.cancel === true) return { cancelled: true };
  if (verdict?.customInstructions !== undefined) customInstructions = verdict.customInstructions;
  if (verdict?.replaceInstructions !== undefined) replaceInstructions = verdict.replaceInstructions;
  if (verdict?.label !== undefined) label = verdict.label;

  let summary: { text: string; details: unknown; fromExtension: boolean; usage: Usage | undefined } | undefined;
  if (wantsSummary && verdict?.summary && typeof verdict.summary.summary === "string") {
    // A handler's own summary may say what it cost (newest pi keeps it on the entry).
    summary = { text: verdict.summary.summary, details: verdict.summary.details, fromExtension: true, usage: asUsage(verdict.summary.usage) };
  } else if (wantsSummary && entries.length > 0) {
    try {
      const written = await generateBranchSummary(agent, entries, {
        customInstructions,
        replaceInstructions,
        reserveTokens: agent.branchSummaryReserveTokens,
        signal: controller.signal,
      });
      summary = {
        text: written.summary,
        details: { readFiles: written.readFiles, modifiedFiles: written.modifiedFiles },
        fromExtension: false,
        usage: written.usage,
      };
    } catch (error) {
      if (error instanceof CompactionCancelledError) return { cancelled: true, aborted: true };
      throw error;
    }
  }

  // A session switch that came while handlers or the summary were awaited leaves this move
  // behind: the session left is not changed after it was left (as a compaction is not).
  if (agent.session !== session) return { cancelled: true, aborted: true };

  // A user (or injected) message is re-typed rather than kept: the leaf goes to its parent.
  let newLeafId: string | null = targetId;
  let editorText: string | undefined;
  if (target.type === "message" && target.message.role === "user") {
    newLeafId = target.parentId;
    editorText = userText(target.message.content);
  } else if (target.type === "custom_message") {
    newLeafId = target.parentId;
    editorText = userText(target.content);
  }

  let summaryEntry: SessionEntry | undefined;
  if (summary) {
    summaryEntry = session.branchWithSummary(newLeafId, summary.text, {
      ...(summary.details !== undefined ? { details: summary.details } : {}),
      ...(summary.usage !== undefined ? { usage: summary.usage } : {}),
      // Written either way, as pi writes it.
      fromHook: summary.fromExtension,
    });
    if (label) session.setLabel(summaryEntry.id, label);
  } else {
    session.moveLeaf(newLeafId);
    if (label) session.setLabel(targetId, label);
  }
  agent.refreshContext();
  agent.restoreTools(false);
  await runtime.emit({
    type: "session_tree",
    newLeafId: session.leafId,
    oldLeafId,
    ...(summaryEntry ? { summaryEntry, fromExtension: summary?.fromExtension ?? false } : {}),
  });
  return { cancelled: false, ...(editorText !== undefined ? { editorText } : {}) };
}
