/**
 * The agent's wire records (the same ones RPC mode writes) as ACP session updates: message and
 * thought chunks, tool calls with kinds, locations, live output and structured diffs. Also the
 * replay of a stored conversation for session/load.
 */
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { ContentBlock, SessionUpdate, ToolCallContent, ToolCallLocation, ToolKind } from "@agentclientprotocol/sdk";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { EventType } from "@parley/protocol";
import { nodeCrypto } from "../../lazy-node.js";

type WireRecord = Record<string, unknown>;

/** A table entry for an event ACP shows nothing of (each says why). */
const none = (): SessionUpdate[] => [];

/** Files larger than this get no diff (the tool's own text result is shown instead). */
const MAX_DIFF_BYTES = 1 << 20;

const KINDS: Record<string, ToolKind> = {
  read: "read",
  ls: "read",
  write: "edit",
  edit: "edit",
  bash: "execute",
  grep: "search",
  find: "search",
  // A codemode script runs other tools; tool_search looks tools up.
  codemode: "execute",
  tool_search: "search",
};

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const obj = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

export function toolKind(toolName: string): ToolKind {
  return KINDS[toolName] ?? "other";
}

/** A short human title for a call, from its arguments. */
export function toolTitle(toolName: string, args: unknown): string {
  const a = obj(args);
  const path = str(a["path"]);
  switch (toolName) {
    case "read":
      return path ? `Read ${path}` : "Read";
    case "write":
      return path ? `Write ${path}` : "Write";
    case "edit":
      return path ? `Edit ${path}` : "Edit";
    case "ls":
      return `List ${path ?? "."}`;
    case "bash": {
      const command = str(a["command"]);
      return command ? `\`${command.split("\n")[0]}\`` : "bash";
    }
    case "grep":
      return `grep ${JSON.stringify(str(a["pattern"]) ?? "")}${path ? ` in ${path}` : ""}`;
    case "find":
      return `find ${JSON.stringify(str(a["pattern"]) ?? "")}${path ? ` in ${path}` : ""}`;
    case "codemode": {
      // The script's first line that says something (an options line says only how it runs).
      const line = (str(a["code"]) ?? "").split("\n").find((l) => l.trim() !== "" && !l.startsWith("// @options:"));
      return line ? `Script: ${line.trim()}` : "Script";
    }
    default:
      return toolName;
  }
}

export function toolLocations(toolName: string, args: unknown, cwd: string): ToolCallLocation[] {
  const a = obj(args);
  const path = str(a["path"]);
  if (path === undefined) return toolName === "ls" || toolName === "grep" || toolName === "find" ? [{ path: cwd }] : [];
  const absolute = absolutePath(path, cwd);
  const offset = a["offset"];
  return [typeof offset === "number" && offset > 0 ? { path: absolute, line: offset } : { path: absolute }];
}

function absolutePath(path: string, cwd: string): string {
  const expanded = path.startsWith("@") ? path.slice(1) : path;
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}

/** A file's text if it is small enough to diff; null when it does not exist. */
function readForDiff(path: string): string | null | undefined {
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > MAX_DIFF_BYTES) return undefined;
    return readFileSync(path, "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
  }
}

/** Tool result blocks ({type:"text"|"image"}) as ACP content. */
function resultContent(result: unknown, fence: boolean): ToolCallContent[] {
  const blocks = obj(result)["content"];
  if (!Array.isArray(blocks)) return [];
  const out: ToolCallContent[] = [];
  for (const raw of blocks) {
    const block = obj(raw);
    if (block["type"] === "text" && typeof block["text"] === "string") {
      const text = block["text"];
      out.push({ type: "content", content: { type: "text", text: fence && text ? `\`\`\`console\n${text}\n\`\`\`` : text } });
    } else if (block["type"] === "image" && typeof block["data"] === "string" && typeof block["mimeType"] === "string") {
      out.push({ type: "content", content: { type: "image", data: block["data"], mimeType: block["mimeType"] } });
    }
  }
  return out;
}

/**
 * Turns one session's wire records into updates. Stateful: it remembers which assistant message
 * is streaming and each edit/write target's text before the tool ran (read when the call starts,
 * which is before any tool_call handler or the tool itself runs).
 */
export class UpdateMapper {
  readonly #cwd: string;
  #messageId: string | undefined;
  readonly #before = new Map<string, { path: string; oldText: string | null }>();

  constructor(cwd: string) {
    this.#cwd = cwd;
  }

  /**
   * What ACP shows of each agent event, keyed by every event type of the protocol: a new event
   * does not compile until it has an entry here. `none` entries say why ACP shows nothing.
   */
  readonly #updates: { readonly [K in EventType]: (record: WireRecord) => SessionUpdate[] } = {
    message_start: (record) => {
      if (obj(record["message"])["role"] === "assistant") this.#messageId = nodeCrypto().randomUUID();
      return [];
    },
    message_update: (record) => {
      const event = obj(record["assistantMessageEvent"]);
      const delta = str(event["delta"]);
      if (!delta) return [];
      const messageId = this.#messageId ?? null;
      if (event["type"] === "text_delta") return [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: delta }, messageId }];
      if (event["type"] === "thinking_delta") return [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: delta }, messageId }];
      return [];
    },
    message_end: (record) => this.#messageEnd(obj(record["message"])),
    tool_execution_start: (record) => [this.#toolStart(str(record["toolCallId"]) ?? "", str(record["toolName"]) ?? "", record["args"])],
    tool_execution_update: (record) => {
      const content = resultContent(record["partialResult"], record["toolName"] === "bash");
      return [{ sessionUpdate: "tool_call_update", toolCallId: str(record["toolCallId"]) ?? "", status: "in_progress", content }];
    },
    tool_execution_end: (record) => [
      this.#toolEnd(str(record["toolCallId"]) ?? "", str(record["toolName"]) ?? "", record["result"], record["isError"] === true),
    ],
    // Run boundaries: ACP ends a prompt with its session/prompt response, not an update.
    agent_start: none,
    agent_end: none,
    agent_settled: none,
    turn_start: none,
    turn_end: none,
    // Output of the RPC `bash` command, which ACP clients cannot send.
    bash_execution_update: none,
    // ACP has no update for the agent's steering/follow-up queue.
    queue_update: none,
    // Compaction and retries: ACP has no update for them.
    compaction_start: none,
    compaction_end: none,
    auto_retry_start: none,
    auto_retry_end: none,
    summarization_retry_scheduled: none,
    summarization_retry_attempt_start: none,
    summarization_retry_finished: none,
    // Session file bookkeeping; ACP clients see messages, not entries (a cache warm's usage
    // entry included: this ACP version has no usage update).
    entry_appended: none,
    // These come as the host's records, which AcpSession maps (a notice, session_info_update).
    extension_error: none,
    session_info_changed: none,
    // AcpSession answers it (current_mode_update, config_option_update): that needs the agent.
    thinking_level_changed: none,
  };

  map(record: WireRecord): SessionUpdate[] {
    const type = record["type"];
    return this.#isEventType(type) ? this.#updates[type](record) : [];
  }

  #isEventType(type: unknown): type is EventType {
    return typeof type === "string" && Object.hasOwn(this.#updates, type);
  }

  #messageEnd(message: Record<string, unknown>): SessionUpdate[] {
    const role = message["role"];
    if (role === "assistant") {
      this.#messageId = undefined;
      const error = str(message["errorMessage"]);
      if (message["stopReason"] === "error" && error) return [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\nError: ${error}` } }];
      return [];
    }
    // An extension's message shown to the user (pi.sendMessage with display).
    if (role === "custom" && message["display"] !== false) return customMessageUpdates(message);
    return [];
  }

  #toolStart(toolCallId: string, toolName: string, args: unknown): SessionUpdate {
    if (toolName === "edit" || toolName === "write") {
      const path = str(obj(args)["path"]);
      if (path !== undefined) {
        const absolute = absolutePath(path, this.#cwd);
        const oldText = readForDiff(absolute);
        if (oldText !== undefined) this.#before.set(toolCallId, { path: absolute, oldText });
      }
    }
    return {
      sessionUpdate: "tool_call",
      toolCallId,
      title: toolTitle(toolName, args),
      kind: toolKind(toolName),
      status: "in_progress",
      locations: toolLocations(toolName, args, this.#cwd),
      rawInput: args,
    };
  }

  #toolEnd(toolCallId: string, toolName: string, result: unknown, isError: boolean): SessionUpdate {
    const before = this.#before.get(toolCallId);
    this.#before.delete(toolCallId);
    let content = resultContent(result, toolName === "bash");
    if (before && !isError) {
      const newText = readForDiff(before.path);
      if (typeof newText === "string") content = [{ type: "diff", path: before.path, oldText: before.oldText, newText }];
    }
    return { sessionUpdate: "tool_call_update", toolCallId, status: isError ? "failed" : "completed", content, rawOutput: result };
  }
}

function customMessageUpdates(message: Record<string, unknown>): SessionUpdate[] {
  const content = message["content"];
  const text = typeof content === "string" ? content : Array.isArray(content) ? content.map((b) => str(obj(b)["text"]) ?? "").join("") : "";
  return text ? [{ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }] : [];
}

/** The conversation so far as updates, for session/load: what the user and the agent said, and each tool call with its result. */
export function replayUpdates(messages: readonly AgentMessage[], cwd: string): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  const calls = new Map<string, string>();
  for (const message of messages) {
    const m = obj(message);
    switch (m["role"]) {
      case "user": {
        const content = m["content"];
        const blocks: ContentBlock[] = typeof content === "string" ? [{ type: "text", text: content }] : userBlocks(content);
        for (const block of blocks) updates.push({ sessionUpdate: "user_message_chunk", content: block });
        break;
      }
      case "assistant": {
        const messageId = nodeCrypto().randomUUID();
        for (const raw of Array.isArray(m["content"]) ? m["content"] : []) {
          const block = obj(raw);
          if (block["type"] === "text" && typeof block["text"] === "string" && block["text"]) {
            updates.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: block["text"] }, messageId });
          } else if (block["type"] === "thinking" && typeof block["thinking"] === "string" && block["thinking"]) {
            updates.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: block["thinking"] }, messageId });
          } else if (block["type"] === "toolCall") {
            const id = str(block["id"]) ?? "";
            const name = str(block["name"]) ?? "";
            calls.set(id, name);
            updates.push({
              sessionUpdate: "tool_call",
              toolCallId: id,
              title: toolTitle(name, block["arguments"]),
              kind: toolKind(name),
              status: "pending",
              locations: toolLocations(name, block["arguments"], cwd),
              rawInput: block["arguments"],
            });
          }
        }
        break;
      }
      case "toolResult": {
        const id = str(m["toolCallId"]) ?? "";
        updates.push({
          sessionUpdate: "tool_call_update",
          toolCallId: id,
          status: m["isError"] === true ? "failed" : "completed",
          content: resultContent(m, (calls.get(id) ?? str(m["toolName"])) === "bash"),
        });
        break;
      }
      case "custom":
        if (m["display"] !== false) updates.push(...customMessageUpdates(m));
        break;
      default:
        break;
    }
  }
  return updates;
}

function userBlocks(content: unknown): ContentBlock[] {
  if (!Array.isArray(content)) return [];
  const out: ContentBlock[] = [];
  for (const raw of content) {
    const block = obj(raw);
    if (block["type"] === "text" && typeof block["text"] === "string") out.push({ type: "text", text: block["text"] });
    else if (block["type"] === "image" && typeof block["data"] === "string" && typeof block["mimeType"] === "string") {
      out.push({ type: "image", data: block["data"], mimeType: block["mimeType"] });
    }
  }
  return out;
}
