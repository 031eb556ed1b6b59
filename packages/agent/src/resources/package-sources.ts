/**
 * pi packages as settings.json `packages` names them (`npm:name@version`, git URLs, local paths),
 * and where `pi install` (and `parley install`, packages/) puts them. Reading them runs no npm or git.
 *   npm, user scope:    <agent dir>/npm/node_modules/<name> (the newest pi), else npm's global
 *                       node_modules (older pi installed with `npm install -g`);
 *   npm, project scope: <cwd>/.pi/npm/node_modules/<name>;
 *   git:                <agent dir>/git/<host>/<path>, or <cwd>/.pi/git/<host>/<path>;
 *   local:              the path, relative to the settings file's folder.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { expandHome } from "./paths.js";

export type PackageScope = "user" | "project";

/** One `packages` entry: a source, or an object with a source and per-type filters. */
export interface PackageEntry {
  source: string;
  /** Present for the object form: a missing key loads all of that type, `[]` none. */
  filter?: PackageFilter | undefined;
}

export interface PackageFilter {
  extensions?: string[] | undefined;
  skills?: string[] | undefined;
  prompts?: string[] | undefined;
  /** false: the entry only adjusts what the same package's user entry loads (newest pi). */
  autoload?: boolean | undefined;
}

export type ParsedSource =
  | { type: "npm"; spec: string; name: string; version: string | undefined }
  | { type: "git"; host: string; path: string; ref: string | undefined /** What `git clone` is given. */; repo: string }
  | { type: "local"; path: string };

/** An exact version (`1.2.3`), which pi never updates; a range or a tag it does. */
export function isPinnedNpmVersion(version: string | undefined): boolean {
  return version !== undefined && /^[v=]?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.test(version.trim());
}

export function parseNpmSpec(spec: string): { name: string; version: string | undefined } {
  const match = /^(@?[^@]+(?:\/[^@]+)?)(?:@(.+))?$/.exec(spec);
  return match ? { name: match[1] ?? spec, version: match[2] } : { name: spec, version: undefined };
}

const isNonLocal = (s: string): boolean => /^(npm:|git:|github:|http:|https:|ssh:)/.test(s);

/** Splits `repo@ref` (an scp-like `git@host:path@ref`, a URL's path, or `host/path@ref`). */
function splitRef(url: string): { repo: string; ref: string | undefined } {
  const cut = (repoPath: string, rebuild: (p: string) => string): { repo: string; ref: string | undefined } => {
    const at = repoPath.indexOf("@");
    if (at <= 0 || at === repoPath.length - 1) return { repo: url, ref: undefined };
    return { repo: rebuild(repoPath.slice(0, at)), ref: repoPath.slice(at + 1) };
  };
  const scp = /^git@([^:]+):(.+)$/.exec(url);
  if (scp) return cut(scp[2] ?? "", (p) => `git@${scp[1] ?? ""}:${p}`);
  if (url.includes("://")) {
    try {
      const parsed = new URL(url);
      return cut(parsed.pathname.replace(/^\/+/, ""), (p) => {
        parsed.pathname = `/${p}`;
        return parsed.toString().replace(/\/$/, "");
      });
    } catch {
      return { repo: url, ref: undefined };
    }
  }
  const slash = url.indexOf("/");
  if (slash < 0) return { repo: url, ref: undefined };
  return cut(url.slice(slash + 1), (p) => `${url.slice(0, slash)}/${p}`);
}

/** pi's git sources: `git:` with any shorthand, or a protocol URL; host and path name the clone's folder. */
function parseGit(source: string): ParsedSource | undefined {
  const trimmed = source.trim();
  const prefixed = trimmed.startsWith("git:");
  const url = prefixed ? trimmed.slice(4).trim() : trimmed;
  if (!prefixed && !/^(https?|ssh|git):\/\//i.test(url)) return undefined;
  const { repo, ref } = splitRef(url);
  let host: string;
  let path: string;
  let cloneUrl = repo;
  const scp = /^git@([^:]+):(.+)$/.exec(repo);
  if (scp) {
    host = scp[1] ?? "";
    path = scp[2] ?? "";
  } else if (/^(https?|ssh|git):\/\//i.test(repo)) {
    try {
      const parsed = new URL(repo);
      host = parsed.hostname;
      path = parsed.pathname;
    } catch {
      return undefined;
    }
  } else {
    const slash = repo.indexOf("/");
    if (slash < 0) return undefined;
    host = repo.slice(0, slash);
    path = repo.slice(slash + 1);
    if (!host.includes(".") && host !== "localhost") return undefined;
    // A shorthand (`git:host/user/repo`) is cloned over https, as pi clones it.
    cloneUrl = `https://${repo}`;
  }
  path = path.replace(/^\/+/, "").replace(/\.git$/, "");
  if (!host || path.split("/").length < 2) return undefined;
  // pi refuses names that would leave the install folder.
  if ([host, ...path.split("/")].some((part) => part === ".." || part.includes("\\") || part.includes("\0"))) return undefined;
  return { type: "git", host, path, ref, repo: cloneUrl };
}

export function parseSource(source: string): ParsedSource {
  if (source.startsWith("npm:")) {
    const spec = source.slice(4).trim();
    return { type: "npm", spec, ...parseNpmSpec(spec) };
  }
  if (!isNonLocal(source.trim())) return { type: "local", path: source };
  return parseGit(source) ?? { type: "local", path: source };
}

/** The same package whatever its version or ref: npm by name, git by host and path, local by folder. */
export function packageIdentity(source: string, baseDir: string, home: string): string {
  const parsed = parseSource(source);
  if (parsed.type === "npm") return `npm:${parsed.name}`;
  if (parsed.type === "git") return `git:${parsed.host}/${parsed.path}`;
  return `local:${resolve(baseDir, expandHome(parsed.path.trim(), home))}`;
}

export interface ScopedPackage {
  entry: PackageEntry;
  scope: PackageScope;
}

/**
 * The project's entries first, then the user's; a package in both is the project's, except that a
 * project entry with `autoload: false` adjusts the user's, so both stay (pi's rule).
 */
export function dedupePackages(packages: readonly ScopedPackage[], identity: (p: ScopedPackage) => string): ScopedPackage[] {
  const result: ScopedPackage[] = [];
  const seen = new Map<string, number>();
  for (const p of packages) {
    const id = identity(p);
    const index = seen.get(id);
    if (index === undefined) {
      seen.set(id, result.length);
      result.push(p);
      continue;
    }
    const existing = result[index];
    if (existing?.scope === "project" && p.scope === "user") {
      if (existing.entry.filter?.autoload === false) result.push(p);
    } else if (p.scope === "project") {
      result[index] = p;
    }
  }
  return result;
}

export interface InstallPlaces {
  cwd: string;
  agentDir: string;
  home: string;
  env?: NodeJS.ProcessEnv | undefined;
  /** npm's global node_modules as settings.json `npmCommand`'s package manager answered it (npm-global-root.ts). */
  npmGlobalRoot?: string | undefined;
}

/**
 * npm's global node_modules, worked out as npm does without running it: the `prefix` of
 * `npm_config_prefix` / `NPM_CONFIG_PREFIX` or `~/.npmrc`, else the folder above Node's `bin/`.
 */
export function npmGlobalRoot(places: InstallPlaces): string {
  const env = places.env ?? process.env;
  let prefix = env["npm_config_prefix"] ?? env["NPM_CONFIG_PREFIX"];
  if (!prefix) {
    try {
      const rc = readFileSync(join(places.home, ".npmrc"), "utf8");
      prefix = /^\s*prefix\s*=\s*(.+?)\s*$/m.exec(rc)?.[1]?.replace(/^["']|["']$/g, "");
    } catch {
      // No ~/.npmrc.
    }
  }
  const base = prefix ? resolve(expandHome(prefix, places.home)) : dirname(dirname(process.execPath));
  return process.platform === "win32" ? join(base, "node_modules") : join(base, "lib", "node_modules");
}

/** Where pi would have installed an npm or git package; undefined when it is not there. */
export function installedPath(parsed: ParsedSource, scope: PackageScope, places: InstallPlaces): string | undefined {
  if (parsed.type === "npm") {
    if (scope === "project") return existing(join(places.cwd, ".pi", "npm", "node_modules", parsed.name));
    return existing(join(places.agentDir, "npm", "node_modules", parsed.name)) ?? existing(join(places.npmGlobalRoot ?? npmGlobalRoot(places), parsed.name));
  }
  if (parsed.type === "git") {
    const root = scope === "project" ? join(places.cwd, ".pi", "git") : join(places.agentDir, "git");
    const path = resolve(root, parsed.host, parsed.path);
    // A source must not name a folder outside the install root.
    return path.startsWith(`${resolve(root)}/`) ? existing(path) : undefined;
  }
  return undefined;
}

/** Whether a user npm package would be looked for in the package manager's global folder (it is not in the agent directory's). */
export function needsGlobalRoot(entries: readonly PackageEntry[], agentDir: string): boolean {
  return entries.some((entry) => {
    const parsed = parseSource(entry.source);
    return parsed.type === "npm" && !existsSync(join(agentDir, "npm", "node_modules", parsed.name));
  });
}

const existing = (path: string): string | undefined => (existsSync(path) ? path : undefined);

/** The installed package's version, from its package.json. */
export function installedVersion(dir: string): string | undefined {
  try {
    const pkg: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const version = pkg !== null && typeof pkg === "object" && "version" in pkg ? pkg.version : undefined;
    return typeof version === "string" ? version : undefined;
  } catch {
    return undefined;
  }
}

/** The `parley install` command that installs a package in this scope (as `pi install` would). */
export function installCommand(source: string, scope: PackageScope): string {
  return `parley install ${scope === "project" ? "-l " : ""}${source}`;
}
