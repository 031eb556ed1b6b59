/**
 * What `ctx.sessionManager` reads beyond the typed surface: pi hands extensions its SessionManager
 * itself, so JavaScript extensions call its other reading methods too (`getChildren`,
 * `isPersisted`), and the newest pi's (`getEntryCount`, `buildContextEntries`,
 * `buildSessionProjection`). pi 1.6.0 (`pi-newest`) and parley are compared where the test says so.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { alike, closedAfterEach, MINUTE, NO_KEYS, ok, place, write } from "./helpers/pi-home.js";
import { PARLEY_BIN, spawnAgent, type AgentProcess } from "./helpers/spawn.js";

const running = closedAfterEach();

const PROBE = `export default function (pi) {
  const kind = (e) => e.type === "message" ? e.message.role : e.type;
  pi.registerCommand("old", { handler: async (_a, ctx) => {
    const sm = ctx.sessionManager;
    const root = sm.getEntries()[0];
    ctx.ui.notify("OLD " + JSON.stringify({
      persisted: sm.isPersisted(),
      children: sm.getChildren(root.id).map(kind),
      leafChildren: sm.getChildren(sm.getLeafId()).length,
    }), "info");
  } });
  pi.registerCommand("new", { handler: async (_a, ctx) => {
    const sm = ctx.sessionManager;
    const projection = sm.buildSessionProjection();
    ctx.ui.notify("NEW " + JSON.stringify({
      count: sm.getEntryCount(),
      contextEntries: sm.buildContextEntries().map(kind),
      projected: projection.entries.map((p) => kind(p.sourceEntry) + ":" + p.messages.map((m) => m.role).join("+")),
      messages: projection.messages.map((m) => m.role),
      level: projection.thinkingLevel,
      model: projection.model,
    }), "info");
  } });
}
`;

function start(bin: string, args: string[] = []): AgentProcess {
  const p = place("parley-sm-surface-");
  const probe = join(p.home, "probe.ts");
  write(probe, PROBE);
  write(join(p.agentDir, "settings.json"), { compaction: { keepRecentTokens: 1 } });
  const agent = spawnAgent(bin, ["--mode", "rpc", "-e", OFFLINE_PROVIDER, "-e", probe, "--provider", "offline", "--model", "echo", ...args], {
    cwd: p.cwd,
    env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
  });
  running.push(agent);
  return agent;
}

async function said(agent: AgentProcess, command: string): Promise<Record<string, unknown>> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message: `/${command}` });
  const r = await agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith(`${command.toUpperCase()} `), MINUTE, from);
  return JSON.parse(String(r["message"]).slice(command.length + 1)) as Record<string, unknown>;
}

async function converse(agent: AgentProcess, message: string): Promise<void> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message });
  await agent.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

describe("ctx.sessionManager's other reading methods", () => {
  it("getChildren and isPersisted (pi 1.6.0 and parley alike)", async () => {
    const seen = await alike(async (bin) => {
      const agent = start(bin);
      await converse(agent, "Reply with just: one");
      await converse(agent, "Reply with just: two");
      const stored = await said(agent, "old");
      const memory = start(bin, ["--no-session"]);
      await converse(memory, "Reply with just: one");
      return [stored, (await said(memory, "old"))["persisted"]];
    });
    expect(seen).toEqual([{ persisted: true, children: ["thinking_level_change"], leafChildren: 0 }, false]);
  });

  it("the newest pi's getEntryCount, buildContextEntries and buildSessionProjection, after a compaction", async () => {
    const agent = start(PARLEY_BIN);
    await converse(agent, "Reply with just: one");
    await converse(agent, "Reply with just: two");
    await ok(agent, { type: "set_thinking_level", level: "high" });
    await ok(agent, { type: "compact" });
    await converse(agent, "Reply with just: three");
    const entries = ((await ok(agent, { type: "get_entries" }))["data"] as { entries: unknown[] }).entries;
    const messages = ((await ok(agent, { type: "get_messages" }))["data"] as { messages: { role: string }[] }).messages;
    const got = await said(agent, "new");
    expect(got["count"]).toBe(entries.length);
    // The compaction first, then what it keeps (from the last reply: keepRecentTokens 1, so the
    // level change after it too, with no message of its own), then what came after it.
    expect(got["contextEntries"]).toEqual(["compaction", "assistant", "thinking_level_change", "user", "assistant"]);
    // The compaction projects its snapshot of the recorded system prompt before its summary (pi 1.6).
    expect(got["projected"]).toEqual([
      "compaction:system+compactionSummary",
      "assistant:assistant",
      "thinking_level_change:",
      "user:user",
      "assistant:assistant",
    ]);
    expect(got["messages"]).toEqual(messages.map((m) => m.role));
    expect(got["level"]).toBe("high");
    expect(got["model"]).toEqual({ provider: "offline", modelId: "echo" });
  });
});
