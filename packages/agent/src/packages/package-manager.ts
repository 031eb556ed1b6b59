/**
 * pi's package manager, the writing side: install, remove and update the packages settings.json
 * lists, where pi puts them (the reading side, resources/package-sources.ts and
 * resource-resolver.ts, finds them there):
 *   npm:   `<npmCommand> install <spec> --prefix <root>` in the agent directory's `npm/` (user)
 *          or the project's `.pi/npm/` (made with pi's `package.json` and `.gitignore`);
 *   git:   `git clone <repo>` into `<agent dir>/git/<host>/<path>` or `.pi/git/<host>/<path>`,
 *          checked out at the ref, its dependencies installed; updates fetch the ref or the
 *          upstream branch and reset to it;
 *   local: nothing is copied; settings name the path relative to the settings file's folder.
 * The settings entry is added or removed afterwards (package-settings.ts), matched by pi's
 * identity: npm by name, git by host and path, local by resolved path.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import semver from "semver";
import { PROJECT_DIR_NAME } from "../config/agent-dir.js";
import {
  dedupePackages,
  installedPath,
  installedVersion,
  isPinnedNpmVersion,
  type PackageScope,
  type ParsedSource,
  parseSource,
  type ScopedPackage,
} from "../resources/package-sources.js";
import { expandHome, fromFileUrl } from "../resources/paths.js";
import { entrySource, type RawPackage, writePackages } from "./package-settings.js";
import { captureTool, NETWORK_TIMEOUT_MS, runTool } from "./run-tool.js";

type NpmSource = Extract<ParsedSource, { type: "npm" }>;
type GitSource = Extract<ParsedSource, { type: "git" }>;

export interface PackagePlaces {
  cwd: string;
  agentDir: string;
  home: string;
  /** settings.json `npmCommand` (the global file's), else plain npm. */
  npmCommand?: readonly string[] | undefined;
  projectTrusted: boolean;
}

export interface PackageEvents {
  /** "Installing npm:x...", as pi prints it before the work. */
  start(message: string): void;
  /** Something that did not stop the command (pi counts these). */
  warning(message: string): void;
  /** A package whose installed version changed: "npm:x 1.0.0 -> 1.1.0". */
  updated(message: string): void;
}

/** pi's `.gitignore` for its install folders: ignore all but itself. */
const GITIGNORE = "*\n!.gitignore\n";

export function isOfflineMode(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env["PI_OFFLINE"]?.toLowerCase();
  return value === "1" || value === "true" || value === "yes";
}

export class PackageManager {
  readonly #places: PackagePlaces;
  readonly #events: PackageEvents;

  constructor(places: PackagePlaces, events: PackageEvents) {
    this.#places = places;
    this.#events = events;
  }

  settingsFile(scope: PackageScope): string {
    return scope === "project" ? join(this.#places.cwd, PROJECT_DIR_NAME, "settings.json") : join(this.#places.agentDir, "settings.json");
  }

  baseDir(scope: PackageScope): string {
    return scope === "project" ? join(this.#places.cwd, PROJECT_DIR_NAME) : this.#places.agentDir;
  }

  /** A path as pi reads one: trimmed, `~` and `file://` understood, relative to `base`. */
  #path(input: string, base: string): string {
    const expanded = expandHome(input.trim(), this.#places.home);
    return resolve(base, /^file:\/\//.test(expanded) ? (fromFileUrl(expanded) ?? expanded) : expanded);
  }

  #assertTrusted(scope: PackageScope): void {
    if (scope === "project" && !this.#places.projectTrusted) throw new Error("Project is not trusted; refusing to access project package storage");
  }

  /** pi's match key: npm by name, git by host and path, local by resolved path (from `base`). */
  #key(source: string, base: string): string {
    const parsed = parseSource(source);
    if (parsed.type === "npm") return `npm:${parsed.name}`;
    if (parsed.type === "git") return `git:${parsed.host}/${parsed.path}`;
    return `local:${this.#path(parsed.path, base)}`;
  }

  #matches(entry: RawPackage, input: string, scope: PackageScope): boolean {
    const source = entrySource(entry);
    return source !== undefined && this.#key(source, this.baseDir(scope)) === this.#key(input, this.#places.cwd);
  }

  async install(source: string, scope: PackageScope): Promise<void> {
    const parsed = parseSource(source);
    this.#assertTrusted(scope);
    await this.#step(`Installing ${source}...`, async () => {
      if (parsed.type === "npm") await this.#installNpm([parsed.spec], scope);
      else if (parsed.type === "git") await this.#installGit(parsed, scope);
      else {
        const path = this.#path(parsed.path, this.#places.cwd);
        if (!existsSync(path)) throw new Error(`Path does not exist: ${path}`);
      }
    });
  }

  /** The source as settings keep it: a local path relative to the settings file's folder. */
  #forSettings(source: string, scope: PackageScope): string {
    const parsed = parseSource(source);
    if (parsed.type !== "local") return source;
    return relative(this.baseDir(scope), this.#path(parsed.path, this.#places.cwd)) || ".";
  }

  /** Adds the source to the scope's settings, or rewrites the entry of the same package; a warning when the file could not be written. */
  addToSettings(source: string, scope: PackageScope): Promise<string | undefined> {
    const normal = this.#forSettings(source, scope);
    return writePackages(this.settingsFile(scope), (current) => {
      const index = current.findIndex((entry) => this.#matches(entry, source, scope));
      if (index < 0) return [...current, normal];
      const existing = current[index];
      if (entrySource(existing) === normal) return undefined;
      const next = [...current];
      next[index] = typeof existing === "string" ? normal : { ...(existing as object), source: normal };
      return next;
    });
  }

  /** Removes the package's entries from the scope's settings; whether there was one. */
  async removeFromSettings(source: string, scope: PackageScope): Promise<{ removed: boolean; warning?: string }> {
    let removed = false;
    const warning = await writePackages(this.settingsFile(scope), (current) => {
      const next = current.filter((entry) => !this.#matches(entry, source, scope));
      removed = next.length !== current.length;
      return removed ? next : undefined;
    });
    return warning === undefined ? { removed } : { removed, warning };
  }

  async remove(source: string, scope: PackageScope): Promise<void> {
    const parsed = parseSource(source);
    this.#assertTrusted(scope);
    await this.#step(`Removing ${source}...`, async () => {
      if (parsed.type === "npm") await this.#uninstallNpm(parsed, scope);
      else if (parsed.type === "git") this.#removeGit(parsed, scope);
    });
  }

  /**
   * Updates the listed packages (one, when `source` is given): npm packages that are not pinned
   * to a version, when the registry has a newer one; every git package, reset to its ref or its
   * branch's head. Nothing in offline mode (PI_OFFLINE).
   */
  async update(source: string | undefined, lists: { user: readonly RawPackage[]; project: readonly RawPackage[] }): Promise<void> {
    const identity = source === undefined ? undefined : this.#key(source, this.#places.cwd);
    const chosen: { source: string; scope: PackageScope }[] = [];
    for (const scope of ["user", "project"] as const) {
      for (const entry of lists[scope]) {
        const s = entrySource(entry);
        if (s === undefined) continue;
        if (identity !== undefined && this.#key(s, this.baseDir(scope)) !== identity) continue;
        chosen.push({ source: s, scope });
      }
    }
    if (source !== undefined && chosen.length === 0) throw new Error(noMatchMessage(source, [...lists.user, ...lists.project]));
    if (isOfflineMode() || chosen.length === 0) return;
    const updated: string[] = [];
    // npm: one install per scope for the packages the registry has something newer for.
    for (const scope of ["user", "project"] as const) {
      const npm: { source: string; parsed: NpmSource; before: string | undefined; target: string | undefined }[] = [];
      for (const entry of chosen) {
        const parsed = parseSource(entry.source);
        if (entry.scope !== scope || parsed.type !== "npm" || isPinnedNpmVersion(parsed.version)) continue;
        const check = await this.#npmUpdateCheck(parsed, scope);
        if (check.update) npm.push({ source: entry.source, parsed, before: check.installed, target: check.target });
      }
      if (npm.length === 0) continue;
      const only = npm.length === 1 ? npm[0] : undefined;
      await this.#step(only ? `Updating ${only.source}...` : `Updating ${scope} npm packages...`, () =>
        this.#installNpm(
          npm.map((p) => (p.parsed.version ? p.parsed.spec : `${p.parsed.name}@latest`)),
          scope,
        ),
      );
      for (const p of npm) {
        const after = installedVersion(this.#managedNpmPath(p.parsed, scope));
        if (after !== p.before) updated.push(`${p.source}${scope === "project" ? " (project)" : ""} ${p.before ?? "(none)"} -> ${after ?? "(none)"}`);
        else if (p.before !== undefined && p.target !== undefined)
          this.#events.warning(`${p.source} is still ${after} (registry reports ${p.target}); npm registry metadata may be stale, try again in a few minutes`);
      }
    }
    for (const entry of chosen) {
      const parsed = parseSource(entry.source);
      if (parsed.type !== "git") continue;
      await this.#step(`Updating ${entry.source}...`, async () => {
        const dir = this.gitPath(parsed, entry.scope);
        const before = await this.#head(dir);
        await this.#updateGit(parsed, entry.scope);
        const after = await this.#head(dir);
        if (before !== after)
          updated.push(
            `${entry.source}${entry.scope === "project" ? " (project)" : ""} ${before?.slice(0, 7) ?? "(none)"} -> ${after?.slice(0, 7) ?? "(none)"}`,
          );
      });
    }
    for (const message of updated) this.#events.updated(message);
  }

  /**
   * What pi's resolution does before its `config` UI opens: each listed npm or git package that is
   * not installed is installed (the project's entries winning over the user's for one package);
   * nothing in offline mode. Failures are returned, not thrown.
   */
  async installMissing(
    lists: { user: readonly RawPackage[]; project: readonly RawPackage[] },
    npmGlobalRoot?: string,
  ): Promise<{ source: string; scope: PackageScope; message: string }[]> {
    if (isOfflineMode()) return [];
    const scoped: ScopedPackage[] = (["project", "user"] as const).flatMap((scope) =>
      lists[scope].flatMap((entry) => {
        const source = entrySource(entry);
        return source === undefined ? [] : [{ entry: { source }, scope }];
      }),
    );
    const failures: { source: string; scope: PackageScope; message: string }[] = [];
    const places = { cwd: this.#places.cwd, agentDir: this.#places.agentDir, home: this.#places.home, npmGlobalRoot };
    for (const { entry, scope } of dedupePackages(scoped, (p) => this.#key(p.entry.source, this.baseDir(p.scope)))) {
      const parsed = parseSource(entry.source);
      if (parsed.type === "local" || installedPath(parsed, scope, places) !== undefined) continue;
      try {
        if (parsed.type === "npm") await this.#installNpm([parsed.spec], scope);
        else await this.#installGit(parsed, scope);
      } catch (error) {
        failures.push({ source: entry.source, scope, message: error instanceof Error ? error.message : String(error) });
      }
    }
    return failures;
  }

  async #step(message: string, work: () => Promise<void>): Promise<void> {
    this.#events.start(message);
    await work();
  }

  // npm

  #npm(): { command: string; args: string[] } {
    const [command, ...args] = this.#places.npmCommand ?? [];
    if (this.#places.npmCommand && this.#places.npmCommand.length > 0 && !command)
      throw new Error("Invalid npmCommand: first array entry must be a non-empty command");
    return command ? { command, args } : { command: "npm", args: [] };
  }

  /** npm, pnpm or bun: the command itself, what follows a `--`, or the one package manager its arguments name. */
  #managerName(): string {
    const { command, args } = this.#npm();
    const name = (c: string): string => basename(c).replace(/\.(cmd|exe)$/i, "");
    const known = new Set(["npm", "pnpm", "bun"]);
    const separator = args.lastIndexOf("--");
    if (separator >= 0) {
      const wrapped = args[separator + 1];
      return wrapped ? name(wrapped) : name(command);
    }
    if (known.has(name(command))) return name(command);
    const wrapped = [...new Set(args.map(name).filter((c) => known.has(c)))];
    if (wrapped.length > 1) throw new Error(`Ambiguous npmCommand package managers: ${wrapped.join(", ")}`);
    return wrapped[0] ?? name(command);
  }

  #runNpm(args: string[], cwd?: string): Promise<void> {
    const { command, args: prefix } = this.#npm();
    return runTool(command, [...prefix, ...args], { cwd });
  }

  npmRoot(scope: PackageScope): string {
    this.#assertTrusted(scope);
    return scope === "project" ? join(this.#places.cwd, PROJECT_DIR_NAME, "npm") : join(this.#places.agentDir, "npm");
  }

  #managedNpmPath(parsed: NpmSource, scope: PackageScope): string {
    return join(this.npmRoot(scope), "node_modules", parsed.name);
  }

  async #installNpm(specs: string[], scope: PackageScope): Promise<void> {
    const root = this.npmRoot(scope);
    ensureNpmProject(root);
    // npm writes broken nested lock paths when --prefix goes through a symlink.
    const prefix = realpathSync(root);
    // Peers off: pi's own packages reach extensions through pi, never from the package's folder.
    const manager = this.#managerName();
    if (manager === "bun") await this.#runNpm(["install", ...specs, "--cwd", prefix, "--omit=peer"]);
    else if (manager === "pnpm")
      await this.#runNpm([
        "install",
        ...specs,
        "--prefix",
        prefix,
        "--config.auto-install-peers=false",
        "--config.strict-peer-dependencies=false",
        "--config.strict-dep-builds=false",
      ]);
    else await this.#runNpm(["install", ...specs, "--prefix", prefix, "--legacy-peer-deps", "--no-audit", "--no-fund"]);
  }

  async #uninstallNpm(parsed: NpmSource, scope: PackageScope): Promise<void> {
    const root = this.npmRoot(scope);
    if (!existsSync(root)) return;
    const prefix = realpathSync(root);
    const manager = this.#managerName();
    if (manager === "bun") await this.#runNpm(["uninstall", parsed.name, "--cwd", prefix]);
    else await this.#runNpm(["uninstall", parsed.name, "--prefix", prefix, ...(manager === "pnpm" ? [] : ["--legacy-peer-deps", "--no-audit", "--no-fund"])]);
  }

  /** Whether to update: not installed, a newer version in the registry, or the registry could not say. */
  async #npmUpdateCheck(parsed: NpmSource, scope: PackageScope): Promise<{ update: boolean; installed?: string; target?: string }> {
    const installed = installedVersion(this.#managedNpmPath(parsed, scope));
    if (installed === undefined) return { update: true };
    try {
      const { command, args } = this.#npm();
      const raw = await captureTool(command, [...args, "view", parsed.version ? parsed.spec : parsed.name, "version", "--json"], {
        cwd: this.#places.cwd,
        timeoutMs: NETWORK_TIMEOUT_MS,
      });
      const answer: unknown = JSON.parse(raw);
      const versions = (Array.isArray(answer) ? answer : [answer]).filter((v): v is string => typeof v === "string" && v.length > 0);
      const target = versions.sort(compareVersions).at(-1);
      if (target === undefined) throw new Error("Unexpected response from npm view");
      return { update: compareVersions(target, installed) > 0, installed, target };
    } catch {
      // As pi: when the registry cannot be asked, install again.
      return { update: true, installed };
    }
  }

  // git

  gitRoot(scope: PackageScope): string {
    this.#assertTrusted(scope);
    return scope === "project" ? join(this.#places.cwd, PROJECT_DIR_NAME, "git") : join(this.#places.agentDir, "git");
  }

  gitPath(parsed: GitSource, scope: PackageScope): string {
    const root = resolve(this.gitRoot(scope));
    const path = resolve(root, parsed.host, parsed.path);
    if (!path.startsWith(`${root}${sep}`)) throw new Error(`Refusing to use path outside package install root: ${path}`);
    return path;
  }

  #git(args: string[], cwd?: string): Promise<void> {
    return runTool("git", args, { cwd });
  }

  #gitAnswer(args: string[], cwd: string): Promise<string> {
    return captureTool("git", args, { cwd, timeoutMs: NETWORK_TIMEOUT_MS });
  }

  async #head(dir: string): Promise<string | undefined> {
    if (!existsSync(dir)) return undefined;
    try {
      return (await this.#gitAnswer(["rev-parse", "HEAD"], dir)) || undefined;
    } catch {
      return undefined;
    }
  }

  /** pi's marker beside a clone whose reset has not been followed by a clean and an install yet. */
  #marker(dir: string): string {
    return join(dirname(dir), `.${basename(dir)}.pi-update-incomplete`);
  }

  #dependencyInstallArgs(): string[] {
    switch (this.#managerName()) {
      case "bun":
        return ["install", "--omit=dev", "--omit=peer"];
      case "pnpm":
        return ["install", "--prod", "--config.auto-install-peers=false", "--config.strict-peer-dependencies=false", "--config.strict-dep-builds=false"];
      case "npm":
        return ["install", "--omit=dev", "--legacy-peer-deps", "--no-audit", "--no-fund"];
      default:
        return ["install"];
    }
  }

  async #installGit(parsed: GitSource, scope: PackageScope): Promise<void> {
    const dir = this.gitPath(parsed, scope);
    if (existsSync(dir)) {
      await this.#updateGit(parsed, scope);
      return;
    }
    const root = this.gitRoot(scope);
    ensureGitIgnore(root);
    mkdirSync(dirname(dir), { recursive: true });
    rmSync(this.#marker(dir), { force: true });
    try {
      await this.#git(["clone", parsed.repo, dir]);
      if (parsed.ref) await this.#git(["checkout", parsed.ref], dir);
      if (existsSync(join(dir, "package.json"))) await this.#runNpm(this.#dependencyInstallArgs(), dir);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      pruneEmptyParents(dir, root);
      throw error;
    }
  }

  async #updateGit(parsed: GitSource, scope: PackageScope): Promise<void> {
    const dir = this.gitPath(parsed, scope);
    if (!existsSync(dir)) {
      await this.#installGit(parsed, scope);
      return;
    }
    if (parsed.ref) {
      await this.#resetTo(dir, ["fetch", "origin", parsed.ref], "FETCH_HEAD");
      return;
    }
    const target = await this.#upstream(dir);
    await this.#resetTo(dir, target.fetch, target.ref);
  }

  /** What an unpinned clone follows: its upstream branch on origin, else origin's HEAD branch. */
  async #upstream(dir: string): Promise<{ ref: string; fetch: string[] }> {
    const fetchBranch = (branch: string): string[] => ["fetch", "--prune", "--no-tags", "origin", `+refs/heads/${branch}:refs/remotes/origin/${branch}`];
    try {
      const upstream = await this.#gitAnswer(["rev-parse", "--abbrev-ref", "@{upstream}"], dir);
      if (!upstream.startsWith("origin/") || upstream.length === "origin/".length) throw new Error(`Unsupported upstream remote: ${upstream}`);
      return { ref: "@{upstream}", fetch: fetchBranch(upstream.slice("origin/".length)) };
    } catch {
      await this.#gitAnswer(["remote", "set-head", "origin", "-a"], dir).catch(() => "");
      const head = await this.#gitAnswer(["symbolic-ref", "refs/remotes/origin/HEAD"], dir).catch(() => "");
      const branch = head.replace(/^refs\/remotes\/origin\//, "");
      return { ref: "origin/HEAD", fetch: branch ? fetchBranch(branch) : ["fetch", "--prune", "--no-tags", "origin", "+HEAD:refs/remotes/origin/HEAD"] };
    }
  }

  /** Fetches, then resets the clone to the ref when it moved; cleans and installs dependencies after a reset (or an unfinished one). */
  async #resetTo(dir: string, fetch: string[], ref: string): Promise<void> {
    await this.#git(fetch, dir);
    const local = await this.#gitAnswer(["rev-parse", "HEAD"], dir);
    const target = await this.#gitAnswer(["rev-parse", `${ref}^{commit}`], dir);
    const marker = this.#marker(dir);
    if (local === target) {
      if (existsSync(marker)) await this.#cleanAndInstall(dir, marker);
      else if (missingDependencies(dir)) await this.#runNpm(this.#dependencyInstallArgs(), dir);
      return;
    }
    writeFileSync(marker, "", "utf8");
    await this.#git(["reset", "--hard", `${ref}^{commit}`], dir);
    await this.#cleanAndInstall(dir, marker);
  }

  async #cleanAndInstall(dir: string, marker: string): Promise<void> {
    let cleaned = true;
    try {
      await this.#git(["clean", "-fdx"], dir);
    } catch (error) {
      cleaned = false;
      this.#events.warning(
        `Could not remove all untracked files in ${dir} (${error instanceof Error ? error.message : String(error)}). Files may be in use by another pi session; close it and run the update again.`,
      );
    }
    if (existsSync(join(dir, "package.json"))) await this.#runNpm(this.#dependencyInstallArgs(), dir);
    if (cleaned) rmSync(marker, { force: true });
  }

  #removeGit(parsed: GitSource, scope: PackageScope): void {
    const dir = this.gitPath(parsed, scope);
    rmSync(dir, { recursive: true, force: true });
    rmSync(this.#marker(dir), { force: true });
    pruneEmptyParents(dir, this.gitRoot(scope));
  }
}

/** pi's npm install folder: a private package.json and a `.gitignore`, made once. */
function ensureNpmProject(root: string): void {
  mkdirSync(root, { recursive: true });
  ensureGitIgnore(root);
  const manifest = join(root, "package.json");
  if (!existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ name: "pi-extensions", private: true }, null, 2), "utf8");
}

function ensureGitIgnore(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, ".gitignore");
  if (!existsSync(file)) writeFileSync(file, GITIGNORE, "utf8");
}

/** Removes the folders a removed clone leaves empty, up to (not including) the install root. */
function pruneEmptyParents(dir: string, root: string): void {
  const top = resolve(root);
  for (let current = dirname(dir); current.startsWith(top) && current !== top; current = dirname(current)) {
    if (!existsSync(current)) continue;
    if (readdirSync(current).length > 0) return;
    try {
      rmSync(current, { recursive: true, force: true });
    } catch {
      return;
    }
  }
}

/** A dependency the clone's package.json lists that its node_modules lacks. */
function missingDependencies(dir: string): boolean {
  try {
    const manifest: unknown = JSON.parse(readFileText(join(dir, "package.json")));
    const deps = manifest !== null && typeof manifest === "object" && "dependencies" in manifest ? manifest.dependencies : undefined;
    if (deps === null || typeof deps !== "object" || Array.isArray(deps)) return false;
    const modules = resolve(dir, "node_modules");
    return Object.keys(deps).some((name) => {
      const path = resolve(modules, name);
      return path.startsWith(`${modules}${sep}`) && !existsSync(path);
    });
  } catch {
    return false;
  }
}

function readFileText(file: string): string {
  return readFileSync(file, "utf8").replace(/^\uFEFF/, "");
}

/** Orders versions as npm does (semver; a string npm would not publish sorts first). */
export function compareVersions(a: string, b: string): number {
  const x = semver.valid(semver.clean(a) ?? a);
  const y = semver.valid(semver.clean(b) ?? b);
  if (x === null || y === null) return (x === null ? 0 : 1) - (y === null ? 0 : 1);
  return semver.compare(x, y);
}

/** pi's message for an update that names no listed package, with the entry it probably meant. */
export function noMatchMessage(source: string, entries: readonly RawPackage[]): string {
  const wanted = source.trim();
  for (const entry of entries) {
    const s = entrySource(entry);
    if (s === undefined) continue;
    const parsed = parseSource(s);
    if (parsed.type === "npm" && (wanted === parsed.name || wanted === parsed.spec)) return `No matching package found for ${source}. Did you mean ${s}?`;
    if (parsed.type === "git") {
      const short = `${parsed.host}/${parsed.path}`;
      if (wanted === short || (parsed.ref && wanted === `${short}@${parsed.ref}`)) return `No matching package found for ${source}. Did you mean ${s}?`;
    }
  }
  return `No matching package found for ${source}`;
}
