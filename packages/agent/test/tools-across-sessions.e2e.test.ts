/**
 * The tools of each session a process opens, as pi chooses them: every new session, switch and
 * fork starts from the start-up selection again (pi builds a fresh runtime for it, so tools an
 * extension deactivated in the old session are back, and the command line's --tools holds).
 * pi 1.6.0 (`pi-newest`) and parley are driven alike through the spawned CLI and must answer alike.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OFFLINE_PROVIDER } from "./helpers/offline-agents.js";
import { alike, closedAfterEach, MINUTE, NO_KEYS, ok, place, write } from "./helpers/pi-home.js";
import { PARLEY_BIN, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";

const running = closedAfterEach();

/** Says the active tools at every session_start; /narrow leaves only read active, /widen adds bash. */
const PROBE = `export default function (pi) {
  pi.registerTool({ name: "ext_tool", label: "e", description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [], details: {} }) });
  pi.on("session_start", (event, ctx) => ctx.ui.notify("start " + event.reason + ": " + pi.getActiveTools().sort().join(","), "info"));
  pi.registerCommand("narrow", { handler: async (_a, ctx) => { pi.setActiveTools(["read"]); ctx.ui.notify("narrowed " + pi.getActiveTools().join(","), "info"); } });
  pi.registerCommand("reload-now", { handler: async (_a, ctx) => { await ctx.reload(); } });
}
`;

const said = (agent: AgentProcess, prefix: string): string[] =>
  agent.records.flatMap((r: Rec) =>
    r.type === "extension_ui_request" && typeof r["message"] === "string" && r["message"].startsWith(prefix) ? [r["message"]] : [],
  );

async function narrow(agent: AgentProcess): Promise<void> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message: "/narrow" });
  await agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith("narrowed "), MINUTE, from);
}

async function reply(agent: AgentProcess): Promise<void> {
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message: "Reply with just: done" });
  await agent.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

/** Runs the scenario: start, /narrow, then each of new_session, switch_session (back to the first), fork, /reload-now. */
async function scenario(bin: string, args: string[]): Promise<string[]> {
  const p = place("parley-tools-sessions-");
  const probe = join(p.home, "probe.ts");
  write(probe, PROBE);
  const agent = spawnAgent(bin, ["--mode", "rpc", "-e", OFFLINE_PROVIDER, "-e", probe, "--provider", "offline", "--model", "echo", ...args], {
    cwd: p.cwd,
    env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
  });
  running.push(agent);
  await ok(agent, { type: "get_state" });
  await reply(agent);
  const first = ((await ok(agent, { type: "get_state" }))["data"] as { sessionFile: string }).sessionFile;
  await narrow(agent);
  await ok(agent, { type: "new_session" });
  await narrow(agent);
  await ok(agent, { type: "switch_session", sessionPath: first });
  await narrow(agent);
  const messages = (await ok(agent, { type: "get_fork_messages" }))["data"] as { messages: { entryId: string }[] };
  await ok(agent, { type: "fork", entryId: messages.messages[0]?.entryId });
  await narrow(agent);
  const from = agent.records.length;
  await ok(agent, { type: "prompt", message: "/reload-now" });
  await agent.waitFor((r) => r.type === "extension_ui_request" && String(r["message"]).startsWith("start reload"), MINUTE, from);
  // pi 0.73.1 started a switched-to session's extensions twice: a repeat counts once (pi 1.6 starts them once).
  return said(agent, "start ").filter((s, i, all) => s !== all[i - 1]);
}

describe("the tools each session starts with", () => {
  it.each([[[]], [["--tools", "read,bash,ext_tool"]]])(
    "new_session, switch_session and fork start from the start-up selection again; ctx.reload() keeps the session's (pi and parley alike; args %j)",
    async (args: string[]) => {
      const seen = await alike((bin) => scenario(bin, args));
      expect(seen.at(-1)).toMatch(/^start reload: /);
    },
    4 * MINUTE,
  );

  // pi 0.73.1 has no +name/-name entries; the newest pi applies them to every new session's defaults.
  it(
    "with --tools +name/-name, every new session starts from the changed defaults",
    async () => {
      const seen = await scenario(PARLEY_BIN, ["--tools", "+grep,-edit"]);
      const selection = "bash,ext_tool,grep,read,write";
      expect(seen).toEqual([
        `start startup: ${selection}`,
        `start new: ${selection}`,
        `start resume: ${selection}`,
        `start fork: ${selection}`,
        "start reload: ext_tool,read",
      ]);
    },
    4 * MINUTE,
  );
});
