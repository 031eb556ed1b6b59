/**
 * Which files a transcript read and changed, from its tool calls: compaction summaries and branch
 * summaries end with these lists, and compaction carries them from one summary to the next.
 */
import type { AgentMessage } from "@mariozechner/pi-agent-core";

/** File operations seen in the summarised messages (pi's shape, handed to extensions). */
export interface FileOperations {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

export function createFileOps(): FileOperations {
  return { read: new Set(), written: new Set(), edited: new Set() };
}

export function collectFileOps(message: AgentMessage, ops: FileOperations): void {
  if (message.role !== "assistant") return;
  for (const block of message.content) {
    if (block.type !== "toolCall") continue;
    const path = (block.arguments as { path?: unknown } | undefined)?.path;
    if (typeof path !== "string" || path === "") continue;
    if (block.name === "read") ops.read.add(path);
    else if (block.name === "write") ops.written.add(path);
    else if (block.name === "edit") ops.edited.add(path);
  }
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
