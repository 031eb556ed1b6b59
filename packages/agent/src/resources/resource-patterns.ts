/**
 * pi's pattern entries in resource lists (settings.json `extensions`/`skills`/`prompts`, a pi
 * package's `pi` manifest, a package filter in `packages`):
 *   - a plain entry names a path (the caller resolves it);
 *   - a glob (`*`, `?`) keeps only the files it matches;
 *   - `!pattern` drops the files it matches;
 *   - `+path` adds back an exact path, whatever `!` said;
 *   - `-path` drops an exact path, whatever else said (it always wins).
 * A pattern matches a file by its path relative to the base folder, its name, or its absolute
 * path; a SKILL.md also by its folder (relative, name or absolute). Exact paths compare the
 * relative or absolute path (a leading `./` ignored), for a SKILL.md its folder's too.
 * Globs are minimatch's, as in pi; minimatch loads only when a pattern has to be matched.
 */
import { createRequire } from "node:module";
import { basename, dirname, relative, sep } from "node:path";

type Minimatch = typeof import("minimatch").minimatch;
let minimatch: Minimatch | undefined;

function glob(path: string, pattern: string): boolean {
  minimatch ??= (createRequire(import.meta.url)("minimatch") as typeof import("minimatch")).minimatch;
  return minimatch(path, pattern);
}

const toPosix = (path: string): string => path.split(sep).join("/");

/** Whether a posix path matches a glob (minimatch, as pi's `glob` and pattern entries use it). */
export function matchesGlob(path: string, pattern: string): boolean {
  return glob(path, toPosix(pattern));
}

/** `!`, `+` or `-` first: an override of what is otherwise loaded. */
export function isOverridePattern(entry: string): boolean {
  return entry.startsWith("!") || entry.startsWith("+") || entry.startsWith("-");
}

export function hasGlob(entry: string): boolean {
  return entry.includes("*") || entry.includes("?");
}

/** An entry that filters rather than names a path. */
export function isPattern(entry: string): boolean {
  return isOverridePattern(entry) || hasGlob(entry);
}

/** Plain path entries and pattern entries, each in their order. */
export function splitPatterns(entries: readonly string[]): { plain: string[]; patterns: string[] } {
  const plain: string[] = [];
  const patterns: string[] = [];
  for (const entry of entries) (isPattern(entry) ? patterns : plain).push(entry);
  return { plain, patterns };
}

/** The forms of a file a pattern may match: relative, name, absolute (and its skill folder's). */
function forms(file: string, baseDir: string, withName: boolean): string[] {
  const out = [toPosix(relative(baseDir, file)), ...(withName ? [basename(file)] : []), toPosix(file)];
  if (basename(file) === "SKILL.md") {
    const folder = dirname(file);
    out.push(toPosix(relative(baseDir, folder)), ...(withName ? [basename(folder)] : []), toPosix(folder));
  }
  return out;
}

export function matchesAnyPattern(file: string, patterns: readonly string[], baseDir: string): boolean {
  if (patterns.length === 0) return false;
  const candidates = forms(file, baseDir, true);
  return patterns.some((pattern) => {
    const p = toPosix(pattern);
    return candidates.some((c) => glob(c, p));
  });
}

export function matchesAnyExactPath(file: string, paths: readonly string[], baseDir: string): boolean {
  if (paths.length === 0) return false;
  const candidates = forms(file, baseDir, false);
  return paths.some((path) => {
    const p = toPosix(path.startsWith("./") || path.startsWith(".\\") ? path.slice(2) : path);
    return candidates.includes(p);
  });
}

interface Sorted {
  includes: string[];
  excludes: string[];
  forceIncludes: string[];
  forceExcludes: string[];
}

function sort(patterns: readonly string[]): Sorted {
  const sorted: Sorted = { includes: [], excludes: [], forceIncludes: [], forceExcludes: [] };
  for (const p of patterns) {
    if (p.startsWith("+")) sorted.forceIncludes.push(p.slice(1));
    else if (p.startsWith("-")) sorted.forceExcludes.push(p.slice(1));
    else if (p.startsWith("!")) sorted.excludes.push(p.slice(1));
    else sorted.includes.push(p);
  }
  return sorted;
}

/**
 * The files of `all` that `patterns` leave enabled: the globs' matches (all files when there is
 * no glob), minus `!` matches, plus `+` paths, minus `-` paths. Keeps `all`'s order, except that
 * files added back by `+` come after the others, as in pi.
 */
export function applyPatterns(all: readonly string[], patterns: readonly string[], baseDir: string): Set<string> {
  const { includes, excludes, forceIncludes, forceExcludes } = sort(patterns);
  let result = includes.length === 0 ? [...all] : all.filter((f) => matchesAnyPattern(f, includes, baseDir));
  if (excludes.length > 0) result = result.filter((f) => !matchesAnyPattern(f, excludes, baseDir));
  if (forceIncludes.length > 0) {
    const kept = new Set(result);
    for (const f of all) if (!kept.has(f) && matchesAnyExactPath(f, forceIncludes, baseDir)) result.push(f);
  }
  if (forceExcludes.length > 0) result = result.filter((f) => !matchesAnyExactPath(f, forceExcludes, baseDir));
  return new Set(result);
}

/**
 * Whether a file found by discovery (not listed) stays enabled under a settings list: only its
 * `!`, `+` and `-` entries apply (plain paths and globs name other files).
 */
export function enabledByOverrides(file: string, entries: readonly string[], baseDir: string): boolean {
  const { excludes, forceIncludes, forceExcludes } = sort(entries.filter(isOverridePattern));
  let enabled = !matchesAnyPattern(file, excludes, baseDir);
  if (matchesAnyExactPath(file, forceIncludes, baseDir)) enabled = true;
  if (matchesAnyExactPath(file, forceExcludes, baseDir)) enabled = false;
  return enabled;
}
