/**
 * What a client sends while a session switch is under way belongs to the session switched to.
 * Found by the interleaving model test (scripts/interleave.mjs): a compaction that a switch
 * overtook wrote into the session left and handed the agent that session's context, so the
 * client was shown messages its session did not hold. Then the class: every command that changes
 * the session (model, level, name, compaction) waits for the switch, and is not lost with the
 * session left.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkedAgents } from "./helpers/checked-agents.js";
import { type AgentProcess, spawnAgent, PARLEY_BIN, ROOT, type Rec } from "./helpers/spawn.js";
import { tempDir, writeScript } from "./fixtures/agent/harness.js";

const HOLD = join(ROOT, "packages/agent/test/fixtures/switch-hold.ts");
const agents = checkedAgents();

/** parley on a scripted model with fixtures/switch-hold.ts, its sessions in a folder of their own. */
function startHeld(script: string[], env: NodeJS.ProcessEnv = {}): { agent: AgentProcess; sessions: string } {
  const dir = tempDir();
  const sessions = join(dir, "sessions");
  // A compaction budget of one token: the one-prompt sessions here have something to compact (pi 1.6 refuses what fits the budget).
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ compaction: { keepRecentTokens: 1 } }));
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--session-dir", sessions, "--model-script", writeScript(script), "-e", HOLD], {
    cwd: dir,
    env: { PI_CODING_AGENT_DIR: agentDir, ...env },
  });
  agents.push(agent);
  return { agent, sessions };
}

async function settledPrompt(agent: AgentProcess, message: string): Promise<void> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message });
  await agent.waitFor((r) => r.type === "agent_settled", undefined, from);
}

describe("commands sent during a session switch", () => {
  it("a compact sent while a switch is under way compacts the session switched to, never the one left", async () => {
    const { agent, sessions } = startHeld(["first", "summary", "second"]);
    await settledPrompt(agent, "hi");

    // The switch stops at its session_shutdown dialog; a compact arrives meanwhile.
    agent.send({ type: "new_session", id: "switch" });
    const leave = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Leave?");
    agent.send({ type: "compact", id: "compact" });
    // Let the switch go on; any compaction dialog that opens is accepted.
    agent.send({ type: "extension_ui_response", id: leave["id"], confirmed: true });
    const switched = await agent.response("switch");
    expect(switched["success"]).toBe(true);
    // Whatever compaction dialog opens (in either session) is accepted, until the compact is answered.
    const accepted = new Set<unknown>();
    await agent.until(() => {
      for (const r of agent.records) {
        if (r["method"] !== "confirm" || r["title"] !== "Compact?" || accepted.has(r["id"])) continue;
        accepted.add(r["id"]);
        agent.send({ type: "extension_ui_response", id: r["id"], confirmed: true });
      }
      return agent.records.some((r) => r.type === "response" && r["id"] === "compact");
    });
    // Nothing to compact in the new session.
    expect(await agent.response("compact")).toMatchObject({ success: false });

    // The new session is empty, as the client is shown; the file left behind has no compaction.
    const messages = ((await agent.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    expect(messages).toEqual([]);
    const files = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    const entries = readFileSync(join(sessions, files[0] as string), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec);
    expect(entries.map((e) => e["type"])).not.toContain("compaction");
  });

  it("a compaction of the session left, started while the switch is under way, ends cancelled when the switch is done first", async () => {
    const { agent, sessions } = startHeld(["first", "summary", "second"], { COMPACT_ON_LEAVE: "1" });
    await settledPrompt(agent, "hi");

    agent.send({ type: "new_session", id: "switch" });
    // The compaction session_shutdown started waits at its dialog until the switch is done.
    const compact = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Compact?");
    const leave = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Leave?");
    agent.send({ type: "extension_ui_response", id: leave["id"], confirmed: true });
    expect((await agent.response("switch"))["success"]).toBe(true);
    agent.send({ type: "extension_ui_response", id: compact["id"], confirmed: true });
    await agent.until(() => agent.stderr().includes("compaction outcome: "));
    expect(agent.stderr()).toContain("compaction outcome: Compaction cancelled\n");

    const messages = ((await agent.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages;
    expect(messages).toEqual([]);
    const files = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    expect(readFileSync(join(sessions, files[0] as string), "utf8")).not.toContain('"type":"compaction"');
  });

  it("set_model and set_session_name sent during a switch apply to the session switched to; get_state is answered meanwhile", async () => {
    const { agent, sessions } = startHeld(["first", "second"]);
    await settledPrompt(agent, "hi");
    expect(((await agent.request({ type: "get_state" }))["data"] as Rec)["model"]).toMatchObject({ provider: "parley", id: "script" });

    agent.send({ type: "clone", id: "switch" });
    const leave = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Leave?");
    agent.send({ type: "set_model", provider: "parley", modelId: "offline", id: "model" });
    agent.send({ type: "set_session_name", name: "the clone", id: "name" });
    // The switch is held by a dialog: state is still answered.
    expect((await agent.request({ type: "get_state" }))["success"]).toBe(true);
    agent.send({ type: "extension_ui_response", id: leave["id"], confirmed: true });
    for (const id of ["switch", "model", "name"]) expect((await agent.response(id))["success"]).toBe(true);

    const state = (await agent.request({ type: "get_state" }))["data"] as Rec;
    expect([state["model"], state["sessionName"]]).toMatchObject([{ provider: "parley", id: "offline" }, "the clone"]);
    // Recorded in the clone's file, not in the session left.
    const file = String(state["sessionFile"]);
    const entries = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec);
    expect(entries.filter((e) => e["type"] === "model_change").at(-1)).toMatchObject({ provider: "parley", modelId: "offline" });
    expect(entries.filter((e) => e["type"] === "session_info").at(-1)).toMatchObject({ name: "the clone" });
    const left = readdirSync(sessions).filter((f) => f.endsWith(".jsonl") && join(sessions, f) !== file);
    expect(left).toHaveLength(1);
    expect(readFileSync(join(sessions, left[0] as string), "utf8")).not.toContain("the clone");
  });

  it("a tree move of the session left, waiting on its handlers when the switch is done, ends cancelled and leaves that session as it was", async () => {
    const { agent } = startHeld(["first", "second", "summary"]);
    for (const message of ["hi", "again"]) await settledPrompt(agent, message);
    const file = String(((await agent.request({ type: "get_state" }))["data"] as Rec)["sessionFile"]);
    const before = readFileSync(file, "utf8");
    const firstUser = before
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec)
      .find((e) => e["type"] === "message" && (e["message"] as Rec)["role"] === "user");

    agent.send({ type: "prompt", message: `/nav ${String(firstUser?.["id"])}` });
    const tree = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Tree?");
    agent.send({ type: "new_session", id: "switch" });
    const leave = await agent.waitFor((r) => r["method"] === "confirm" && r["title"] === "Leave?");
    agent.send({ type: "extension_ui_response", id: leave["id"], confirmed: true });
    expect((await agent.response("switch"))["success"]).toBe(true);
    agent.send({ type: "extension_ui_response", id: tree["id"], confirmed: true });
    await agent.until(() => agent.stderr().includes("navigation outcome: "));
    expect(agent.stderr()).toContain('navigation outcome: {"cancelled":true,"aborted":true}');
    expect(readFileSync(file, "utf8")).toBe(before);
    expect(((await agent.request({ type: "get_messages" }))["data"] as { messages: Rec[] }).messages).toEqual([]);
  });
});
