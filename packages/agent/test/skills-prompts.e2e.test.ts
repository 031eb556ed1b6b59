/**
 * Skills and prompt templates as pi has them: discovery, get_commands, `/template args` and
 * `/skill:name args` expansion, the skills section of the system prompt, and pi's `:1`/`:2` names
 * for a command several extensions register. The wire tests run the same tree against pi 1.6.0
 * (`pi-newest`, on this Node) and parley and compare what a client sees. The skills section is compared up to its end: what
 * follows it in the system prompt (date, working folder, context files) is ordered differently.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expandPromptTemplate, loadResources, parseCommandArgs, substituteArgs } from "../src/resources/index.js";
import { spawnParley, spawnPiNewest, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { withoutBuiltins } from "./helpers/builtin-commands.js";

const FIXTURE = join(import.meta.dirname, "fixtures/offline-provider.ts");
const agents: AgentProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const a of agents) a.kill();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function write(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

/** A home with pi's agent folder and ~/.agents, a project with .pi and .agents, and loose paths. */
function tree(): { base: string; home: string; cwd: string; extra: string } {
  const base = mkdtempSync(join(tmpdir(), "skills-"));
  dirs.push(base);
  const home = join(base, "home");
  const cwd = join(base, "proj");
  const extra = join(base, "extra");
  mkdirSync(join(cwd, ".git"), { recursive: true }); // the ancestor walk stops here
  // The newest pi uses a project's .pi/ and .agents/ only once trusted; trust.json says so (pi 1.6 and parley both read it).
  write(join(home, ".pi/agent/trust.json"), JSON.stringify({ [realpathSync(cwd)]: true }));
  write(join(home, ".pi/agent/skills/user-skill/SKILL.md"), "---\nname: user-skill\ndescription: A user skill\n---\n# User\nDo user things.\n");
  write(join(home, ".agents/skills/home-agents/SKILL.md"), "---\ndescription: From ~/.agents\n---\nHome agents.\n");
  write(join(home, ".pi/agent/prompts/uprompt.md"), "First line used as the description, which is longer than sixty characters\nbody $ARGUMENTS\n");
  write(join(home, ".pi/agent/prompts/review.md"), "the user's review, shadowed by the project's\n");
  write(join(cwd, ".pi/skills/proj-skill/SKILL.md"), "---\ndescription: A project skill\n---\n# Proj\nDo project things.\n");
  write(join(cwd, ".pi/skills/hidden/SKILL.md"), "---\ndescription: Only by command\ndisable-model-invocation: true\n---\nHidden.\n");
  write(join(cwd, ".agents/skills/ag-skill/SKILL.md"), "---\ndescription: From .agents\n---\nAg.\n");
  write(join(cwd, ".pi/prompts/review.md"), "---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1, then $@, then ${@:2}.\n");
  write(join(extra, "SKILL.md"), "---\ndescription: An explicit skill\n---\nExtra.\n");
  write(join(extra, "xp.md"), "An explicit prompt with $1\n");
  write(
    join(base, "dup-a.ts"),
    'export default (pi: any) => pi.registerCommand("dup", { description: "first", handler: async (_a: string, ctx: any) => ctx.ui.notify("dup from a", "info") });\n',
  );
  write(
    join(base, "dup-b.ts"),
    'export default (pi: any) => { pi.registerCommand("dup", { description: "second", handler: async (_a: string, ctx: any) => ctx.ui.notify("dup from b", "info") });\n' +
      '  pi.registerCommand("prompt-text", { handler: async (_a: string, ctx: any) => ctx.ui.notify((ctx.getSystemPrompt().split("<available_skills>")[1] ?? "no skills section").split("</available_skills>")[0], "info") }); };\n',
  );
  return { base, home, cwd, extra };
}

async function start(kind: "pi" | "parley", t: ReturnType<typeof tree>, extraArgs: string[] = []): Promise<AgentProcess> {
  const args = [
    "--mode",
    "rpc",
    "--no-session",
    "-e",
    FIXTURE,
    "-e",
    join(t.base, "dup-a.ts"),
    "-e",
    join(t.base, "dup-b.ts"),
    "--skill",
    join(t.extra, "SKILL.md"),
    "--prompt-template",
    join(t.extra, "xp.md"),
    ...extraArgs,
  ];
  const env = { HOME: t.home, PI_CODING_AGENT_DIR: join(t.home, ".pi", "agent") };
  const agent = kind === "pi" ? spawnPiNewest(args.slice(2), { cwd: t.cwd, env }) : spawnParley(args.slice(2), { cwd: t.cwd, env });
  agents.push(agent);
  expect((await agent.request({ type: "set_model", provider: "offline", modelId: "echo" }, 60_000))["success"]).toBe(true);
  return agent;
}

const normalise = (value: unknown, base: string): unknown => JSON.parse(JSON.stringify(value).replaceAll(base, "<base>")) as unknown;

describe("prompt template arguments (pi's substitution)", () => {
  it("positional, all, slices; quotes group words; unknown names pass through", () => {
    expect(parseCommandArgs(`a "b c" 'd e' f`)).toEqual(["a", "b c", "d e", "f"]);
    expect(substituteArgs("$1|$2|$3|$@|$ARGUMENTS|${@:2}|${@:2:1}|${@:0}", ["x", "y", "z"])).toBe("x|y|z|x y z|x y z|y z|y|x y z");
    expect(substituteArgs("$4 missing", ["x"])).toBe(" missing");
    const templates = loadResources({ cwd: "/nonexistent", agentDir: "/nonexistent", noSkills: true }).prompts;
    expect(expandPromptTemplate("/nothing here", templates)).toBe("/nothing here");
  });

  it("discovery: project before user, first name wins, explicit paths last, --no-* keeps explicit paths", () => {
    const t = tree();
    const all = loadResources({
      cwd: t.cwd,
      agentDir: join(t.home, ".pi/agent"),
      home: t.home,
      skillPaths: [join(t.extra, "SKILL.md")],
      promptTemplatePaths: [join(t.extra, "xp.md")],
    });
    expect(all.skills.map((s) => s.name)).toEqual(["hidden", "proj-skill", "ag-skill", "user-skill", "home-agents", "extra"]);
    expect(all.prompts.map((p) => [p.name, p.sourceInfo.scope])).toEqual([
      ["review", "project"],
      ["uprompt", "user"],
      ["xp", "temporary"],
    ]);
    expect(all.warnings.some((w) => w.message.includes('"review"'))).toBe(true);
    expect(expandPromptTemplate("/review a.ts b.ts", all.prompts)).toBe("Review a.ts, then a.ts b.ts, then b.ts.");
    const none = loadResources({
      cwd: t.cwd,
      agentDir: join(t.home, ".pi/agent"),
      home: t.home,
      noSkills: true,
      noPromptTemplates: true,
      skillPaths: [join(t.extra, "SKILL.md")],
    });
    expect(none.skills.map((s) => s.name)).toEqual(["extra"]);
    expect(none.prompts).toEqual([]);
  });
});

describe("skills and prompt templates on the wire, against pi", () => {
  it("get_commands, /template and /skill: expansion, the system prompt's skills, duplicate command names", async () => {
    const t = tree();
    const run = async (kind: "pi" | "parley") => {
      const agent = await start(kind, t);
      const commands = withoutBuiltins(((await agent.request({ type: "get_commands" }, 60_000))["data"] as { commands: Rec[] }).commands);
      const userTexts: string[] = [];
      for (const message of ["/review a.ts b.ts", "/skill:proj-skill then say ok", "/xp one"]) {
        const from = agent.records.length;
        await agent.request({ type: "prompt", message }, 60_000);
        const end = await agent.waitFor((r) => r.type === "message_end" && (r["message"] as Rec)["role"] === "user", 60_000, from);
        userTexts.push(((end["message"] as Rec)["content"] as { text: string }[])[0]?.text ?? "");
        await agent.waitFor((r) => r.type === "agent_end", 60_000, from);
      }
      const notes: string[] = [];
      for (const message of ["/dup:1", "/dup:2", "/prompt-text"]) {
        const from = agent.records.length;
        await agent.request({ type: "prompt", message }, 60_000);
        const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", 60_000, from);
        notes.push(String(note["message"]));
      }
      const steered = await agent.request({ type: "steer", message: "/dup:1" }, 60_000);
      return normalise({ commands, userTexts, notes, steered: steered["error"] }, t.base);
    };
    const [pi, parley] = await Promise.all([run("pi"), run("parley")]);
    expect(pi).toMatchObject({ notes: ["dup from a", "dup from b", expect.stringContaining("<base>/proj/.pi/skills/proj-skill/SKILL.md")] });
    expect(parley).toEqual(pi);
  }, 180_000);
});
