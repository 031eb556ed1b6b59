/**
 * resource-resolver.ts in-process, for the rules the wire tests against pi do not reach: `+path`
 * over `!`, the newest pi's `autoload: false` project entries, local package paths, project git
 * clones, pinned versions, npm's global folder from `~/.npmrc`, `-e` npm sources, and package
 * sources as pi parses them.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSettings } from "../src/config/settings.js";
import { npmGlobalRoot, parseSource } from "../src/resources/package-sources.js";
import { resolveCliSources, resolveResources, type ResolvedResources } from "../src/resources/resource-resolver.js";
import { write } from "./helpers/pi-home.js";

function places() {
  const home = mkdtempSync(join(tmpdir(), "parley-resolver-"));
  return { home, agentDir: join(home, ".pi/agent"), cwd: join(home, "proj"), env: { npm_config_prefix: join(home, "prefix") } };
}

const enabled = (r: ResolvedResources, type: "extensions" | "skills" | "prompts", base: string): string[] =>
  r[type].filter((x) => x.enabled).map((x) => x.path.replace(`${base}/`, ""));

describe("settings lists and discovery", () => {
  it("+path brings back what ! took, -path wins over both, discovery obeys the lists' overrides", () => {
    const p = places();
    for (const name of ["a", "b", "c"]) write(join(p.agentDir, `listed/${name}.md`), `---\ndescription: ${name}\n---\n`);
    write(join(p.agentDir, "prompts/found.md"), "found");
    write(join(p.agentDir, "prompts/hidden.md"), "hidden");
    const r = resolveResources({
      ...p,
      user: { prompts: ["listed", "!listed/*", "+listed/b.md", "+listed/c.md", "-listed/c.md", "!prompts/hidden.md"] },
      project: {},
    });
    expect(enabled(r, "prompts", p.agentDir)).toEqual(["listed/b.md", "prompts/found.md"]);
    // Disabled files keep their place: listed a, c and the discovered hidden one are there, off.
    expect(r.prompts.filter((x) => !x.enabled).map((x) => x.path.replace(`${p.agentDir}/`, ""))).toEqual(["listed/a.md", "listed/c.md", "prompts/hidden.md"]);
  });

  it("an untrusted project (project: undefined) gives nothing of .pi/ or .agents/skills", () => {
    const p = places();
    write(join(p.cwd, ".pi/prompts/x.md"), "x");
    write(join(p.cwd, ".agents/skills/s/SKILL.md"), "---\ndescription: s\n---\n");
    const trusted = resolveResources({ ...p, user: {}, project: {} });
    expect(trusted.prompts.length + trusted.skills.length).toBe(2);
    const untrusted = resolveResources({ ...p, user: {}, project: undefined });
    expect(untrusted.prompts.length + untrusted.skills.length).toBe(0);
  });
});

describe("discovery rules of the newest pi", () => {
  it(".agents/skills: loose markdown files count below the folder, not directly in it (pi's own skills/: the reverse)", () => {
    const p = places();
    const skill = "---\ndescription: d\n---\n";
    write(join(p.home, ".agents/skills/top.md"), skill);
    write(join(p.home, ".agents/skills/group/loose.md"), skill);
    write(join(p.home, ".agents/skills/group/deeper/also.md"), skill);
    write(join(p.home, ".agents/skills/whole/SKILL.md"), skill);
    write(join(p.home, ".agents/skills/whole/not-a-skill.md"), skill);
    write(join(p.agentDir, "skills/top.md"), skill);
    write(join(p.agentDir, "skills/group/loose.md"), skill);
    const r = resolveResources({ ...p, user: {}, project: undefined });
    expect(enabled(r, "skills", p.home)).toEqual([
      ".pi/agent/skills/top.md",
      ".agents/skills/group/deeper/also.md",
      ".agents/skills/group/loose.md",
      ".agents/skills/whole/SKILL.md",
    ]);
  });

  it("an .agents folder is its skills' base (pi 1.6): their sourceInfo.baseDir, and the lists' overrides match relative to it", () => {
    const p = places();
    const skill = "---\ndescription: d\n---\n";
    write(join(p.home, ".agents/skills/mine/SKILL.md"), skill);
    write(join(p.home, ".agents/skills/off/SKILL.md"), skill);
    write(join(p.cwd, ".agents/skills/proj/SKILL.md"), skill);
    write(join(p.cwd, ".pi/skills/own/SKILL.md"), skill);
    const r = resolveResources({ ...p, user: { skills: ["!skills/off/SKILL.md"] }, project: {} });
    const base = (name: string) => r.skills.find((x) => x.path.endsWith(`/${name}/SKILL.md`))?.sourceInfo.baseDir;
    expect([base("mine"), base("proj"), base("own")]).toEqual([join(p.home, ".agents"), join(p.cwd, ".agents"), join(p.cwd, ".pi")]);
    expect(enabled(r, "skills", p.home)).toEqual(["proj/.pi/skills/own/SKILL.md", "proj/.agents/skills/proj/SKILL.md", ".agents/skills/mine/SKILL.md"]);
  });

  it("ignore files: a nested file's rules apply below its folder, ! re-includes, an ignored folder is not entered; pi drops a leading /", () => {
    const p = places();
    write(join(p.agentDir, "prompts/.gitignore"), "# drafts\n*.draft.md\n!keep.draft.md\n");
    for (const name of ["a.md", "b.draft.md", "keep.draft.md"]) write(join(p.agentDir, `prompts/${name}`), "x");
    const listed = join(p.home, "listed");
    write(join(listed, ".fdignore"), "/top-only.md\nskip/\n");
    for (const name of ["top-only.md", "kept.md", "sub/top-only.md", "skip/x.md"]) write(join(listed, name), "x");
    write(join(listed, "sub/.ignore"), "/local.md\n");
    write(join(listed, "sub/local.md"), "x");
    write(join(listed, "local.md"), "x");
    const r = resolveResources({ ...p, user: { prompts: [listed] }, project: undefined });
    expect(r.prompts.map((x) => x.path.replace(`${p.home}/`, ""))).toEqual([
      // The root file's "/top-only.md" loses its slash (as in pi), so it matches at any depth.
      "listed/kept.md",
      "listed/local.md",
      ".pi/agent/prompts/a.md",
      ".pi/agent/prompts/keep.draft.md",
    ]);
  });
});

describe("packages", () => {
  it("local paths (a file is an extension, a folder a package), project git clones, filters, autoload: false deltas", () => {
    const p = places();
    write(join(p.home, "single.ts"), "export default () => {};");
    write(join(p.home, "folder-pkg/extensions/one.ts"), "export default () => {};");
    write(join(p.home, "folder-pkg/extensions/two.ts"), "export default () => {};");
    const clone = join(p.cwd, ".pi/git/example.org/team/kit");
    write(join(clone, "package.json"), { name: "kit", pi: { prompts: ["./p/*.md"] } });
    write(join(clone, "p/x.md"), "x");
    write(join(clone, "p/y.md"), "y");
    const r = resolveResources({
      ...p,
      user: { packages: [{ source: "~/single.ts" }, { source: "../../folder-pkg" }] },
      project: {
        // A delta over the user's folder-pkg: only two.ts changes (off); one.ts stays as the user entry loads it.
        packages: [
          { source: "../../folder-pkg", filter: { autoload: false, extensions: ["-extensions/two.ts"] } },
          { source: "git:example.org/team/kit@main", filter: { prompts: ["!p/y.md"] } },
        ],
      },
    });
    expect(enabled(r, "extensions", p.home)).toEqual(["single.ts", "folder-pkg/extensions/one.ts"]);
    expect(r.extensions.find((x) => x.path.endsWith("two.ts"))?.enabled).toBe(false);
    expect(enabled(r, "prompts", clone)).toEqual(["p/x.md"]);
    expect(r.prompts[0]?.sourceInfo).toMatchObject({ source: "git:example.org/team/kit@main", scope: "project", origin: "package", baseDir: clone });
    expect(r.warnings).toEqual([]);
  });

  it("a pinned npm version that differs, and a package not installed, are reported with the parley install command", () => {
    const p = places();
    write(join(p.agentDir, "npm/node_modules/pinned/package.json"), { name: "pinned", version: "1.0.0" });
    const r = resolveResources({ ...p, user: { packages: [{ source: "npm:pinned@2.0.0" }, { source: "git:github.com/a/b" }] }, project: {} });
    expect(r.warnings).toEqual([
      expect.stringContaining("npm:pinned@2.0.0: version 1.0.0 is installed"),
      expect.stringContaining("run `parley install git:github.com/a/b`"),
    ]);
  });

  it("npm's global folder: npm_config_prefix, else ~/.npmrc's prefix, else next to Node", () => {
    const p = places();
    expect(npmGlobalRoot({ ...p })).toBe(join(p.home, "prefix/lib/node_modules"));
    write(join(p.home, ".npmrc"), "registry=x\nprefix = ~/.npm-global\n");
    expect(npmGlobalRoot({ ...p, env: {} })).toBe(join(p.home, ".npm-global/lib/node_modules"));
  });

  it("parses sources as pi does", () => {
    expect(parseSource("npm:@scope/pkg@1.2.3")).toEqual({ type: "npm", spec: "@scope/pkg@1.2.3", name: "@scope/pkg", version: "1.2.3" });
    expect(parseSource("git:github.com/user/repo@v1")).toEqual({
      type: "git",
      host: "github.com",
      path: "user/repo",
      ref: "v1",
      repo: "https://github.com/user/repo",
    });
    expect(parseSource("git:git@github.com:user/repo.git")).toEqual({
      type: "git",
      host: "github.com",
      path: "user/repo",
      ref: undefined,
      repo: "git@github.com:user/repo.git",
    });
    expect(parseSource("https://gitlab.com/group/sub/repo@abc")).toEqual({
      type: "git",
      host: "gitlab.com",
      path: "group/sub/repo",
      ref: "abc",
      repo: "https://gitlab.com/group/sub/repo",
    });
    // Names that would leave the install folder are not git sources (pi refuses them too).
    expect(parseSource("git:example.com/user/../../x").type).toBe("local");
    expect(parseSource("github.com/user/repo")).toEqual({ type: "local", path: "github.com/user/repo" });
    expect(parseSource("./here")).toEqual({ type: "local", path: "./here" });
  });

  it("-e npm: and git: sources are not installed: they are reported", () => {
    const p = places();
    const r = resolveCliSources(["npm:x", "git:github.com/a/b"], p);
    expect(r.unavailable.map((u) => u.source)).toEqual(["npm:x", "git:github.com/a/b"]);
    expect(r.unavailable[0]?.error).toContain("parley install npm:x");
  });
});

describe("settings.json's resource keys", () => {
  it("each file's lists apart, packages in both forms, pi's older skills object, enableSkillCommands; bad values warned", () => {
    const p = places();
    write(join(p.agentDir, "settings.json"), {
      skills: { enableSkillCommands: false, customDirectories: ["old-skills"] },
      packages: ["npm:a", { source: "git:github.com/u/r", skills: [], autoload: false }, 42],
      extensions: "not-a-list",
    });
    write(join(p.cwd, ".pi/settings.json"), { prompts: ["p"], packages: ["npm:b"] });
    const loaded = loadSettings({ cwd: p.cwd, agentDir: p.agentDir });
    expect(loaded.settings.enableSkillCommands).toBe(false);
    expect(loaded.resources.user).toEqual({
      skills: ["old-skills"],
      packages: [{ source: "npm:a" }, { source: "git:github.com/u/r", filter: { skills: [], autoload: false } }],
    });
    expect(loaded.resources.project).toEqual({ prompts: ["p"], packages: [{ source: "npm:b" }] });
    expect(loaded.warnings).toEqual([
      expect.stringContaining('settings.json: "extensions" must be an array of strings'),
      expect.stringContaining('"packages" entry must be a source'),
    ]);
    // An untrusted project's file is not read.
    expect(loadSettings({ cwd: p.cwd, agentDir: p.agentDir, projectTrusted: false }).resources.project).toBeUndefined();
  });
});
