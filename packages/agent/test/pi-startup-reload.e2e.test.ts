/**
 * Start-up's resource resolution and ctx.reload(), through the spawned CLI with pi's files in
 * temporary folders: resources are resolved once per trust state (each warning said once), and
 * ctx.reload() reads settings.json, prompts, skills and APPEND_SYSTEM.md again, as the newest pi.
 */
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { PARLEY_BIN, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { closedAfterEach, MINUTE, NO_KEYS, ok, place, write, type Place } from "./helpers/pi-home.js";

const VOTER = resolve(import.meta.dirname, "fixtures/pi-dropin/trust-voter.ts");
const running = closedAfterEach();

function start(p: Place, args: string[], extra: NodeJS.ProcessEnv = {}): AgentProcess {
  const env = { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir, ...extra };
  const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", ...args], { cwd: p.cwd, env });
  running.push(agent);
  return agent;
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
      // stderr is another pipe: wait for its lines (all said together, before the first answer is sent).
      await agent.until(() => agent.stderr().includes("npm:gone-user") && agent.stderr().includes("npm:gone-project"), MINUTE);
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
      const shell = async () => ((await ok(agent, { type: "bash", command: "echo prefix=$PFX" }))["data"] as Rec)["output"];
      const state = async () => (await ok(agent, { type: "get_state" }))["data"] as Rec;
      const names = async () => ((await ok(agent, { type: "get_commands" }))["data"] as { commands: Rec[] }).commands.map((c) => c["name"]);
      expect(await state()).toMatchObject({ steeringMode: "one-at-a-time", followUpMode: "one-at-a-time", autoCompactionEnabled: true });
      expect(await names()).toContain("before");
      expect(await shell()).toBe("prefix=\n");
      expect(await notified(agent, "/sys", (t) => t.includes("MARKER"))).toContain("MARKER-BEFORE");
      // A client's own choice (pi would have saved it to settings.json) is kept over the reload.
      await ok(agent, { type: "set_follow_up_mode", mode: "all" });

      // The files change on disk; nothing changes until ctx.reload().
      write(join(p.agentDir, "settings.json"), {
        steeringMode: "all",
        followUpMode: "one-at-a-time",
        compaction: { enabled: false },
        shellCommandPrefix: "PFX=after",
      });
      write(join(p.agentDir, "prompts/after.md"), "---\ndescription: After\n---\nafter $1\n");
      write(join(p.agentDir, "skills/fresh/SKILL.md"), "---\nname: fresh\ndescription: A new skill\n---\nbody\n");
      write(join(p.agentDir, "APPEND_SYSTEM.md"), "MARKER-AFTER");
      expect((await state())["steeringMode"]).toBe("one-at-a-time");
      expect(await names()).not.toContain("after");

      await notified(agent, "/reload-now", (t) => t === "session_start:reload");
      expect(await state()).toMatchObject({ steeringMode: "all", followUpMode: "all", autoCompactionEnabled: false });
      expect(await shell()).toBe("prefix=after\n");
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

/** A fake package manager: logs its arguments to $PM_LOG, then runs `body` (a shell script). */
function fakePackageManager(dir: string, name: string, body: string): string {
  const file = join(dir, name);
  write(file, `#!/bin/sh\necho "$@" >> "$PM_LOG"\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** Whether a process is gone (absent, or a zombie nobody has reaped yet). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

async function eventually(condition: () => boolean, what: string): Promise<void> {
  const end = Date.now() + MINUTE;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("settings.json npmCommand", () => {
  const promptNames = async (agent: AgentProcess): Promise<unknown[]> =>
    ((await ok(agent, { type: "get_commands" }))["data"] as { commands: Rec[] }).commands.map((c) => c["name"]);

  it(
    "a user package outside the agent directory is looked for in `<npmCommand> root -g`, asked once",
    async () => {
      const p = place("parley-npmcmd-");
      const root = join(p.home, "pm-global", "node_modules");
      const pm = fakePackageManager(p.home, "pnpm", `echo "${root}"`);
      write(join(root, "pm-pkg/package.json"), { name: "pm-pkg", version: "1.0.0" });
      write(join(root, "pm-pkg/prompts/from-pm.md"), "---\ndescription: From the package manager's folder\n---\nx\n");
      write(join(p.agentDir, "settings.json"), { npmCommand: [pm, "--silent"], packages: ["npm:pm-pkg"] });
      const log = join(p.home, "pm.log");
      const agent = start(p, [], { PM_LOG: log });
      expect(await promptNames(agent)).toContain("from-pm");
      expect(readFileSync(log, "utf8")).toBe("--silent root -g\n");
      expect(agent.stderr()).not.toContain("not installed");
    },
    2 * MINUTE,
  );

  it(
    "bun: `bun pm bin -g`, its global packages beside that folder",
    async () => {
      const p = place("parley-npmcmd-");
      const bunDir = join(p.home, ".bun");
      const bun = fakePackageManager(p.home, "bun", `echo "${join(bunDir, "bin")}"`);
      const pkg = join(bunDir, "install/global/node_modules/bun-pkg");
      write(join(pkg, "package.json"), { name: "bun-pkg", version: "1.0.0" });
      write(join(pkg, "prompts/from-bun.md"), "---\ndescription: From bun's folder\n---\nx\n");
      write(join(p.agentDir, "settings.json"), { npmCommand: [bun], packages: ["npm:bun-pkg"] });
      const log = join(p.home, "pm.log");
      const agent = start(p, [], { PM_LOG: log });
      expect(await promptNames(agent)).toContain("from-bun");
      expect(readFileSync(log, "utf8")).toBe("pm bin -g\n");
    },
    2 * MINUTE,
  );

  it(
    "is not run at a start-up whose packages are all in the agent directory, nor without packages",
    async () => {
      const p = place("parley-npmcmd-");
      const log = join(p.home, "pm.log");
      const pm = fakePackageManager(p.home, "pnpm", `echo /nowhere`);
      const managed = join(p.agentDir, "npm/node_modules/managed");
      write(join(managed, "package.json"), { name: "managed", version: "1.0.0" });
      write(join(managed, "prompts/managed.md"), "---\ndescription: Managed\n---\nx\n");
      write(join(p.agentDir, "settings.json"), { npmCommand: [pm], packages: ["npm:managed"] });
      expect(await promptNames(start(p, [], { PM_LOG: log }))).toContain("managed");
      write(join(p.agentDir, "settings.json"), { npmCommand: [pm] });
      await ok(start(p, [], { PM_LOG: log }), { type: "get_state" });
      expect(existsSync(log)).toBe(false);
    },
    2 * MINUTE,
  );

  it(
    "a package manager that fails is said once on stderr, and npm's global folder is looked in instead",
    async () => {
      const p = place("parley-npmcmd-");
      const pm = fakePackageManager(p.home, "pnpm", `echo "pnpm: broken store" >&2\nexit 3`);
      write(join(p.agentDir, "settings.json"), { npmCommand: [pm], packages: ["npm:missing-one"] });
      const agent = start(p, [], { PM_LOG: join(p.home, "pm.log") });
      await ok(agent, { type: "get_state" });
      await agent.until(() => agent.stderr().includes("npm:missing-one"), MINUTE);
      const stderr = agent.stderr();
      expect(occurrences(stderr, "settings.json npmCommand:"), stderr).toBe(1);
      expect(stderr).toContain("failed (exit 3): pnpm: broken store");
      expect(stderr).toContain("package npm:missing-one (user settings) is not installed");
    },
    2 * MINUTE,
  );

  it(
    "a package manager that hangs is killed after 10 s (start-up goes on), and with parley when a signal ends it",
    async () => {
      const p = place("parley-npmcmd-");
      const pids = join(p.home, "pids");
      // `exec`: the pid written is the process parley started.
      const pm = fakePackageManager(p.home, "pnpm", `echo $$ >> "${pids}"\nexec sleep 1000`);
      write(join(p.agentDir, "settings.json"), { npmCommand: [pm], packages: ["npm:slow-one"] });
      const pidOf = (n: number): number => Number(readFileSync(pids, "utf8").trim().split("\n")[n]);

      const waited = start(p, [], { PM_LOG: join(p.home, "pm.log") });
      await ok(waited, { type: "get_state" });
      await waited.until(() => waited.stderr().includes("did not answer within 10 s"), MINUTE);
      await eventually(() => gone(pidOf(0)), "the timed-out package manager to end");

      const signalled = start(p, [], { PM_LOG: join(p.home, "pm.log") });
      await eventually(() => existsSync(pids) && readFileSync(pids, "utf8").trim().split("\n").length === 2, "the second package manager to start");
      signalled.child.kill("SIGTERM");
      expect(await signalled.exited, signalled.stderr()).toEqual({ code: 143, signal: null });
      await eventually(() => gone(pidOf(1)), "the package manager to end with parley");
    },
    3 * MINUTE,
  );
});
