/**
 * pi's resource settings through the spawned CLI, side by side with pi 1.6.0 (`pi-newest`): settings.json's
 * `extensions`, `skills` and `prompts` lists (plain paths, `~`, globs, `!pattern`, `+path`,
 * `-path`, the project's relative to `.pi/`), installed pi packages (npm in npm's global folder
 * and in the project's `.pi/npm`, git clones in the agent directory; manifests with globs,
 * conventional folders, the object form's filters), an `-e` folder read as a package, the order
 * of extensions (their commands' `:1`/`:2` names), `enableSkillCommands`, and the flags that turn
 * each kind off. pi runs with PI_OFFLINE=1 so that it installs nothing (the missing package is
 * then skipped, as parley skips it, with a warning, without trying).
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PARLEY_BIN, PI_NEWEST_CLI, spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { closedAfterEach, MINUTE, NO_KEYS, place, write, type Place } from "./helpers/pi-home.js";
import { withoutBuiltins } from "./helpers/builtin-commands.js";

const OFFLINE = join(import.meta.dirname, "fixtures/offline-provider.ts");

const running = closedAfterEach();

/** An extension registering one command whose handler says where it came from. */
const ext = (command: string, from: string): string =>
  `export default (pi: any) => pi.registerCommand(${JSON.stringify(command)}, { description: ${JSON.stringify(from)}, handler: async (_a: string, ctx: any) => ctx.ui.notify(${JSON.stringify(from)}, "info") });\n`;
const skill = (description: string): string => `---\ndescription: ${description}\n---\n${description}: the body.\n`;
const prompt = (description: string): string => `---\ndescription: ${description}\n---\n${description} $1\n`;

/** A pi user's setup using every kind of resource entry. */
function setup(): Place & { prefix: string } {
  const p = place("parley-resources-");
  const prefix = join(p.home, "npm-prefix");
  const { agentDir, cwd, home } = p;
  write(join(agentDir, "trust.json"), { [realpathSync(cwd)]: true });
  // The user's settings: lists relative to the agent directory.
  write(join(agentDir, "settings.json"), {
    extensions: ["my-exts", "!my-exts/off.ts"],
    skills: ["more-skills", "!**/skip-me", "-skills/auto-off"],
    prompts: ["~/shared-prompts", "!**/draft-*"],
    packages: ["npm:glob-pkg", { source: "git:github.com/acme/tools@v1", skills: [], prompts: ["prompts/keep.md"] }],
    enableSkillCommands: false,
  });
  write(join(agentDir, "my-exts/on.ts"), ext("dup", "user settings list"));
  write(join(agentDir, "my-exts/off.ts"), ext("never", "excluded by !"));
  write(join(agentDir, "more-skills/listed/SKILL.md"), skill("Listed by the user"));
  write(join(agentDir, "more-skills/skip-me/SKILL.md"), skill("Excluded by a glob"));
  write(join(agentDir, "skills/auto-on/SKILL.md"), skill("Discovered"));
  write(join(agentDir, "skills/auto-off/SKILL.md"), skill("Excluded by -path"));
  write(join(agentDir, "prompts/auto.md"), prompt("Discovered prompt"));
  write(join(home, "shared-prompts/top.md"), prompt("Shared"));
  write(join(home, "shared-prompts/nested/deep.md"), prompt("Nested, listed folders are read recursively"));
  write(join(home, "shared-prompts/draft-one.md"), prompt("A draft"));
  // An npm package in npm's global folder (where pi installs): a manifest with a glob and an exclusion.
  const globPkg = join(prefix, "lib/node_modules/glob-pkg");
  write(join(globPkg, "package.json"), { name: "glob-pkg", version: "1.0.0", pi: { extensions: ["./ext/*.ts", "!ext/skip.ts"], prompts: ["prompts"] } });
  write(join(globPkg, "ext/a.ts"), ext("dup", "npm package"));
  write(join(globPkg, "ext/skip.ts"), ext("never2", "excluded by the manifest"));
  write(join(globPkg, "prompts/pkg-prompt.md"), prompt("From the npm package"));
  // A git clone without a manifest: conventional folders, narrowed by the entry's filter.
  const tools = join(agentDir, "git/github.com/acme/tools");
  write(
    join(tools, "extensions/tool.ts"),
    'export default (pi: any) => {\n  pi.registerCommand("git-tool", { description: "git package", handler: async () => {} });\n' +
      '  pi.registerCommand("sys", { handler: async (_a: string, ctx: any) => ctx.ui.notify(String(ctx.getSystemPrompt().includes("<name>auto-on</name>")), "info") });\n};\n',
  );
  write(join(tools, "skills/git-skill/SKILL.md"), skill("Filtered out by []"));
  write(join(tools, "prompts/keep.md"), prompt("Kept by the filter"));
  write(join(tools, "prompts/drop.md"), prompt("Dropped by the filter"));
  // The project's settings: relative to .pi/, its packages in .pi/npm.
  write(join(cwd, ".pi/settings.json"), {
    extensions: ["-extensions/off-proj.ts"],
    prompts: ["../team-prompts"],
    packages: ["npm:proj-pkg", "npm:missing-pkg"],
  });
  write(join(cwd, ".pi/extensions/on-proj.ts"), ext("dup", "project discovery"));
  write(join(cwd, ".pi/extensions/off-proj.ts"), ext("never3", "excluded by -path"));
  write(join(cwd, "team-prompts/team.md"), prompt("Team prompt"));
  const projPkg = join(cwd, ".pi/npm/node_modules/proj-pkg");
  write(join(projPkg, "package.json"), { name: "proj-pkg", version: "2.0.0" });
  write(join(projPkg, "skills/proj-pkg-skill/SKILL.md"), skill("From the project's package"));
  write(join(projPkg, "extensions/pp.ts"), ext("pp", "project package"));
  // A folder given with -e: a package of its own.
  write(join(home, "cli-pkg/package.json"), { name: "cli-pkg", pi: { extensions: ["cli.ts"], skills: ["skills"] } });
  write(join(home, "cli-pkg/cli.ts"), ext("dup", "-e folder"));
  write(join(home, "cli-pkg/skills/cli-skill/SKILL.md"), skill("From the -e folder"));
  return { ...p, prefix };
}

function start(kind: "pi" | "parley", p: Place & { prefix: string }, extra: string[] = []): AgentProcess {
  const args = ["--mode", "rpc", "--no-session", "-e", OFFLINE, "-e", join(p.home, "cli-pkg"), ...extra];
  const env = { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir, npm_config_prefix: p.prefix, PI_OFFLINE: "1" };
  const agent = spawnAgent(kind === "pi" ? PI_NEWEST_CLI : PARLEY_BIN, args, { cwd: p.cwd, env });
  running.push(agent);
  return agent;
}

async function commands(agent: AgentProcess): Promise<Rec[]> {
  const r = await agent.request({ type: "get_commands" }, MINUTE);
  expect(r["success"], agent.stderr()).toBe(true);
  return withoutBuiltins((r["data"] as { commands: Rec[] }).commands);
}

/** The text of the user message a prompt became (templates and skills expanded). */
async function userText(agent: AgentProcess, message: string): Promise<string> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message }, MINUTE);
  const end = await agent.waitFor((r) => r.type === "message_end" && (r["message"] as Rec)["role"] === "user", MINUTE, from);
  await agent.waitFor((r) => r.type === "agent_end", MINUTE, from);
  return ((end["message"] as Rec)["content"] as { text: string }[])[0]?.text ?? "";
}

const normalise = (value: unknown, p: Place): unknown => JSON.parse(JSON.stringify(value).replaceAll(p.home, "<home>")) as unknown;

describe("pi's resource settings and packages, against pi 1.6.0", () => {
  it(
    "lists, patterns, packages and -e folders give the same commands, in the same order, as pi",
    async () => {
      const p = setup();
      const run = async (kind: "pi" | "parley") => {
        const agent = start(kind, p);
        expect((await agent.request({ type: "set_model", provider: "offline", modelId: "echo" }, MINUTE))["success"]).toBe(true);
        const list = await commands(agent);
        // enableSkillCommands: false changes nothing in RPC mode: pi lists and expands skills anyway.
        const expanded = await userText(agent, "/skill:auto-on go");
        const from = agent.records.length;
        await agent.request({ type: "prompt", message: "/sys" }, MINUTE);
        const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", MINUTE, from);
        return { list: normalise(list, p), expanded: normalise(expanded, p), skillsInPrompt: note["message"], stderr: agent.stderr() };
      };
      const [pi, parley] = await Promise.all([run("pi"), run("parley")]);
      const names = (pi.list as Rec[]).map((c) => c["name"]);
      expect(names).toEqual([
        "dup:1",
        "dup:2",
        "dup:3",
        "pp",
        "dup:4",
        "git-tool",
        "sys",
        "team",
        "deep",
        "top",
        "auto",
        "pkg-prompt",
        "keep",
        "skill:cli-skill",
        "skill:listed",
        "skill:auto-on",
        "skill:proj-pkg-skill",
      ]);
      expect(pi.expanded).toContain('<skill name="auto-on"');
      expect(parley.list).toEqual(pi.list);
      expect(parley.expanded).toEqual(pi.expanded);
      // ... and offers them in the system prompt.
      expect([pi.skillsInPrompt, parley.skillsInPrompt]).toEqual(["true", "true"]);
      // pi (offline) skips the package it would install; parley says how to install it.
      expect(parley.stderr).toContain("package npm:missing-pkg (project settings) is not installed");
      expect(parley.stderr).toContain("parley install -l npm:missing-pkg");
    },
    4 * MINUTE,
  );

  it(
    "--no-extensions keeps -e ones; --no-skills and --no-prompt-templates keep the -e folder's and the flags' own, as pi",
    async () => {
      const p = setup();
      const extra = join(p.home, "extra-prompt.md");
      write(extra, prompt("Given with --prompt-template"));
      const flags = ["--no-extensions", "--no-skills", "--no-prompt-templates", "--prompt-template", extra];
      const [pi, parley] = await Promise.all((["pi", "parley"] as const).map(async (kind) => normalise(await commands(start(kind, p, flags)), p)));
      expect((pi as Rec[]).map((c) => c["name"])).toEqual(["dup", "extra-prompt", "skill:cli-skill"]);
      expect(parley).toEqual(pi);
    },
    3 * MINUTE,
  );
});

describe("ignore files in resource folders, against pi 1.6.0", () => {
  it(
    ".gitignore, .ignore and .fdignore in discovered folders, listed folders and packages hide what they list, as in pi",
    async () => {
      const p = place("parley-ignore-");
      const prefix = join(p.home, "npm-prefix");
      const { agentDir, home } = p;
      write(join(agentDir, "settings.json"), { prompts: ["~/listed-prompts"], skills: ["~/listed-skills"], packages: ["npm:ig-pkg"] });
      // Discovered extensions: a file and a folder listed in .gitignore; a negation brings one back.
      write(join(agentDir, "extensions/.gitignore"), "# comment\n\n*.ts\n!kept.ts\nwip/\n");
      write(join(agentDir, "extensions/kept.ts"), ext("kept-ext", "not ignored"));
      write(join(agentDir, "extensions/hidden.ts"), ext("hidden-ext", "ignored by *.ts"));
      write(join(agentDir, "extensions/wip/index.ts"), ext("wip-ext", "ignored folder"));
      write(join(agentDir, "extensions/tool/index.ts"), ext("tool-ext", "folder extension"));
      // Discovered skills: .ignore hides a folder; a nested .fdignore hides a sub-folder below it.
      write(join(agentDir, "skills/.ignore"), "draft/\n");
      write(join(agentDir, "skills/draft/SKILL.md"), skill("Ignored draft"));
      write(join(agentDir, "skills/good/SKILL.md"), skill("Good skill"));
      write(join(agentDir, "skills/group/.fdignore"), "/old\n");
      write(join(agentDir, "skills/group/old/SKILL.md"), skill("Ignored by an anchored pattern"));
      write(join(agentDir, "skills/group/new/SKILL.md"), skill("Kept in the group"));
      write(join(agentDir, "skills/loose.md"), skill("A loose skill file"));
      write(join(agentDir, "skills/.gitignore"), "loose.md\n");
      // Discovered prompts.
      write(join(agentDir, "prompts/.gitignore"), "secret.md\n");
      write(join(agentDir, "prompts/secret.md"), prompt("Ignored prompt"));
      write(join(agentDir, "prompts/open.md"), prompt("Open prompt"));
      // A listed prompts folder, read recursively: a nested ignore file's anchored pattern is its folder's.
      write(join(home, "listed-prompts/top.md"), prompt("Listed top"));
      write(join(home, "listed-prompts/sub/.gitignore"), "/local.md\n");
      write(join(home, "listed-prompts/sub/local.md"), prompt("Ignored below"));
      write(join(home, "listed-prompts/sub/shared.md"), prompt("Listed below"));
      write(join(home, "listed-prompts/local.md"), prompt("Not matched by the nested anchored pattern"));
      write(join(home, "listed-skills/.gitignore"), "off/\n");
      write(join(home, "listed-skills/on/SKILL.md"), skill("Listed skill"));
      write(join(home, "listed-skills/off/SKILL.md"), skill("Ignored listed skill"));
      // A package's conventional folders.
      const pkg = join(prefix, "lib/node_modules/ig-pkg");
      write(join(pkg, "package.json"), { name: "ig-pkg", version: "1.0.0" });
      write(join(pkg, "extensions/.gitignore"), "dev.ts\n");
      write(join(pkg, "extensions/main.ts"), ext("pkg-main", "package extension"));
      write(join(pkg, "extensions/dev.ts"), ext("pkg-dev", "ignored package extension"));
      write(join(pkg, "prompts/.ignore"), "*.draft.md\n");
      write(join(pkg, "prompts/pkg.md"), prompt("Package prompt"));
      write(join(pkg, "prompts/pkg.draft.md"), prompt("Ignored package prompt"));
      // The skills the system prompt offers, as an -e extension reads them.
      const sys = join(home, "sys.ts");
      write(
        sys,
        'export default (pi: any) => pi.registerCommand("prompt-skills", { handler: async (_a: string, ctx: any) => ctx.ui.notify(JSON.stringify([...ctx.getSystemPrompt().matchAll(/<name>([^<]*)<\\/name>/g)].map((m: any) => m[1])), "info") });\n',
      );
      const env = { ...NO_KEYS, HOME: home, PI_CODING_AGENT_DIR: agentDir, npm_config_prefix: prefix, PI_OFFLINE: "1" };
      const run = async (kind: "pi" | "parley") => {
        const agent = spawnAgent(kind === "pi" ? PI_NEWEST_CLI : PARLEY_BIN, ["--mode", "rpc", "--no-session", "-e", OFFLINE, "-e", sys], { cwd: p.cwd, env });
        running.push(agent);
        expect((await agent.request({ type: "set_model", provider: "offline", modelId: "echo" }, MINUTE))["success"]).toBe(true);
        const list = normalise(await commands(agent), p);
        const from = agent.records.length;
        await agent.request({ type: "prompt", message: "/prompt-skills" }, MINUTE);
        const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === "notify", MINUTE, from);
        return { list, skills: JSON.parse(String(note["message"])) as unknown };
      };
      const [pi, parley] = await Promise.all([run("pi"), run("parley")]);
      expect(pi.skills).toEqual(["on", "good", "new"]);
      expect(parley.skills).toEqual(pi.skills);
      expect((pi.list as Rec[]).map((c) => c["name"])).toEqual([
        "prompt-skills",
        "kept-ext",
        "tool-ext",
        "pkg-main",
        "local",
        "shared",
        "top",
        "open",
        "pkg",
        "skill:on",
        "skill:good",
        "skill:new",
      ]);
      expect(parley.list).toEqual(pi.list);
    },
    3 * MINUTE,
  );
});

describe("pi's resource settings, where parley reads the newest pi's places", () => {
  it(
    "npm packages in the agent directory's npm folder (the newest pi's), an untrusted project's settings unused",
    async () => {
      const p = place("parley-resources-");
      write(join(p.agentDir, "settings.json"), { packages: ["npm:@scope/managed"] });
      const managed = join(p.agentDir, "npm/node_modules/@scope/managed");
      write(join(managed, "package.json"), { name: "@scope/managed", version: "1.0.0", pi: { prompts: ["p"] } });
      write(join(managed, "p/managed.md"), prompt("Managed"));
      // The project's settings name a package and an extension list: untrusted (--no-approve), neither is used.
      write(join(p.cwd, ".pi/settings.json"), { packages: ["npm:evil"], prompts: ["../project-prompts"] });
      write(join(p.cwd, "project-prompts/proj.md"), prompt("Project"));
      const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", "--no-approve"], {
        cwd: p.cwd,
        env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
      });
      running.push(agent);
      const list = await commands(agent);
      expect(list.map((c) => c["name"])).toEqual(["managed"]);
      expect(list[0]?.["sourceInfo"]).toEqual({
        path: join(managed, "p/managed.md"),
        source: "npm:@scope/managed",
        scope: "user",
        origin: "package",
        baseDir: managed,
      });
      expect(agent.stderr()).not.toContain("evil");
    },
    2 * MINUTE,
  );

  it(
    "-e npm:… (pi installs it for the run) stops parley with the parley install command, as an -e that cannot load does",
    async () => {
      const p = place("parley-resources-");
      const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", "-e", "npm:some-pkg"], {
        cwd: p.cwd,
        env: { ...NO_KEYS, HOME: p.home, PI_CODING_AGENT_DIR: p.agentDir },
      });
      running.push(agent);
      expect((await agent.exited).code).toBe(1);
      expect(agent.stderr()).toContain("parley install npm:some-pkg");
      expect(agent.records).toEqual([]);
    },
    2 * MINUTE,
  );
});
