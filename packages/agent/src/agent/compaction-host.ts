/**
 * What compaction needs from the agent (AgentSession is one), and what it hands back. Kept apart
 * from the Compactor and the run so that neither imports the agent, nor each other's types.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Api, AssistantMessage, Model, Usage } from "@earendil-works/pi-ai";
import type { CompactionEndEvent, CompactionStartEvent } from "@parley/protocol";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { Session } from "../session/session.js";
import type { SummaryHost } from "./summary-call.js";

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

export interface CompactionHost extends SummaryHost {
  readonly session: Session;
  /** The context the next model call sees: compaction replaces it with the compacted one. */
  messages: AgentMessage[];
  readonly runtime: Pick<ExtensionRuntime, "hasHandlers" | "emit">;
  emit(record: CompactionStartEvent | CompactionEndEvent): void;
  /** A run is going or being prepared: a manual compaction aborts it first. */
  readonly isStreaming: boolean;
  abort(): Promise<void>;
  /** Continues the run from the (compacted) context; `failed`, the reply it retries (an overflow's). */
  continueRun(failed?: AssistantMessage): Promise<void>;
  /** The model whose limits apply to a reply; undefined when another model produced it. */
  modelForMessage(message: AssistantMessage): Model<Api> | undefined;
  /** The model whose context window counts now. */
  readonly limitsModel: Model<Api>;
  hasPendingMessages(): boolean;
}
