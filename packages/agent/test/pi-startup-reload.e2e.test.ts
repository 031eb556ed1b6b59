/**
 * Start-up's resource resolution and ctx.reload(), through the spawned CLI with pi's files in
 * temporary folders: resources are resolved once per trust state (each warning said once), and
 * ctx.reload() reads settings.json, prompts, skills and APPEND_SYSTEM.md again, as the newest pi.
 */
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { closedAfterEach, MINUTE, NO_KEYS, place, write, type Place } from "./helpers/pi-home.js";

const VOTER = resolve(import.meta.dirname, "fixtures/pi-dropin/trust-voter.ts");
const running = closedAfterEach();

function start(p: Place, args: string[], extra: NodeJS.ProcessEnv = {}): AgentProcess {
  const env = { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir, ...extra };
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", ...args], { cwd: p.cwd, env });
  running.push(agent);
  return agent;
}

async function ok(agent: AgentProcess, command: object): Promise<Rec> {
  const r = await agent.request(command, MINUTE);
  expect(r["success"], `${JSON.stringify(r)}\n${agent.stderr()}`).toBe(true);
  return r;
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

describe("resources are resolved once per start-up", () => {
  it(
    "a missing package is said once on stderr, the user's and (after project_trust trusts it) the project's",
    async () => {
      const p = place("parley-once-");
      write(join(p.agentDir, "settings.json"), { packages: ["npm:gone-user"] });
      write(join(p.cwd, ".pi/settings.json"), { packages: ["npm:gone-project"] });
      write(join(p.cwd, ".pi/prompts/proj.md"), "---\ndescription: Project prompt\n---\nhi\n");
      // .pi/ has resources: trust is pending until the voter's project_trust handler says yes.
      const agent = start(p, ["-e", VOTER], { TRUST_VOTE: "yes" });
      const commands = (await ok(agent, { type: "get_commands" }))["data"] as { commands: Rec[] };
      expect(commands.commands.map((c) => c["name"])).toContain("proj");
      const stderr = agent.stderr();
      expect(occurrences(stderr, "package npm:gone-user (user settings) is not installed"), stderr).toBe(1);
      expect(occurrences(stderr, "package npm:gone-project (project settings) is not installed"), stderr).toBe(1);
    },
    2 * MINUTE,
  );
});

/** An extension whose /reload-now calls ctx.reload(), /sys notifies the system prompt, and whose session_start says its reason. */
const RELOADER = `export default (pi: any) => {
  pi.registerCommand("reload-now", { handler: async (_a: string, ctx: any) => { await ctx.reload(); } });
  pi.registerCommand("sys", { handler: async (_a: string, ctx: any) => ctx.ui.notify(ctx.getSystemPrompt(), "info") });
  pi.on("session_start", (event: any, ctx: any) => ctx.ui.notify("session_start:" + event.reason, "info"));
};
`;

async function notified(agent: AgentProcess, message: string, expect: (text: string) => boolean): Promise<string> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message }, MINUTE);
  const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify" && expect(String(r["message"])), MINUTE, from);
  return String(note["message"]);
}

describe("ctx.reload() reads pi's files again", () => {
  it(
    "settings.json, prompt templates, skills and APPEND_SYSTEM.md changed on disk take effect after ctx.reload()",
    async () => {
      const p = place("parley-reload-");
      write(join(p.agentDir, "extensions/reloader.ts"), RELOADER);
      write(join(p.agentDir, "settings.json"), { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", compaction: { enabled: true } });
      write(join(p.agentDir, "prompts/before.md"), "---\ndescription: Before\n---\nbefore $1\n");
      write(join(p.agentDir, "APPEND_SYSTEM.md"), "MARKER-BEFORE");
      const agent = start(p, []);
      const state = async () => (await ok(agent, { type: "get_state" }))["data"] as Rec;
      const names = async () => ((await ok(agent, { type: "get_commands" }))["data"] as { commands: Rec[] }).commands.map((c) => c["name"]);
      expect(await state()).toMatchObject({ steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", autoCompactionEnabled: true });
      expect(await names()).toContain("before");
      expect(await notified(agent, "/sys", (t) => t.includes("MARKER"))).toContain("MARKER-BEFORE");

      // The files change on disk; nothing changes until ctx.reload().
      write(join(p.agentDir, "settings.json"), { steeringMode: "all", followUpMode: "all", compaction: { enabled: false } });
      write(join(p.agentDir, "prompts/after.md"), "---\ndescription: After\n---\nafter $1\n");
      write(join(p.agentDir, "skills/fresh/SKILL.md"), "---\nname: fresh\ndescription: A new skill\n---\nbody\n");
      write(join(p.agentDir, "APPEND_SYSTEM.md"), "MARKER-AFTER");
      expect((await state())["steeringMode"]).toBe("one-at-a-time");
      expect(await names()).not.toContain("after");

      await notified(agent, "/reload-now", (t) => t === "session_start:reload");
      expect(await state()).toMatchObject({ steeringMode: "all", followUpMode: "all", autoCompactionEnabled: false });
      const after = await names();
      expect(after).toEqual(expect.arrayContaining(["before", "after", "skill:fresh", "reload-now", "sys"]));
      const prompt = await notified(agent, "/sys", (t) => t.includes("MARKER"));
      expect(prompt).toContain("MARKER-AFTER");
      expect(prompt).not.toContain("MARKER-BEFORE");
      expect(prompt).toContain("<name>fresh</name>");
    },
    3 * MINUTE,
  );
});
