/**
 * Which extensions, skills and prompt templates a run uses, by the rules of pi's package manager:
 *   1. `packages` of the project's settings, then the user's (deduplicated, the project wins);
 *   2. the settings' `extensions`/`skills`/`prompts` lists, the project's (paths relative to
 *      `.pi/`) then the user's (relative to the agent directory): plain entries name files or
 *      folders, pattern entries filter them (resource-patterns.ts);
 *   3. discovery in the project's `.pi/` (and `.agents/skills` up to the git root), then in the
 *      agent directory (and `~/.agents/skills`); the settings lists' `!`/`+`/`-` entries apply;
 *   4. sorted by pi's precedence: project list, project discovery, user list, user discovery,
 *      packages. A file found twice counts once, first place wins.
 * Disabled entries stay in the answer (enabled: false) so that a file keeps the place it was
 * disabled in. An untrusted project gives nothing (its settings are not read either).
 * Nothing is installed here: a package that is not installed is reported (`parley install …`, packages/).
 */
import { realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { BUILTIN_PREFIX, isParleyBuiltin, MISSING_BUILTINS } from "../extensions/builtin-names.js";
import type { SourceInfo } from "../extensions/types.js";
import { isDirectory, isFile, listFolder } from "./fs-entries.js";
import {
  dedupePackages,
  installCommand,
  installedPath,
  installedVersion,
  packageIdentity,
  parseSource,
  type InstallPlaces,
  type PackageEntry,
  type PackageFilter,
  type PackageScope,
  type ScopedPackage,
} from "./package-sources.js";
import { expandHome } from "./paths.js";
import {
  collectExtensionFiles,
  collectFromPaths,
  collectResourceFiles,
  extensionEntries,
  readPiManifest,
  RESOURCE_TYPES,
  type ResourceType,
} from "./resource-files.js";
import {
  applyPatterns,
  enabledByOverrides,
  hasGlob,
  isOverridePattern,
  matchesAnyExactPath,
  matchesAnyPattern,
  matchesGlob,
  splitPatterns,
} from "./resource-patterns.js";
import { findTemplateFiles } from "./prompt-templates.js";
import { findSkillFiles } from "./skills.js";

/** What one settings file says about resources. */
export interface ResourceLists {
  extensions?: readonly string[] | undefined;
  skills?: readonly string[] | undefined;
  prompts?: readonly string[] | undefined;
  packages?: readonly PackageEntry[] | undefined;
}

export interface ResolveOptions {
  cwd: string;
  agentDir: string;
  home: string;
  user: ResourceLists;
  /** The project's settings; undefined when the project is not trusted (its `.pi/` is not used at all). */
  project: ResourceLists | undefined;
  /** parley's earlier extension folders (`~/.parley/extensions`, `./.parley/extensions`), discovered too. */
  legacyExtensionDirs?: boolean | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** The global node_modules settings.json `npmCommand` gave (else worked out as npm's). */
  npmGlobalRoot?: string | undefined;
}

export interface ResolvedResource {
  path: string;
  enabled: boolean;
  sourceInfo: SourceInfo;
}

export type ResolvedResources = Record<ResourceType, ResolvedResource[]> & {
  /** Said on stderr: packages pi has not installed, versions that differ. */
  warnings: string[];
};

type Accumulator = Record<ResourceType, Map<string, { sourceInfo: SourceInfo; enabled: boolean }>>;

const newAccumulator = (): Accumulator => ({ extensions: new Map(), skills: new Map(), prompts: new Map() });

/** The first place a file is found keeps it. */
function add(acc: Accumulator, type: ResourceType, path: string, sourceInfo: Omit<SourceInfo, "path">, enabled: boolean): void {
  if (!acc[type].has(path)) acc[type].set(path, { sourceInfo: { path, ...sourceInfo }, enabled });
}

/** pi's precedence, lower first: project list 0, project discovery 1, user list 2, user discovery 3, package 4. */
function rank(info: SourceInfo): number {
  if (info.origin === "package") return 4;
  return (info.scope === "project" ? 0 : 2) + (info.source === "local" ? 0 : 1);
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function finish(acc: Accumulator, warnings: string[]): ResolvedResources {
  const list = (type: ResourceType): ResolvedResource[] => {
    const all = [...acc[type]].map(([path, { sourceInfo, enabled }]) => ({ path, enabled, sourceInfo }));
    all.sort((a, b) => rank(a.sourceInfo) - rank(b.sourceInfo));
    const seen = new Set<string>();
    return all.filter((r) => {
      const key = canonical(r.path);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  };
  return { extensions: list("extensions"), skills: list("skills"), prompts: list("prompts"), warnings };
}

/** A settings path: `~` expanded, relative to the settings file's folder. */
const fromBase = (entry: string, baseDir: string, home: string): string => resolve(baseDir, expandHome(entry.trim(), home));

export function resolveResources(options: ResolveOptions): ResolvedResources {
  const acc = newAccumulator();
  const warnings: string[] = [];
  const places: InstallPlaces = { cwd: options.cwd, agentDir: options.agentDir, home: options.home, env: options.env, npmGlobalRoot: options.npmGlobalRoot };
  const projectBase = join(options.cwd, ".pi");
  const baseOf = (scope: PackageScope): string => (scope === "project" ? projectBase : options.agentDir);

  const scoped: ScopedPackage[] = [
    ...(options.project?.packages ?? []).map((entry) => ({ entry, scope: "project" as const })),
    ...(options.user.packages ?? []).map((entry) => ({ entry, scope: "user" as const })),
  ];
  const packages = dedupePackages(scoped, (p) => packageIdentity(p.entry.source, baseOf(p.scope), options.home));
  for (const p of packages) addPackage(acc, p, packages, places, baseOf, warnings);

  for (const type of RESOURCE_TYPES) {
    if (options.project) addListed(acc, type, options.project[type] ?? [], "project", projectBase, options.home);
    addListed(acc, type, options.user[type] ?? [], "user", options.agentDir, options.home);
  }
  addDiscovered(acc, options, projectBase);
  return finish(acc, warnings);
}

/** A settings list: its plain entries' files, each enabled or not by its pattern entries. */
function addListed(acc: Accumulator, type: ResourceType, entries: readonly string[], scope: PackageScope, baseDir: string, home: string): void {
  if (entries.length === 0) return;
  const { plain, patterns } = splitPatterns(entries);
  const files = collectFromPaths(
    plain.map((p) => fromBase(p, baseDir, home)),
    type,
  );
  const enabled = applyPatterns(files, patterns, baseDir);
  for (const file of files) add(acc, type, file, { source: "local", scope, origin: "top-level" }, enabled.has(file));
}

function addDiscovered(acc: Accumulator, options: ResolveOptions, projectBase: string): void {
  const user = options.user;
  const project = options.project;
  const found = (type: ResourceType, files: string[], scope: PackageScope, baseDir: string, overrides: readonly string[]): void => {
    for (const file of files) add(acc, type, file, { source: "auto", scope, origin: "top-level", baseDir }, enabledByOverrides(file, overrides, baseDir));
  };
  const userAgents = join(options.home, ".agents", "skills");
  if (project) {
    found("extensions", collectExtensionFiles(join(projectBase, "extensions")), "project", projectBase, project.extensions ?? []);
    // The same folder as the user's when the project is the home folder: counted once, as the user's.
    if (options.legacyExtensionDirs && resolve(options.cwd) !== resolve(options.home)) {
      const legacy = join(options.cwd, ".parley");
      found("extensions", collectExtensionFiles(join(legacy, "extensions"), true), "project", legacy, []);
    }
    const agentsDirs = ancestorAgentsSkillDirs(options.cwd).filter((d) => resolve(d) !== resolve(userAgents));
    found("skills", findSkillFiles(join(projectBase, "skills"), "pi"), "project", projectBase, project.skills ?? []);
    // Each `.agents` folder is its skills' base, as in pi 1.6 (sourceInfo.baseDir, override patterns).
    for (const dir of agentsDirs) found("skills", findSkillFiles(dir, "agents"), "project", dirname(dir), project.skills ?? []);
    found("prompts", findTemplateFiles(join(projectBase, "prompts")), "project", projectBase, project.prompts ?? []);
  }
  const agentDir = options.agentDir;
  found("extensions", collectExtensionFiles(join(agentDir, "extensions")), "user", agentDir, user.extensions ?? []);
  if (options.legacyExtensionDirs) {
    const legacy = join(options.home, ".parley");
    found("extensions", collectExtensionFiles(join(legacy, "extensions"), true), "user", legacy, []);
  }
  found("skills", findSkillFiles(join(agentDir, "skills"), "pi"), "user", agentDir, user.skills ?? []);
  found("skills", findSkillFiles(userAgents, "agents"), "user", dirname(userAgents), user.skills ?? []);
  found("prompts", findTemplateFiles(join(agentDir, "prompts")), "user", agentDir, user.prompts ?? []);
}

/** `.agents/skills` in `cwd` and each parent, up to the git repository's root (or the filesystem's). */
function ancestorAgentsSkillDirs(cwd: string): string[] {
  const dirs: string[] = [];
  let gitRoot: string | undefined;
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (isDirectory(join(dir, ".git")) || isFile(join(dir, ".git"))) {
      gitRoot = dir;
      break;
    }
    if (dirname(dir) === dir) break;
  }
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    dirs.push(join(dir, ".agents", "skills"));
    if (dir === gitRoot || dirname(dir) === dir) return dirs;
  }
}

/** One `packages` entry: found where pi installs it, its resources by its manifest or folders, narrowed by the entry's filter. */
function addPackage(
  acc: Accumulator,
  p: ScopedPackage,
  all: readonly ScopedPackage[],
  places: InstallPlaces,
  baseOf: (scope: PackageScope) => string,
  warnings: string[],
): void {
  const source = p.entry.source;
  // A project entry with autoload: false adjusts the user's entry of the same package: found where that one is.
  const base = p.scope === "project" && p.entry.filter?.autoload === false ? all.find((o) => o.scope === "user" && sameAs(o, p, baseOf, places)) : undefined;
  const where = base ?? p;
  const parsed = parseSource(where.entry.source);
  const meta = { source, scope: p.scope, origin: "package" as const };
  if (parsed.type === "local") {
    const path = fromBase(parsed.path, baseOf(where.scope), places.home);
    if (isFile(path)) add(acc, "extensions", path, { ...meta, baseDir: dirname(path) }, true);
    else if (isDirectory(path) && !collectPackage(acc, path, p.entry.filter, { ...meta, baseDir: path })) {
      for (const file of extensionEntries(path) ?? [path]) add(acc, "extensions", file, { ...meta, baseDir: path }, true);
    }
    return;
  }
  const dir = installedPath(parsed, where.scope, places);
  if (dir === undefined) {
    warnings.push(
      `package ${where.entry.source} (${where.scope} settings) is not installed (pi installs it when it starts, parley does not): run \`${installCommand(where.entry.source, where.scope)}\``,
    );
    return;
  }
  if (parsed.type === "npm" && parsed.version !== undefined && /^\d+\.\d+\.\d+/.test(parsed.version)) {
    const installed = installedVersion(dir);
    if (installed !== parsed.version) {
      warnings.push(
        `package ${where.entry.source}: version ${installed ?? "unknown"} is installed; parley uses it as it is (pi would install ${parsed.version}: run \`${installCommand(where.entry.source, where.scope)}\`)`,
      );
    }
  }
  collectPackage(acc, dir, p.entry.filter, { ...meta, baseDir: dir });
}

function sameAs(a: ScopedPackage, b: ScopedPackage, baseOf: (scope: PackageScope) => string, places: InstallPlaces): boolean {
  return packageIdentity(a.entry.source, baseOf(a.scope), places.home) === packageIdentity(b.entry.source, baseOf(b.scope), places.home);
}

/** A package's resources; false when it has neither a manifest nor any conventional folder (and no filter). */
function collectPackage(acc: Accumulator, root: string, filter: PackageFilter | undefined, meta: Omit<SourceInfo, "path">): boolean {
  if (filter) {
    for (const type of RESOURCE_TYPES) {
      const patterns = filter[type];
      if (filter.autoload === false) {
        // Only what the entry names changes: `+`/plain enable, `!`/`-` disable.
        if (patterns && patterns.length > 0) {
          for (const [file, on] of deltaFilter(manifestFiles(root, type), patterns, root)) add(acc, type, file, meta, on);
        }
      } else if (patterns !== undefined) {
        const files = manifestFiles(root, type);
        const enabled = patterns.length === 0 ? new Set<string>() : applyPatterns(files, patterns, root);
        for (const file of files) add(acc, type, file, meta, enabled.has(file));
      } else {
        for (const file of defaultFiles(root, type)) add(acc, type, file, meta, true);
      }
    }
    return true;
  }
  const manifest = readPiManifest(root);
  if (manifest) {
    for (const type of RESOURCE_TYPES) for (const file of manifestEntries(manifest[type], root, type)) add(acc, type, file, meta, true);
    return true;
  }
  let any = false;
  for (const type of RESOURCE_TYPES) {
    const dir = join(root, type);
    if (!isDirectory(dir)) continue;
    any = true;
    for (const file of collectResourceFiles(dir, type)) add(acc, type, file, meta, true);
  }
  return any;
}

/** All of a type: the manifest's list when it has one, else the conventional folder. */
function defaultFiles(root: string, type: ResourceType): string[] {
  const entries = readPiManifest(root)?.[type];
  if (entries) return manifestEntries(entries, root, type);
  const dir = join(root, type);
  return isDirectory(dir) ? collectResourceFiles(dir, type) : [];
}

/** What a filter chooses from: the manifest's files (after its own `!`/`+`/`-`), else the conventional folder's. */
function manifestFiles(root: string, type: ResourceType): string[] {
  const entries = readPiManifest(root)?.[type];
  if (entries && entries.length > 0) return manifestEntries(entries, root, type);
  const dir = join(root, type);
  return isDirectory(dir) ? collectResourceFiles(dir, type) : [];
}

/** A manifest list: its paths and globs (relative to the package) to files, kept by its own override entries. */
function manifestEntries(entries: readonly string[] | undefined, root: string, type: ResourceType): string[] {
  if (!entries) return [];
  const paths = entries.filter((e) => !isOverridePattern(e)).flatMap((e) => (hasGlob(e) ? globPaths(root, e) : [resolve(root, e)]));
  const files = collectFromPaths(paths, type);
  const enabled = applyPatterns(files, entries.filter(isOverridePattern), root);
  return files.filter((f) => enabled.has(f));
}

/** Files and folders under `root` whose relative path matches a glob (hidden ones not, as pi's `glob` with dot: false). */
function globPaths(root: string, pattern: string): string[] {
  const normal = pattern.replace(/^\.\//, "");
  // Walk only below the part of the pattern that has no glob characters.
  const fixed: string[] = [];
  for (const part of normal.split("/")) {
    if (/[*?[\]{}]/.test(part)) break;
    fixed.push(part);
  }
  const found: string[] = [];
  const walk = (dir: string, rel: string, depth: number): void => {
    if (depth > 20) return;
    for (const entry of listFolder(dir)) {
      if (entry.name.startsWith(".")) continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (matchesGlob(path, normal)) found.push(entry.path);
      if (entry.isDirectory) walk(entry.path, path, depth + 1);
    }
  };
  const start = fixed.length === normal.split("/").length ? fixed.slice(0, -1) : fixed;
  walk(join(root, ...start), start.join("/"), 0);
  return found;
}

/** `autoload: false`: each entry sets the files it matches (`+`/plain on, `!`/`-` off), in order. */
function deltaFilter(files: readonly string[], patterns: readonly string[], root: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const pattern of patterns) {
    const on = !pattern.startsWith("-") && !pattern.startsWith("!");
    const target = isOverridePattern(pattern) ? pattern.slice(1) : pattern;
    const exact = pattern.startsWith("+") || pattern.startsWith("-");
    for (const file of files) {
      if (exact ? matchesAnyExactPath(file, [target], root) : matchesAnyPattern(file, [target], root)) out.set(file, on);
    }
  }
  return out;
}

/**
 * `-e` sources, as pi resolves them: a file is an extension; a folder is a package (its manifest
 * or conventional folders, else the folder itself as an extension). npm and git sources would be
 * installed for the run by pi; parley reports them instead.
 */

export function resolveCliSources(
  sources: readonly string[],
  options: { cwd: string; agentDir: string; home: string },
): ResolvedResources & { unavailable: { source: string; error: string }[]; builtins: string[] } {
  const acc = newAccumulator();
  const unavailable: { source: string; error: string }[] = [];
  const builtins: string[] = [];
  const warnings: string[] = [];
  for (const source of sources) {
    // The newest pi's built-in extensions: parley's own load with the others (builtin-extensions.ts);
    // those it lacks are said and skipped; an unknown name stops parley as it stops pi.
    if (source.startsWith(BUILTIN_PREFIX)) {
      const name = source.slice(BUILTIN_PREFIX.length);
      if (isParleyBuiltin(name)) builtins.push(name);
      else if (MISSING_BUILTINS.includes(name)) warnings.push(`-e ${source}: parley has no ${name} support (a built-in extension of the newest pi); ignored`);
      else unavailable.push({ source, error: `Unknown built-in extension: ${source}` });
      continue;
    }
    const parsed = parseSource(source);
    if (parsed.type !== "local") {
      unavailable.push({
        source,
        error: `-e ${source}: parley does not install packages for one run (pi would); install it with \`parley install ${source}\`, or give a path`,
      });
      continue;
    }
    const path = fromBase(parsed.path, options.cwd, options.home);
    const meta = { source: "cli", scope: "temporary" as const, origin: "top-level" as const };
    if (isDirectory(path)) {
      if (!collectPackage(acc, path, undefined, { source, scope: "temporary", origin: "package", baseDir: path })) {
        for (const file of extensionEntries(path) ?? [path]) add(acc, "extensions", file, meta, true);
      }
    } else {
      // A missing file is the loader's to report (pi stops on it).
      add(acc, "extensions", path, meta, true);
    }
  }
  // pi names -e extensions and skills "cli" (their package metadata is replaced); prompts keep it.
  for (const type of ["extensions", "skills"] as const) {
    for (const [path, value] of acc[type]) acc[type].set(path, { ...value, sourceInfo: { path, source: "cli", scope: "temporary", origin: "top-level" } });
  }
  return { ...finish(acc, warnings), unavailable, builtins };
}
