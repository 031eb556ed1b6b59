/**
 * Conversation helpers pi exports for extensions (custom compaction, handoff,
 * summaries): converting agent messages to LLM messages, serialising them as
 * plain text, and the small token/compaction utilities.
 */
import type { ImageContent, Message, TextContent, Usage } from "@earendil-works/pi-ai";

export const COMPACTION_SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
export const COMPACTION_SUMMARY_SUFFIX = "\n</summary>";
export const BRANCH_SUMMARY_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
export const BRANCH_SUMMARY_SUFFIX = "</summary>";

export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  timestamp: number;
  excludeFromContext?: boolean;
}

export interface CustomMessage<T = unknown> {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: T;
  timestamp: number;
}

export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId: string;
  timestamp: number;
}

export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  tokensBefore: number;
  timestamp: number;
}

/** Anything that can sit in the agent's message list (LLM messages plus pi's own kinds). */
export type AgentMessage = Message | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage;

/** How a `!command` run by the user is shown to the model. */
export function bashExecutionToText(msg: BashExecutionMessage): string {
  let text = `Ran \`${msg.command}\`\n`;
  text += msg.output ? `\`\`\`\n${msg.output}\n\`\`\`` : "(no output)";
  if (msg.cancelled) text += "\n\n(command cancelled)";
  else if (msg.exitCode !== undefined && msg.exitCode !== null && msg.exitCode !== 0) {
    text += `\n\nCommand exited with code ${msg.exitCode}`;
  }
  if (msg.truncated && msg.fullOutputPath) text += `\n\n[Output truncated. Full output: ${msg.fullOutputPath}]`;
  return text;
}

const userText = (text: string, timestamp: number): Message => ({
  role: "user",
  content: [{ type: "text", text }],
  timestamp,
});

/**
 * Map agent messages to what the LLM sees: user/assistant/tool results pass
 * through, pi's own kinds become user messages, and anything else (including
 * bash runs marked excludeFromContext) is dropped.
 */
export function convertToLlm(messages: readonly unknown[]): Message[] {
  const out: Message[] = [];
  for (const raw of messages) {
    const m = raw as AgentMessage;
    switch (m?.role) {
      case "user":
      case "assistant":
      case "toolResult":
        out.push(m);
        break;
      case "bashExecution":
        if (!m.excludeFromContext) out.push(userText(bashExecutionToText(m), m.timestamp));
        break;
      case "custom":
        out.push({
          role: "user",
          content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content,
          timestamp: m.timestamp,
        });
        break;
      case "branchSummary":
        out.push(userText(BRANCH_SUMMARY_PREFIX + m.summary + BRANCH_SUMMARY_SUFFIX, m.timestamp));
        break;
      case "compactionSummary":
        out.push(userText(COMPACTION_SUMMARY_PREFIX + m.summary + COMPACTION_SUMMARY_SUFFIX, m.timestamp));
        break;
      default:
        break;
    }
  }
  return out;
}

// Tool results are the bulk of a transcript; summaries do not need all of it.
const TOOL_RESULT_MAX_CHARS = 2000;

function joinText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((c): c is TextContent => c?.type === "text")
    .map((c) => c.text)
    .join("");
}

/**
 * Render messages as labelled plain text ("[User]: ...", "[Assistant]: ...")
 * so a summarising model reads a transcript instead of continuing it.
 */
export function serializeConversation(messages: readonly Message[]): string {
  const parts: string[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      const text = joinText(m.content);
      if (text) parts.push(`[User]: ${text}`);
    } else if (m.role === "assistant") {
      const thinking: string[] = [];
      const texts: string[] = [];
      const calls: string[] = [];
      for (const c of m.content) {
        if (c.type === "thinking") thinking.push(c.thinking);
        else if (c.type === "text") texts.push(c.text);
        else if (c.type === "toolCall") {
          const args = Object.entries(c.arguments ?? {})
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(", ");
          calls.push(`${c.name}(${args})`);
        }
      }
      if (thinking.length > 0) parts.push(`[Assistant thinking]: ${thinking.join("\n")}`);
      if (texts.length > 0) parts.push(`[Assistant]: ${texts.join("\n")}`);
      if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
    } else if (m.role === "toolResult") {
      const text = joinText(m.content);
      if (text) {
        const shown =
          text.length > TOOL_RESULT_MAX_CHARS
            ? `${text.slice(0, TOOL_RESULT_MAX_CHARS)}\n\n[... ${text.length - TOOL_RESULT_MAX_CHARS} more characters truncated]`
            : text;
        parts.push(`[Tool result]: ${shown}`);
      }
    }
  }
  return parts.join("\n\n");
}

/** Rough token count of one message (characters / 4). */
export function estimateTokens(message: unknown): number {
  const m = message as AgentMessage;
  let chars = 0;
  switch (m?.role) {
    case "user":
    case "toolResult":
    case "custom":
      chars = joinText(m.content).length;
      break;
    case "assistant":
      for (const c of m.content ?? []) {
        if (c.type === "text") chars += c.text.length;
        else if (c.type === "thinking") chars += c.thinking.length;
        else if (c.type === "toolCall") chars += c.name.length + JSON.stringify(c.arguments ?? {}).length;
      }
      break;
    case "bashExecution":
      chars = (m.command?.length ?? 0) + (m.output?.length ?? 0);
      break;
    case "branchSummary":
    case "compactionSummary":
      chars = m.summary?.length ?? 0;
      break;
    case "system":
      // As pi 1.6 counts a recorded system message: its text, its sections and the tool declarations it adds.
      chars = joinText(m.content).length;
      for (const section of Object.values(m.sections ?? {})) chars += section?.length ?? 0;
      if (m.toolsAdded !== undefined) chars += JSON.stringify(m.toolsAdded).length;
      break;
    default:
      return 0;
  }
  return Math.ceil(chars / 4);
}

export interface CompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };

/** Tokens in the context as reported by the provider's usage. */
export function calculateContextTokens(usage: Usage): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/** Compact once the context leaves less than `reserveTokens` of the window. */
export function shouldCompact(contextTokens: number, contextWindow: number, settings: CompactionSettings): boolean {
  return settings.enabled && contextTokens > contextWindow - settings.reserveTokens;
}

interface EntryLike {
  type?: string;
  message?: { role?: string; usage?: Usage; stopReason?: string };
}

/** Usage of the last assistant reply that completed (aborted/errored replies carry no reliable usage). */
export function getLastAssistantUsage(entries: readonly unknown[]): Usage | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i] as EntryLike;
    const msg = e?.type === "message" ? e.message : undefined;
    if (msg?.role === "assistant" && msg.usage && msg.stopReason !== "aborted" && msg.stopReason !== "error") return msg.usage;
  }
  return undefined;
}

/** The most recent compaction entry of a session, or null. */
export function getLatestCompactionEntry<T extends { type?: string }>(entries: readonly T[]): T | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e?.type === "compaction") return e;
  }
  return null;
}
