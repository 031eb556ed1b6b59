/**
 * The bash command through the spawned CLI (the rest is tested in process in user-bash.test.ts).
 */
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { spawnParley } from "./helpers/spawn.js";

type Rec = Record<string, unknown>;

const tempDir = (): string => mkdtempSync(join(tmpdir(), "parley-bash-test-"));

const agents = checkedAgents();

describe("bash (spawned CLI)", () => {
  it("streams with the command's id, aborts promptly, and feeds the next prompt", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "script.json"), JSON.stringify(["seen"]));
    writeFileSync(
      join(dir, "context.ts"),
      `export default function (pi: any) {
  pi.on("context", (event: any, ctx: any) => {
    const runs = event.messages.filter((m: any) => m.role === "bashExecution").map((m: any) => m.command + "=" + m.output.trim());
    ctx.ui.notify("bash:" + JSON.stringify(runs));
  });
}
`,
    );
    const agent = spawnParley(["--model-script", join(dir, "script.json"), "-e", join(dir, "context.ts")], { cwd: dir });
    agents.push(agent);

    agent.send({ type: "bash", id: "b1", command: "for i in 1 2 3; do echo line$i; sleep 0.05; done; exit 4" });
    const done = await agent.response("b1");
    expect(done).toMatchObject({ success: true, data: { output: "line1\nline2\nline3\n", exitCode: 4, cancelled: false, truncated: false } });
    // How many updates depends on how fast the lines came (updates are throttled); together they are the output.
    const updates = agent.records.filter((r) => r.type === "bash_execution_update");
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates.every((u) => u["id"] === "b1")).toBe(true);
    expect(updates.map((u) => u["delta"]).join("")).toBe("line1\nline2\nline3\n");

    // An hour's sleep: only the abort can end it within the test's ceiling.
    agent.send({ type: "bash", id: "b2", command: "echo sleeping; sleep 3600" });
    await agent.waitFor((r) => r.type === "bash_execution_update" && r["id"] === "b2");
    await agent.request({ type: "abort_bash" });
    const aborted = await agent.response("b2");
    expect(aborted).toMatchObject({ success: true, data: { output: "sleeping\n", cancelled: true } });
    expect(aborted["data"]).not.toHaveProperty("exitCode");

    await agent.request({ type: "bash", command: "echo hidden", excludeFromContext: true });
    const from = agent.records.length;
    await agent.request({ type: "prompt", message: "and?" });
    await agent.waitFor((r) => r.type === "agent_settled", 10_000, from);
    const note = agent.records.slice(from).find((r) => r["method"] === "notify");
    expect(note?.["message"]).toBe(
      `bash:${JSON.stringify(["for i in 1 2 3; do echo line$i; sleep 0.05; done; exit 4=line1\nline2\nline3", "echo sleeping; sleep 3600=sleeping", "echo hidden=hidden"])}`,
    );
    const messages = ((await agent.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    // The prompt's run records the system prompt before its message, as pi 1.6 does.
    expect(messages.map((m) => m["role"])).toEqual(["bashExecution", "bashExecution", "bashExecution", "system", "user", "assistant"]);
    expect(messages[2]).toMatchObject({ excludeFromContext: true });
    expect(existsSync(dir)).toBe(true);
  });
});
