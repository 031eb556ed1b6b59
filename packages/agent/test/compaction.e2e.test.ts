/**
 * Compaction through the spawned CLI (the cut points and the run are tested in process in
 * compaction.test.ts).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { spawnParley } from "./helpers/spawn.js";

type Rec = Record<string, unknown>;

const tempDir = (): string => mkdtempSync(join(tmpdir(), "parley-compaction-"));

/**
 * An agent directory in `dir` whose settings give a compaction the budget `keepRecentTokens`: pi
 * 1.6 refuses to compact a session that fits it, and the sessions here are small.
 */
function budget(dir: string, keepRecentTokens: number): NodeJS.ProcessEnv {
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens } }));
  return { PI_CODING_AGENT_DIR: agentDir };
}

const agents = checkedAgents();

describe("compact (spawned CLI)", () => {
  it("compacts with the scripted summary; the next prompt sees the compacted context", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "script.json"), JSON.stringify(["one", "two", "CLI SUMMARY", "three"]));
    writeFileSync(
      join(dir, "context.ts"),
      `export default function (pi: any) {
  pi.on("context", (event: any, ctx: any) => {
    ctx.ui.notify("context:" + JSON.stringify(event.messages.map((m: any) => m.role)));
  });
}
`,
    );
    // "two" and "second" pass a budget of 2 tokens: the second exchange is kept, the first summarised.
    const agent = spawnParley(["--model-script", join(dir, "script.json"), "-e", join(dir, "context.ts")], { cwd: dir, env: budget(dir, 2) });
    agents.push(agent);
    const settle = async (message: string) => {
      const from = agent.records.length;
      expect((await agent.request({ type: "prompt", message }))["success"]).toBe(true);
      await agent.waitFor((r) => r.type === "agent_settled", 10_000, from);
    };
    await settle("first");
    await settle("second");
    const response = await agent.request({ type: "compact" });
    expect(response).toMatchObject({ success: true, data: { summary: "CLI SUMMARY" } });
    expect(agent.records.filter((r) => r.type === "compaction_start")).toEqual([{ type: "compaction_start", reason: "manual" }]);
    expect(agent.records.find((r) => r.type === "compaction_end")).toMatchObject({
      reason: "manual",
      aborted: false,
      willRetry: false,
      result: { summary: "CLI SUMMARY" },
    });
    const messages = ((await agent.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    // As pi 1.6: the compaction's snapshot of the recorded system prompt, then its summary.
    expect(messages[0]).toMatchObject({ role: "system", content: "", sections: { preamble: expect.any(String) } });
    expect(messages[1]).toMatchObject({ role: "compactionSummary", summary: "CLI SUMMARY" });
    const entries = ((await agent.request({ type: "get_entries" }))["data"] as { entries: Rec[] }).entries;
    expect(entries.filter((e) => e["type"] === "compaction")).toHaveLength(1);
    await settle("third");
    // The prompt is the one the snapshot records: the third prompt records no new system message.
    const after = ((await agent.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    expect(after.filter((m) => m["role"] === "system")).toHaveLength(1);
    const notes = agent.records.filter((r) => r["method"] === "notify").map((r) => String(r["message"]));
    expect(notes.at(-1)).toBe(`context:${JSON.stringify(["compactionSummary", "user", "assistant", "user"])}`);
  });

  it("compact while streaming aborts the run, then compacts", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "script.json"), JSON.stringify(["hi", "a reply long enough to take a while to stream out", "The summary."]));
    // The second prompt alone passes a budget of 20 tokens (the aborted reply is at most 13): the first exchange is summarised.
    const agent = spawnParley(["--model-script", join(dir, "script.json")], { cwd: dir, env: { PARLEY_STREAM_DELAY_MS: "40", ...budget(dir, 20) } });
    agents.push(agent);
    await agent.request({ type: "prompt", message: "hello" });
    await agent.waitFor((r) => r.type === "agent_settled", 60_000);
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: `go ${"word ".repeat(40)}` });
    await agent.waitFor((r) => r.type === "message_update", 60_000, from);
    const response = await agent.request({ type: "compact" }, 60_000);
    expect(response).toMatchObject({ success: true, data: { summary: expect.stringContaining("The summary.") } });
    const types = agent.records.map((r) => r.type);
    expect(types.lastIndexOf("agent_end")).toBeLessThan(types.indexOf("compaction_start"));
  });
});
