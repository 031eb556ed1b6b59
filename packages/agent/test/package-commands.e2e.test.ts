/**
 * `parley install | remove | update | list | config` against pi 1.6.0's own commands, both
 * spawned on the same Node, each in a private world (a HOME with its agent directory, a project).
 * Nothing reaches a network: the npm package is a tarball made with `npm pack` (installed as
 * `npm:name@file:…`, which pi passes to npm as it is, with npm offline), the git package a
 * repository made with `git init` (reached through `https://example.test/…`, which the world's
 * ~/.gitconfig rewrites to a file:// URL, as a user's insteadOf would), the local package a folder.
 * Compared: exit statuses, stdout and stderr (paths and npm's timings made alike), settings.json
 * byte for byte, the files each install made; then each agent loads what the other installed.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";
import { type CliResult as Result, runSide, SIDES, type Side, type SideWorld as World, sideWorld, startSide } from "./helpers/newest-pi.js";
import { type AgentProcess, type Rec, ROOT } from "./helpers/spawn.js";

const OFFLINE = join(ROOT, "packages/agent/test/fixtures/offline-provider.ts");
/** pi 1.6.0 takes seconds to start on a busy machine; each command gets ten minutes (scaled). */
const COMMAND_MS = deadline(10 * AGENT_CEILING_MS);
const TEST_MS = deadline(40 * AGENT_CEILING_MS);

let root: string;
let fixtures: string;
let tarball: string;
let repo: string;
const worlds = {} as Record<Side, World>;

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
}

/** An extension that registers one command, so get_commands shows whether a package loaded. */
const extension = (command: string): string =>
  `export default function (pi: any) { pi.registerCommand(${JSON.stringify(command)}, { description: "from a package", handler: async () => {} }); }\n`;

function writeFile(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "parley-pkgcmd-")));
  fixtures = join(root, "fixtures");
  // npm: a package packed into a tarball.
  const npmPkg = join(fixtures, "npm-src");
  writeFile(join(npmPkg, "package.json"), JSON.stringify({ name: "parley-fixture-npm", version: "1.0.0", keywords: ["pi-package"] }));
  writeFile(join(npmPkg, "extensions", "index.ts"), extension("fixture-npm"));
  const packed = spawnSync("npm", ["pack", "--pack-destination", fixtures], {
    cwd: npmPkg,
    encoding: "utf8",
    env: { ...process.env, npm_config_offline: "true" },
  });
  if (packed.status !== 0) throw new Error(`npm pack: ${packed.stderr}`);
  tarball = join(fixtures, "parley-fixture-npm-1.0.0.tgz");
  // git: a repository with a manifest naming its extension.
  repo = join(fixtures, "repos", "user", "gitpkg");
  writeFile(join(repo, "package.json"), JSON.stringify({ name: "gitpkg", version: "1.0.0", pi: { extensions: ["./ext/main.ts"] } }));
  writeFile(join(repo, "ext", "main.ts"), extension("fixture-git"));
  git(repo, "init", "-q", "-b", "main");
  git(repo, "-c", "user.email=t@example.test", "-c", "user.name=t", "add", "-A");
  git(repo, "-c", "user.email=t@example.test", "-c", "user.name=t", "commit", "-q", "-m", "one");
  // local: a folder with the conventional extensions/ folder.
  writeFile(join(fixtures, "local-pkg", "extensions", "index.ts"), extension("fixture-local"));
  writeFile(join(fixtures, "local-pkg", "package.json"), JSON.stringify({ name: "local-pkg", version: "0.0.1" }));
  for (const side of SIDES) {
    const base = join(root, side);
    const w = sideWorld(base, {
      GIT_CONFIG_NOSYSTEM: "1",
      npm_config_offline: "true",
      npm_config_update_notifier: "false",
      npm_config_cache: join(base, "home", ".npm"),
    });
    writeFileSync(join(w.home, ".gitconfig"), `[url "file://${join(fixtures, "repos")}/"]\n\tinsteadOf = https://example.test/\n`);
    // Settings the commands must keep: other keys in their order, a key pi migrates, unknown keys.
    writeFileSync(join(w.agentDir, "settings.json"), '{"theme":"dark","queueMode":"all","custom":{"nested":[1,2]},"packages":["./no-such-folder"]}\n');
    // The project is trusted (its .pi/settings.json, once written, needs trust), as pi saves it.
    writeFileSync(join(w.agentDir, "trust.json"), JSON.stringify({ [w.cwd]: true }));
    worlds[side] = w;
  }
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Runs one command of one agent to its end (stdin closed: pi then has no terminal either). */
const run = (side: Side, args: string[], cwd = worlds[side].cwd): Promise<Result> => runSide(side, args, { cwd, env: worlds[side].env, ms: COMMAND_MS });

/** Both agents, the same command, at once. */
async function both(args: string[], cwdOf?: (w: World) => string): Promise<Record<Side, Result>> {
  const [pi, parley] = await Promise.all(SIDES.map((side) => run(side, args, cwdOf?.(worlds[side]))));
  return { pi: pi as Result, parley: parley as Result };
}

/** Output as compared: each world's folder as <world>, npm's timings and pi's name made alike. */
function alike(side: Side, text: string): string {
  return text
    .split(worlds[side].base)
    .join("<world>")
    .replace(/ in \d+(\.\d+)?m?s$/gm, " in <time>")
    .replace(/\b(pi|parley) (install|remove|uninstall|update|list|config|--help)\b/g, "<app> $2");
}

/**
 * Both sides' status and output alike. `anyOrder`: pi updates npm and git packages at once, so
 * what npm and git print interleaves by chance; the lines are compared, not their order.
 */
function expectSame(r: Record<Side, Result>, anyOrder = false): void {
  const text = (side: Side, t: string): string => (anyOrder ? alike(side, t).split("\n").sort().join("\n") : alike(side, t));
  expect({ code: r.parley.code, stdout: text("parley", r.parley.stdout), stderr: text("parley", r.parley.stderr) }).toEqual({
    code: r.pi.code,
    stdout: text("pi", r.pi.stdout),
    stderr: text("pi", r.pi.stderr),
  });
}

const settingsText = (side: Side, file = join(worlds[side].agentDir, "settings.json")): string =>
  existsSync(file) ? readFileSync(file, "utf8").split(worlds[side].base).join("<world>") : "(none)";

/** The files under a folder (relative paths, with each small file's text), leaving out npm's lock and the git objects. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (name === ".git" || name === "package-lock.json" || name === ".package-lock.json") continue;
      if (statSync(full).isDirectory()) walk(full);
      else out[relative(dir, full)] = statSync(full).size < 4096 ? readFileSync(full, "utf8") : "(big)";
    }
  };
  walk(dir);
  return out;
}

const running: AgentProcess[] = [];
afterAll(async () => {
  for (const agent of running.splice(0)) {
    agent.closeInput();
    const timer = setTimeout(() => agent.kill(), 30_000);
    await agent.exited;
    clearTimeout(timer);
  }
});

/** The fixture commands an agent in RPC mode has loaded in a world. */
async function loadedIn(side: Side, agent: Side): Promise<string[]> {
  const w = worlds[side];
  const args = ["--mode", "rpc", "--no-session", "-e", OFFLINE];
  const p = startSide(agent, args, { cwd: w.cwd, env: { ...w.env, PI_OFFLINE: "1" } });
  running.push(p);
  const r = await p.request({ type: "get_commands" }, COMMAND_MS);
  expect(r["success"], p.stderr()).toBe(true);
  p.closeInput();
  await p.exited;
  // Each fixture command with the scope and folder of the copy it came from.
  return (r["data"] as { commands: Rec[] }).commands
    .filter((c) => String(c["name"]).startsWith("fixture-"))
    .map((c) => {
      const info = c["sourceInfo"] as { scope?: string; path?: string } | undefined;
      const from = (info?.path ?? "").split(w.base).join("<world>").split(root).join("<root>");
      return `${String(c["name"])} ${info?.scope} ${from}`;
    })
    .sort();
}

describe("package commands, parley against pi 1.6.0", () => {
  const npmSource = (): string => `npm:parley-fixture-npm@file:${tarball}`;
  const gitSource = "git:example.test/user/gitpkg";

  it(
    "install: npm tarball, git repository, local folder and a project (-l) install give the same output, settings.json and files",
    async () => {
      for (const source of [npmSource(), gitSource]) expectSame(await both(["install", source]));
      // A relative path, from the project folder: settings keep it relative to the agent directory.
      expectSame(await both(["install", "../../fixtures/local-pkg"]));
      // Installing again changes nothing in settings.json.
      expectSame(await both(["install", "../../fixtures/local-pkg"]));
      expectSame(await both(["install", "-l", "../../fixtures/local-pkg"]));
      // The npm package for the project too: the project's copy is the one loaded (see below).
      expectSame(await both(["install", "-l", npmSource()]));
      expect(settingsText("parley")).toBe(settingsText("pi"));
      expect(settingsText("parley")).toContain('"../../../../fixtures/local-pkg"');
      const project = (side: Side): string => settingsText(side, join(worlds[side].cwd, ".pi", "settings.json"));
      expect(project("parley")).toBe(project("pi"));
      for (const folder of ["npm", "git"]) expect(tree(join(worlds.parley.agentDir, folder))).toEqual(tree(join(worlds.pi.agentDir, folder)));
      expect(tree(join(worlds.parley.cwd, ".pi", "npm"))).toEqual(tree(join(worlds.pi.cwd, ".pi", "npm")));
      expect(existsSync(join(worlds.parley.agentDir, "npm", "node_modules", "parley-fixture-npm", "extensions", "index.ts"))).toBe(true);
      expect(existsSync(join(worlds.parley.agentDir, "git", "example.test", "user", "gitpkg", "ext", "main.ts"))).toBe(true);
      // No lock or temporary file left behind.
      expect(
        readdirSync(worlds.parley.agentDir)
          .filter((n) => n.includes("settings.json"))
          .sort(),
      ).toEqual(["settings.json"]);
      expectSame(await both(["list"]));
    },
    TEST_MS,
  );

  it(
    "what parley installed loads in pi 1.6.0, and what pi installed loads in parley; a package in both settings loads once, the project's copy",
    async () => {
      const all = [
        "fixture-git user <world>/home/.pi/agent/git/example.test/user/gitpkg/ext/main.ts",
        "fixture-local project <root>/fixtures/local-pkg/extensions/index.ts",
        "fixture-npm project <world>/project/.pi/npm/node_modules/parley-fixture-npm/extensions/index.ts",
      ];
      const [piLoadsParleys, parleyLoadsPis] = await Promise.all([loadedIn("parley", "pi"), loadedIn("pi", "parley")]);
      expect(piLoadsParleys).toEqual(all);
      expect(parleyLoadsPis).toEqual(all);
    },
    TEST_MS,
  );

  it(
    "update: a new commit in the git repository is fetched and reported alike; the npm package is reinstalled from its tarball",
    async () => {
      writeFile(join(repo, "ext", "more.md"), "more\n");
      git(repo, "-c", "user.email=t@example.test", "-c", "user.name=t", "add", "-A");
      git(repo, "-c", "user.email=t@example.test", "-c", "user.name=t", "commit", "-q", "-m", "two");
      const r = await both(["update", "--extensions"]);
      expectSame(r, true);
      expect(r.parley.stdout).toMatch(/Updated 1 package:\n {2}git:example\.test\/user\/gitpkg [0-9a-f]{7} -> [0-9a-f]{7}\n/);
      expectSame(await both(["update", gitSource]));
      expectSame(await both(["update", "parley-fixture-npm"]));
      expect(tree(join(worlds.parley.agentDir, "git"))).toEqual(tree(join(worlds.pi.agentDir, "git")));
      // An entry with filters, installed again at a ref: the entry's source changes, its filters stay.
      for (const side of SIDES) {
        const file = join(worlds[side].agentDir, "settings.json");
        const settings = JSON.parse(readFileSync(file, "utf8")) as { packages: unknown[] };
        const packages = settings.packages.map((p) => (p === gitSource ? { source: gitSource, extensions: [] } : p));
        writeFileSync(file, JSON.stringify({ ...settings, packages }, null, 2));
      }
      expectSame(await both(["install", `${gitSource}@main`]));
      expect(settingsText("parley")).toBe(settingsText("pi"));
      expect(JSON.parse(settingsText("parley")).packages).toContainEqual({ source: `${gitSource}@main`, extensions: [] });
      expectSame(await both(["list"]));
    },
    TEST_MS,
  );

  it(
    "remove and uninstall: the installed copy and the settings entry go; an unknown package is an error",
    async () => {
      expectSame(await both(["remove", npmSource()]));
      expectSame(await both(["uninstall", gitSource]));
      expectSame(await both(["remove", "-l", "../../fixtures/local-pkg"]));
      expectSame(await both(["remove", "npm:never-installed"]));
      expect(settingsText("parley")).toBe(settingsText("pi"));
      expect(tree(join(worlds.parley.agentDir, "git"))).toEqual(tree(join(worlds.pi.agentDir, "git")));
      expect(existsSync(join(worlds.parley.agentDir, "npm", "node_modules", "parley-fixture-npm"))).toBe(false);
      expectSame(await both(["list"]));
    },
    TEST_MS,
  );

  it(
    "bad usage and an untrusted project are refused alike",
    async () => {
      for (const args of [
        ["install"],
        ["install", "--bogus", "x"],
        ["remove", "a", "b"],
        ["list", "-l"],
        ["update", "--extension"],
        ["update", "--all", "x"],
      ]) {
        expectSame(await both(args));
      }
      // A project whose .pi/ holds code needs trust, which nobody gave: -l is refused.
      const untrusted = (w: World): string => {
        const dir = join(w.base, "untrusted");
        mkdirSync(join(dir, ".pi", "extensions"), { recursive: true });
        return dir;
      };
      expectSame(await both(["install", "-l", "npm:x"], untrusted));
      expectSame(await both(["config", "--bogus"]));
      expectSame(await both(["config", "-l"], untrusted));
    },
    TEST_MS,
  );

  it(
    "config: as pi before its UI opens, a listed package that is missing is installed; then parley, which has no terminal UI, says what to do instead with status 1",
    async () => {
      const file = join(worlds.parley.agentDir, "settings.json");
      const settings = JSON.parse(readFileSync(file, "utf8")) as { packages: unknown[] };
      writeFileSync(file, JSON.stringify({ ...settings, packages: [...settings.packages, gitSource] }, null, 2));
      const r = await run("parley", ["config"]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("parley has no terminal UI");
      expect(existsSync(join(worlds.parley.agentDir, "git", "example.test", "user", "gitpkg", "ext", "main.ts"))).toBe(true);
    },
    TEST_MS,
  );
});
