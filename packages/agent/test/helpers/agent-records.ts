/** What a test reads back from an RPC agent's records: its notifications and its replies. */
import type { AgentProcess } from "./spawn.js";

type Rec = Record<string, unknown>;

/** The texts of the agent's `notify` dialogs, from record `from` on. */
export const notices = (agent: AgentProcess, from = 0): string[] =>
  agent.records.slice(from).flatMap((r) => (r.type === "extension_ui_request" && r["method"] === "notify" ? [String(r["message"])] : []));

/** The text of the last assistant message ended from record `from` on ("" when there is none). */
export function lastAssistantText(agent: AgentProcess, from: number): string {
  const ends = agent.records.slice(from).filter((r) => r.type === "message_end" && (r["message"] as Rec)["role"] === "assistant");
  const last = ends.at(-1)?.["message"] as Rec | undefined;
  return ((last?.["content"] ?? []) as Rec[]).flatMap((c) => (c["type"] === "text" ? [String(c["text"])] : [])).join("");
}
