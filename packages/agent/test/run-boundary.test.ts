/** The check of what turn_end and agent_before_settle handlers propose (run-boundary.ts). */
import { describe, expect, it } from "vitest";
import { checkDrafts } from "../src/agent/run-boundary.js";

// The active branch: a user message and an assistant answer.
const onBranch = [
  { type: "message", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: { role: "user", content: "hi", timestamp: 1 } },
  { type: "custom", id: "b2", parentId: "a1", timestamp: "2026-01-01T00:00:01.000Z", customType: "state" },
] as unknown as Parameters<typeof checkDrafts>[1];

describe("checkDrafts", () => {
  it("keeps the four kinds of draft pi allows, in order", () => {
    const drafts = [
      { type: "context_edit", targetId: "a1", replacement: null },
      { type: "context_edit", targetId: "a1", replacement: { content: "edited" } },
      { type: "custom", customType: "state", data: { n: 1 } },
      { type: "custom_message", customType: "note", content: [{ type: "text", text: "hi" }], display: true, details: { x: 1 } },
      { type: "compaction", summary: "s", firstKeptEntryId: "b2" },
      { type: "compaction", summary: "t", firstKeptEntryId: null },
    ];
    expect(checkDrafts(drafts, onBranch)).toEqual([
      { type: "context_edit", targetId: "a1", replacement: null },
      { type: "context_edit", targetId: "a1", replacement: { content: "edited" } },
      { type: "custom", customType: "state", data: { n: 1 } },
      { type: "custom_message", customType: "note", content: [{ type: "text", text: "hi" }], display: true, details: { x: 1 } },
      { type: "compaction", summary: "s", firstKeptEntryId: "b2", details: undefined },
      { type: "compaction", summary: "t", firstKeptEntryId: null, details: undefined },
    ]);
  });

  it("names the first draft that cannot be appended, and why", () => {
    const cases: [unknown, string][] = [
      [{ type: "custom" }, "entries must be an array of entry drafts"],
      [[null], "entries[0] must be an entry draft object"],
      [[{ type: "custom", customType: 3 }], "entries[0].customType must be a string"],
      [
        [{ type: "custom_message", customType: "n", content: [{ type: "video" }], display: true }],
        "entries[0].content must be a string or an array of text and image blocks",
      ],
      [[{ type: "custom_message", customType: "n", content: "x" }], "entries[0].display must be a boolean"],
      [[{ type: "compaction", summary: "s", firstKeptEntryId: "zz" }], "Entry zz is not on the active branch"],
      [[{ type: "context_edit", targetId: "zz", replacement: null }], "Entry zz is not on the active branch"],
      [[{ type: "context_edit", targetId: "b2", replacement: null }], "Entry b2 does not contribute editable model content"],
      [[{ type: "context_edit", targetId: "a1", replacement: { content: 3 } }], "Context edit replacement must be null or contain string/array content"],
      [[{ type: "context_edit", targetId: "a1" }], "Context edit replacement must be null or contain string/array content"],
      [[{ type: "custom", customType: "ok" }, { type: "label" }], 'entries[1].type must be "custom", "custom_message", "context_edit" or "compaction"'],
    ];
    for (const [proposal, error] of cases) expect(() => checkDrafts(proposal, onBranch), JSON.stringify(proposal)).toThrow(error);
  });
});
