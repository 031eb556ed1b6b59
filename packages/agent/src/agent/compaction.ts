/**
 * Compaction: summarise older context with the model so the conversation fits the window.
 * (To be completed: see compactSession.)
 */
import type { AssistantMessage } from "@mariozechner/pi-ai";
import type { AgentSession } from "./agent-session.js";

export interface CompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
}

export type CompactionReason = "manual" | "threshold" | "overflow";

/** After a run: compacts when the context is nearly full (reason "threshold"). */
export async function maybeAutoCompact(_agent: AgentSession, _last: AssistantMessage): Promise<void> {}

export async function compactSession(_agent: AgentSession, _options: { customInstructions?: string | undefined; reason: CompactionReason }): Promise<CompactionResult> {
  throw new Error("compaction is not implemented yet");
}
