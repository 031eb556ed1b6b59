/**
 * Which files a transcript read and changed, from its tool calls: compaction summaries and branch
 * summaries end with these lists, and compaction carries them from one summary to the next.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";

/** File operations seen in the summarised messages (pi's shape, handed to extensions). */
export interface FileOperations {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

export function createFileOps(): FileOperations {
  return { read: new Set(), written: new Set(), edited: new Set() };
}

/** From the tool calls of an assistant message, or the nested calls recorded on a tool result (newest pi). */
export function collectFileOps(message: AgentMessage, ops: FileOperations): void {
  if (message.role === "toolResult") {
    // Calls a tool made through ctx.executeTool are recorded on its result message.
    const nested: unknown = "nestedCalls" in message ? message.nestedCalls : undefined;
    const calls = isRecord(nested) ? nested["calls"] : undefined;
    if (!Array.isArray(calls)) return;
    for (const call of calls) if (isRecord(call)) addFileOp(call["name"], call["arguments"], ops);
    return;
  }
  if (message.role !== "assistant") return;
  for (const block of message.content) if (block.type === "toolCall") addFileOp(block.name, block.arguments, ops);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function addFileOp(toolName: unknown, args: unknown, ops: FileOperations): void {
  const path = isRecord(args) ? args["path"] : undefined;
  if (typeof path !== "string" || path === "") return;
  if (toolName === "read") ops.read.add(path);
  else if (toolName === "write") ops.written.add(path);
  else if (toolName === "edit") ops.edited.add(path);
}

export function fileLists(ops: FileOperations): { readFiles: string[]; modifiedFiles: string[] } {
  const modified = new Set([...ops.written, ...ops.edited]);
  return {
    readFiles: [...ops.read].filter((p) => !modified.has(p)).sort(),
    modifiedFiles: [...modified].sort(),
  };
}

export function fileListsText(readFiles: string[], modifiedFiles: string[]): string {
  let text = "";
  if (readFiles.length > 0) text += `\n\n<read-files>\n${readFiles.join("\n")}\n</read-files>`;
  if (modifiedFiles.length > 0) text += `\n\n<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`;
  return text;
}
