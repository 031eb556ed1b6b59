/**
 * A session whose branch ends with tool calls that never got a result (parley was killed while
 * they ran) would keep them open for good. pi-ai answers such calls, each time it sends the
 * context, with an error result "No result provided"; parley records that answer once, when it
 * takes up the session, so the model sees what pi's would and the client sees it too (messages,
 * the file, an ACP replay), saying the call was interrupted.
 */
import type { SessionEntry } from "@parley/protocol";
import type { Session } from "../session/session.js";

export const INTERRUPTED_TEXT = "No result provided: the tool call was interrupted (parley stopped before it returned a result).";

/** The open calls at the end of the branch: an assistant's tool calls with no result after them. */
function openCalls(branch: readonly SessionEntry[]): { id: string; name: string }[] {
  const answered = new Set<string>();
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i]!;
    if (entry.type !== "message") continue;
    const message = entry.message;
    if (message.role === "toolResult") {
      answered.add(message.toolCallId);
      continue;
    }
    if (message.role !== "assistant") return [];
    // pi-ai leaves out failed and aborted replies: their calls are never sent.
    if (message.stopReason === "error" || message.stopReason === "aborted") return [];
    return message.content.flatMap((block) => (block.type === "toolCall" && !answered.has(block.id) ? [{ id: block.id, name: block.name }] : []));
  }
  return [];
}

/** Records an error result for each call left open at the end of the branch; returns how many. */
export function closeInterruptedCalls(session: Session): number {
  const open = openCalls(session.branch());
  for (const call of open) {
    session.append({
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: call.id,
        toolName: call.name,
        content: [{ type: "text", text: INTERRUPTED_TEXT }],
        details: { interrupted: true },
        isError: true,
        timestamp: Date.now(),
      },
    });
  }
  return open.length;
}
