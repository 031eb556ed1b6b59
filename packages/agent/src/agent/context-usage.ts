/**
 * Tokens in the context as pi reckons them: the last completed reply's usage plus an estimate
 * (chars/4) of what came after it; unknown (null) right after a compaction, until a new reply.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@parley/protocol";
import { calculateContextTokens, estimateTokens } from "../extensions/compat/messages.js";
import type { ContextUsage } from "../extensions/types.js";

/** `window`: the context window of the model whose limits count; `branch`: the session's active path. */
export function contextUsage(window: number | undefined, messages: readonly AgentMessage[], branch: readonly SessionEntry[]): ContextUsage | undefined {
  if (!window) return undefined;
  let lastIndex = -1;
  let last: AssistantMessage | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "assistant" && m.stopReason !== "aborted" && m.stopReason !== "error") {
      lastIndex = i;
      last = m;
      break;
    }
  }
  const compactedAt = branch.findLastIndex((e) => e.type === "compaction");
  const lastReplyAt = branch.findLastIndex(
    (e) => e.type === "message" && e.message.role === "assistant" && e.message.stopReason !== "aborted" && e.message.stopReason !== "error",
  );
  if (compactedAt !== -1 && compactedAt > lastReplyAt) return { tokens: null, contextWindow: window, percent: null };
  let tokens = last ? calculateContextTokens(last.usage) : 0;
  for (const m of messages.slice(lastIndex + 1)) tokens += estimateTokens(m);
  return { tokens, contextWindow: window, percent: (tokens / window) * 100 };
}
