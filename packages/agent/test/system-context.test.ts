/** context_with_system's transcript form and its fold back into a request (system-context.ts). */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Tool } from "@earendil-works/pi-ai/compat";
import { describe, expect, it } from "vitest";
import { foldSystemMessages, withSystemMessage } from "../src/agent/system-context.js";
import type { SystemMessage } from "../src/extensions/types.js";

const tool = (name: string): Tool => ({ name, description: `${name} tool`, parameters: { type: "object", properties: {} } as Tool["parameters"] });
const user: AgentMessage = { role: "user", content: "hi", timestamp: 1 };

describe("withSystemMessage", () => {
  it("leads with the prompt and the tools' declarations; nothing leads when both are empty", () => {
    expect(withSystemMessage("Be brief.", [tool("read")], [user])).toEqual([
      { role: "system", content: "Be brief.", toolsAdded: [tool("read")], timestamp: 0 },
      user,
    ]);
    expect(withSystemMessage("", [], [user])).toEqual([user]);
  });

  it("declares a tool as pi-ai 1.6's toToolDeclaration does: its constrainedSampling kept, what it runs with left out", () => {
    const strict = { ...tool("edit"), constrainedSampling: { type: "json_schema", strict: "prefer" }, execute: () => undefined } as Tool;
    const [head] = withSystemMessage("", [strict], []);
    expect(head).toEqual({
      role: "system",
      content: "",
      toolsAdded: [{ ...tool("edit"), constrainedSampling: { type: "json_schema", strict: "prefer" } }],
      timestamp: 0,
    });
  });
});

describe("foldSystemMessages", () => {
  it("replays every system message in order: content appended, sections patched by name, tools added and removed", () => {
    const head: SystemMessage = { role: "system", content: "Base.", sections: { a: "A1", b: "B" }, toolsAdded: [tool("read"), tool("bash")], timestamp: 0 };
    const patch: SystemMessage = {
      role: "system",
      content: [{ type: "text", text: "More." }],
      sections: { a: "A2", b: null },
      toolsRemoved: [{ name: "bash" }],
      toolsAdded: [tool("grep")],
      timestamp: 2,
    };
    expect(foldSystemMessages([head, user, patch])).toEqual({
      system: { systemPrompt: "Base.\n\nMore.\n\nA2", tools: [tool("read"), tool("grep")] },
      messages: [user],
    });
  });

  it("without a system message the request has no prompt and no tools", () => {
    expect(foldSystemMessages([user])).toEqual({ system: { systemPrompt: "", tools: [] }, messages: [user] });
  });
});
