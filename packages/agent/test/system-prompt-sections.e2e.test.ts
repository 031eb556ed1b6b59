/**
 * The system prompt's named sections and the patches pi 1.6 records, checked through the spawned
 * CLIs side by side: pi 1.6.0 (the `pi-newest` devDependency) and parley, each in RPC mode in its
 * own temp HOME, on the scripted model of fixtures/pi16-drifts.ts. Compared: the system messages
 * of get_messages (the names of the sections each sets or removes, the tools it adds and removes),
 * the active tools, and what the next prompt records:
 * - every prompt source in its section (--append-system-prompt, AGENTS.md, a skill), and a
 *   --system-prompt replacing the built-in sections;
 * - a tool taken away patches only the sections that name it (the skills hint when `read` goes);
 * - a before_agent_start handler's `systemPrompt` is sent but never recorded;
 * - a tool taken away during a run is declared, with its sections' patch, before the run's next turn;
 * - a session taken up again (--session, switch_session, clone) continues with the tools its
 *   transcript records, so the next prompt records only what changed (a new AGENTS.md).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AgentWorld, agentWorld, CLI } from "./helpers/offline-agents.js";
import { closedAfterEach, MINUTE, NO_KEYS } from "./helpers/pi-home.js";
import { type AgentProcess, type Rec, ROOT, spawnAgent } from "./helpers/spawn.js";

const PI_NEWEST = join(ROOT, "node_modules/pi-newest/dist/cli.js");
const FIXTURE = join(ROOT, "packages/agent/test/fixtures/pi16-drifts.ts");
const AGENTS = { pi: PI_NEWEST, parley: CLI.parley } as const;
type Agent = keyof typeof AGENTS;
const BOTH: Agent[] = ["pi", "parley"];
const MODEL = ["--provider", "drifts", "--model", "scripted"];

const running = closedAfterEach();
const worlds: AgentWorld[] = [];
afterAll(() => {
  for (const w of worlds) rmSync(w.base, { recursive: true, force: true });
});

/** /drop NAME takes a tool out of the active set, /tools names the active ones; a prompt saying "forced" gets a handler's own system prompt. */
const TOOLS_EXTENSION = `export default function (pi) {
  pi.registerCommand("drop", {
    description: "drop a tool",
    handler: async (args, ctx) => {
      pi.setActiveTools(pi.getActiveTools().filter((name) => name !== args.trim()));
      ctx.ui.notify("dropped " + args.trim(), "info");
    },
  });
  pi.registerCommand("tools", {
    description: "the active tools",
    handler: async (_args, ctx) => ctx.ui.notify(JSON.stringify([...pi.getActiveTools()].sort()), "info"),
  });
  pi.on("before_agent_start", (event) => (event.prompt.includes("forced") ? { systemPrompt: "A prompt of the extension's own." } : undefined));
  // A bash call during a run takes write away: the run's next turn declares it.
  pi.on("tool_result", (event) => {
    if (event.toolName === "bash") pi.setActiveTools(pi.getActiveTools().filter((name) => name !== "write"));
  });
}
`;

function world(agent: Agent): AgentWorld {
  const w = agentWorld(`parley-sections-${agent}-`);
  worlds.push(w);
  writeFileSync(join(w.cwd, "tools-ext.js"), TOOLS_EXTENSION);
  return w;
}

function start(agent: Agent, w: AgentWorld, args: string[] = []): AgentProcess {
  const p = spawnAgent(process.execPath, [AGENTS[agent], "--mode", "rpc", "-ne", "-e", FIXTURE, "-e", join(w.cwd, "tools-ext.js"), ...MODEL, ...args], {
    cwd: w.cwd,
    env: { ...NO_KEYS, ...w.env, PI_OFFLINE: "1", NO_COLOR: "1" },
    checkSchema: agent === "parley",
  });
  running.push(p);
  return p;
}

const data = (r: Rec): Record<string, unknown> => (r["data"] ?? {}) as Record<string, unknown>;

async function prompted(p: AgentProcess, message: string): Promise<void> {
  const from = p.records.length;
  const response = await p.request({ type: "prompt", message }, MINUTE);
  expect(response["success"], JSON.stringify(response)).toBe(true);
  await p.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

/** Runs an extension command and waits for the notification it ends with. */
async function command(p: AgentProcess, line: string, notice: (message: string) => boolean): Promise<string> {
  const from = p.records.length;
  expect((await p.request({ type: "prompt", message: line }, MINUTE))["success"]).toBe(true);
  const shown = await p.waitFor((r) => r.type === "extension_ui_request" && typeof r["message"] === "string" && notice(r["message"]), MINUTE, from);
  return String(shown["message"]);
}

const activeTools = async (p: AgentProcess): Promise<string[]> => JSON.parse(await command(p, "/tools", (m) => m.startsWith("["))) as string[];

/** A system message as compared: the sections it sets ("-name": removes), the tools it adds and removes. */
interface SystemShape {
  content: unknown;
  sections: string[];
  added: string[];
  removed: string[];
}

async function systemMessages(p: AgentProcess): Promise<SystemShape[]> {
  const messages = data(await p.request({ type: "get_messages" }, MINUTE))["messages"] as Record<string, unknown>[];
  return messages
    .filter((m) => m["role"] === "system")
    .map((m) => {
      const sections = (m["sections"] ?? {}) as Record<string, string | null>;
      const names = (list: unknown) => (Array.isArray(list) ? list.map((t: { name: string }) => t.name).sort() : []);
      return {
        content: m["content"],
        sections: Object.entries(sections).map(([name, text]) => (text === null ? `-${name}` : name)),
        added: names(m["toolsAdded"]),
        removed: names(m["toolsRemoved"]),
      };
    });
}

const sessionFile = async (p: AgentProcess): Promise<string> => String(data(await p.request({ type: "get_state" }, MINUTE))["sessionFile"]);

describe("the system prompt's sections, as pi 1.6 records them", () => {
  it("each prompt source has its own section; --system-prompt replaces the built-in ones", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        writeFileSync(join(w.cwd, "AGENTS.md"), "Say hello first.\n");
        const skill = join(w.agentDir, "skills", "greeting");
        mkdirSync(skill, { recursive: true });
        writeFileSync(join(skill, "SKILL.md"), "---\nname: greeting\ndescription: How to greet.\n---\nWave.\n");
        const full = start(agent, w, ["--append-system-prompt", "Also be kind."]);
        await prompted(full, "Reply with just: one");
        const custom = start(agent, w, ["--system-prompt", "You are terse.", "--no-skills"]);
        await prompted(custom, "Reply with just: one");
        return { full: await systemMessages(full), custom: await systemMessages(custom) };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const { full, custom } = seen[1] as { full: SystemShape[]; custom: SystemShape[] };
    expect(full.map((m) => m.sections)).toEqual([["preamble", "tools", "rules", "docs", "addendum", "project_context", "skills", "cwd"]]);
    expect(full[0]?.added).toEqual(["bash", "edit", "read", "write"]);
    expect(custom.map((m) => m.sections)).toEqual([["preamble", "project_context", "cwd"]]);
  });

  it("a tool taken away patches only the sections that depend on it; a handler's forced prompt is never recorded", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        const skill = join(w.agentDir, "skills", "greeting");
        mkdirSync(skill, { recursive: true });
        writeFileSync(join(skill, "SKILL.md"), "---\nname: greeting\ndescription: How to greet.\n---\nWave.\n");
        const p = start(agent, w);
        // Forced from the first prompt on: the transcript still records the built sections.
        await prompted(p, "forced: Reply with just: one");
        await prompted(p, "Reply with just: two");
        await command(p, "/drop write", (m) => m.startsWith("dropped"));
        await prompted(p, "forced: Reply with just: three");
        // Without read, skills are loaded with bash: the skills section changes too.
        await command(p, "/drop read", (m) => m.startsWith("dropped"));
        await prompted(p, "Reply with just: four");
        await prompted(p, "Reply with just: five");
        return systemMessages(p);
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]).toEqual([
      { content: "", sections: ["preamble", "tools", "rules", "docs", "skills", "cwd"], added: ["bash", "edit", "read", "write"], removed: [] },
      { content: "", sections: ["tools", "rules"], added: [], removed: ["write"] },
      { content: "", sections: ["tools", "rules", "skills"], added: [], removed: ["read"] },
    ]);
  });

  it("a tool taken away during a run is declared, with the sections it changes, before the run's next request", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const p = start(agent, world(agent));
        // The scripted model answers "show env" with a bash call; the extension's tool_result handler drops write.
        await prompted(p, "show env");
        const messages = data(await p.request({ type: "get_messages" }, MINUTE))["messages"] as Record<string, unknown>[];
        await prompted(p, "Reply with just: two");
        return { roles: messages.map((m) => m["role"]), system: await systemMessages(p) };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[1]?.roles).toEqual(["system", "user", "assistant", "toolResult", "system", "assistant"]);
    expect(seen[1]?.system.slice(1)).toEqual([{ content: "", sections: ["tools", "rules"], added: [], removed: ["write"] }]);
  });

  it("a session taken up again (--session, switch_session, clone) continues with the tools its transcript records", async () => {
    const seen = await Promise.all(
      BOTH.map(async (agent) => {
        const w = world(agent);
        const first = start(agent, w);
        await prompted(first, "Reply with just: one");
        await command(first, "/drop write", (m) => m.startsWith("dropped"));
        await prompted(first, "Reply with just: two");
        const file = await sessionFile(first);
        first.kill();
        await first.exited;

        // Resumed from the command line: write stays away, and nothing changed, so nothing is recorded.
        const resumed = start(agent, w, ["--session", file]);
        const resumedTools = await activeTools(resumed);
        await prompted(resumed, "Reply with just: three");
        const afterResume = await systemMessages(resumed);

        // A new context file, then the session taken up again through switch_session: only that section is patched.
        writeFileSync(join(w.cwd, "AGENTS.md"), "Say hello first.\n");
        expect((await resumed.request({ type: "new_session" }, MINUTE))["success"]).toBe(true);
        const newSessionTools = await activeTools(resumed);
        const switched = await resumed.request({ type: "switch_session", sessionPath: file }, MINUTE);
        expect(switched["success"], JSON.stringify(switched)).toBe(true);
        const switchedTools = await activeTools(resumed);
        await prompted(resumed, "Reply with just: four");
        const afterSwitch = await systemMessages(resumed);

        // A clone of it carries the same transcript, and so the same tools.
        const cloned = await resumed.request({ type: "clone" }, MINUTE);
        expect(cloned["success"], JSON.stringify(cloned)).toBe(true);
        const clonedTools = await activeTools(resumed);
        await prompted(resumed, "Reply with just: five");
        const afterClone = await systemMessages(resumed);
        return { resumedTools, afterResume, newSessionTools, switchedTools, afterSwitch, clonedTools, afterClone };
      }),
    );
    expect(seen[1]).toEqual(seen[0]);
    const parley = seen[1] as { resumedTools: string[]; afterResume: SystemShape[]; newSessionTools: string[]; afterSwitch: SystemShape[] };
    expect(parley.resumedTools).toEqual(["bash", "edit", "read"]);
    expect(parley.newSessionTools).toEqual(["bash", "edit", "read", "write"]);
    expect(parley.afterResume).toHaveLength(2);
    expect(parley.afterSwitch.slice(2)).toEqual([{ content: "", sections: ["project_context"], added: [], removed: [] }]);
  });
});
