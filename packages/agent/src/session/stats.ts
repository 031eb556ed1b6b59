/**
 * get_session_stats data, except `contextUsage` (that needs the model's context window, which
 * the session does not know; the RPC layer adds it).
 *
 * As the newest pi: everything aggregates over all the session's entries (all branches, history a
 * compaction summarised), so the counts say what the session holds and the tokens and cost what
 * was spent: every usage recorded anywhere (messages, tools that called a model, compaction and
 * branch-summary generation, `usage` entries of side calls). pi 0.73.1 counted the messages of
 * the current context; the two agree until a compaction or a second branch.
 */
import type { SessionEntry, SessionStats, Usage } from "@parley/protocol";

export type SessionStatsData = Omit<SessionStats, "contextUsage">;

export function computeStats(input: { sessionFile: string | undefined; sessionId: string; entries: readonly SessionEntry[] }): SessionStatsData {
  let userMessages = 0;
  let assistantMessages = 0;
  let toolCalls = 0;
  let toolResults = 0;
  let totalMessages = 0;
  for (const entry of input.entries) {
    if (entry.type !== "message") continue;
    const message = entry.message;
    totalMessages++;
    if (message.role === "user") userMessages++;
    else if (message.role === "toolResult") toolResults++;
    else if (message.role === "assistant") {
      assistantMessages++;
      // Old or foreign files may hold content that is not an array.
      if (Array.isArray(message.content)) toolCalls += message.content.filter((block) => block.type === "toolCall").length;
    }
  }

  const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let cost = 0;
  const add = (usage: Usage | undefined): void => {
    if (usage === undefined || typeof usage !== "object") return;
    // Old or foreign files may lack a field; a missing number must not turn the sum into NaN.
    tokens.input += num(usage.input);
    tokens.output += num(usage.output);
    tokens.cacheRead += num(usage.cacheRead);
    tokens.cacheWrite += num(usage.cacheWrite);
    cost += num(usage.cost?.total);
  };
  for (const entry of input.entries) {
    if (entry.type === "message") {
      const message = entry.message;
      if (message.role === "assistant" || message.role === "toolResult") add(message.usage);
    } else if (entry.type === "compaction" || entry.type === "branch_summary" || entry.type === "usage") {
      add(entry.usage);
    }
  }
  tokens.total = tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite;

  return {
    ...(input.sessionFile !== undefined ? { sessionFile: input.sessionFile } : {}),
    sessionId: input.sessionId,
    userMessages,
    assistantMessages,
    toolCalls,
    toolResults,
    totalMessages,
    tokens,
    cost,
  };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
