/** The wire-record → ACP update mapping and the session/load replay, in process. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import { replayUpdates, toolKind, toolLocations, toolTitle, UpdateMapper } from "../src/modes/acp/updates.js";

describe("ACP update mapping", () => {
  it("text and thinking deltas become message and thought chunks of one message id", () => {
    const mapper = new UpdateMapper("/work");
    expect(mapper.map({ type: "message_start", message: { role: "assistant" } })).toEqual([]);
    const [thought] = mapper.map({ type: "message_update", assistantMessageEvent: { type: "thinking_delta", delta: "hmm" } });
    const [text] = mapper.map({ type: "message_update", assistantMessageEvent: { type: "text_delta", delta: "hi" } });
    expect(thought).toMatchObject({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } });
    expect(text).toMatchObject({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hi" } });
    expect(thought && "messageId" in thought && thought.messageId).toBe(text && "messageId" in text && text.messageId);
    // A failed reply says why.
    expect(mapper.map({ type: "message_end", message: { role: "assistant", stopReason: "error", errorMessage: "boom" } })).toEqual([
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "\n\nError: boom" } },
    ]);
  });

  it("edit and write end with the file's text before and after; a failed call keeps its error text", () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-acp-map-"));
    const file = join(dir, "f.txt");
    writeFileSync(file, "old\n");
    const mapper = new UpdateMapper(dir);
    mapper.map({ type: "tool_execution_start", toolCallId: "e1", toolName: "edit", args: { path: "f.txt" } });
    writeFileSync(file, "new\n");
    expect(mapper.map({ type: "tool_execution_end", toolCallId: "e1", toolName: "edit", result: { content: [] }, isError: false })).toMatchObject([
      { sessionUpdate: "tool_call_update", toolCallId: "e1", status: "completed", content: [{ type: "diff", path: file, oldText: "old\n", newText: "new\n" }] },
    ]);
    mapper.map({ type: "tool_execution_start", toolCallId: "e2", toolName: "edit", args: { path: "f.txt" } });
    expect(
      mapper.map({ type: "tool_execution_end", toolCallId: "e2", toolName: "edit", result: { content: [{ type: "text", text: "no match" }] }, isError: true }),
    ).toMatchObject([{ status: "failed", content: [{ type: "content", content: { type: "text", text: "no match" } }] }]);
  });

  it("kinds and locations", () => {
    expect(["read", "write", "edit", "bash", "grep", "find", "ls", "mine"].map(toolKind)).toEqual([
      "read",
      "edit",
      "edit",
      "execute",
      "search",
      "search",
      "read",
      "other",
    ]);
    expect(toolLocations("read", { path: "a/b.ts", offset: 10 }, "/w")).toEqual([{ path: "/w/a/b.ts", line: 10 }]);
    expect(toolLocations("bash", { command: "ls" }, "/w")).toEqual([]);
  });

  it("a codemode call is an execute call titled by its script's first line (an options line skipped); tool_search a search", () => {
    expect(["codemode", "tool_search"].map(toolKind)).toEqual(["execute", "search"]);
    expect(toolTitle("codemode", { code: '// @options: {"timeout_ms": 1000}\n\n  const a = await tools.read({ path: "x" });\nreturn a;' })).toBe(
      'Script: const a = await tools.read({ path: "x" });',
    );
    expect(toolTitle("codemode", {})).toBe("Script");
    expect(toolLocations("codemode", { code: "return 1" }, "/w")).toEqual([]);
  });

  it("replay: user text and images, thinking, text, tool calls and results", () => {
    const messages = [
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
        ],
        timestamp: 1,
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "let me see" },
          { type: "text", text: "Reading." },
          { type: "toolCall", id: "t1", name: "read", arguments: { path: "/w/x" } },
        ],
        stopReason: "toolUse",
        timestamp: 2,
      },
      { role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: "x!" }], isError: false, timestamp: 3 },
    ] as unknown as AgentMessage[];
    expect(replayUpdates(messages, "/w").map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "user_message_chunk",
      "agent_thought_chunk",
      "agent_message_chunk",
      "tool_call",
      "tool_call_update",
    ]);
    expect(replayUpdates(messages, "/w")[5]).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "t1",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: "x!" } }],
    });
  });

  it("the system messages pi 1.6 records (the prompt, tool declarations) are neither user nor agent chunks, replayed or live", () => {
    const system = {
      role: "system",
      content: "the whole prompt, in case a file holds it as content",
      sections: { preamble: "You are an assistant." },
      toolsAdded: [{ name: "read", description: "Read a file", parameters: { type: "object" } }],
      timestamp: 1,
    };
    const messages = [system, { role: "user", content: "hi", timestamp: 2 }, { ...system, content: "", timestamp: 3 }] as unknown as AgentMessage[];
    expect(replayUpdates(messages, "/w")).toEqual([{ sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } }]);
    const mapper = new UpdateMapper("/w");
    expect([...mapper.map({ type: "message_start", message: system }), ...mapper.map({ type: "message_end", message: system })]).toEqual([]);
  });
});
