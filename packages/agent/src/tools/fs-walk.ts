/**
 * Directory walking with cheap .gitignore support, used by grep and find in
 * place of ripgrep/fd (which parley cannot assume are installed).
 */
import { existsSync, readFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { globToRegExp } from "./glob.js";

interface IgnoreRule {
  regex: RegExp;
  negated: boolean;
  dirOnly: boolean;
  /** Matches against the path relative to `base` (true) or the bare name (false). */
  anchored: boolean;
}

interface IgnoreFile {
  base: string; // absolute directory holding the .gitignore
  rules: IgnoreRule[];
}

function parseGitignore(text: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (let line of text.split(/\r?\n/)) {
    if (line === "" || line.startsWith("#")) continue;
    line = line.replace(/(?<!\\)\s+$/, "");
    if (line === "") continue;
    let negated = false;
    if (line.startsWith("!")) {
      negated = true;
      line = line.slice(1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
      line = line.slice(1);
    }
    let dirOnly = false;
    if (line.endsWith("/")) {
      dirOnly = true;
      line = line.slice(0, -1);
    }
    // A slash anywhere but the end anchors the pattern to the .gitignore's directory.
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    if (line === "") continue;
    try {
      rules.push({ regex: globToRegExp(line), negated, dirOnly, anchored });
    } catch {
      // An unparsable line should not break the whole search.
    }
  }
  return rules;
}

function loadIgnoreFile(dir: string): IgnoreFile | undefined {
  const file = join(dir, ".gitignore");
  try {
    const rules = parseGitignore(readFileSync(file, "utf8"));
    return rules.length > 0 ? { base: dir, rules } : undefined;
  } catch {
    return undefined;
  }
}

const toPosix = (p: string): string => (sep === "/" ? p : p.split(sep).join("/"));

function isIgnored(files: IgnoreFile[], absPath: string, isDir: boolean): boolean {
  let ignored = false;
  // Outer files first so deeper .gitignore files (and later lines) win.
  for (const f of files) {
    const rel = toPosix(relative(f.base, absPath));
    if (rel === "" || rel.startsWith("..")) continue;
    const name = rel.slice(rel.lastIndexOf("/") + 1);
    for (const rule of f.rules) {
      if (rule.dirOnly && !isDir) continue;
      if (rule.regex.test(rule.anchored ? rel : name)) ignored = !rule.negated;
    }
  }
  return ignored;
}

/** Directory containing `.git` at or above `dir`, if any. */
export function findGitRoot(dir: string): string | undefined {
  let cur = dir;
  for (;;) {
    if (existsSync(join(cur, ".git"))) return cur;
    const parent = dirname(cur);
    if (parent === cur) return undefined;
    cur = parent;
  }
}

export interface WalkEntry {
  /** Absolute path. */
  path: string;
  /** "/"-separated path relative to the walk root. */
  rel: string;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

export interface WalkOptions {
  /** Honour .gitignore files (from the git root, or from `root` when not in a repo). */
  gitignore: boolean;
  /** Directory names never entered (e.g. ".git", "node_modules"). */
  skipDirs: ReadonlySet<string>;
  signal?: AbortSignal;
}

/**
 * Depth-first walk yielding files and directories in sorted order. Symlinks
 * are reported but never followed, so cycles cannot occur.
 */
export async function* walk(root: string, options: WalkOptions): AsyncGenerator<WalkEntry> {
  const ignoreFiles: IgnoreFile[] = [];
  if (options.gitignore) {
    // Parent .gitignore files up to the repository root also apply.
    const gitRoot = findGitRoot(root);
    const chain: string[] = [];
    if (gitRoot && gitRoot !== root) {
      for (let d = dirname(root); ; d = dirname(d)) {
        chain.unshift(d);
        if (d === gitRoot || dirname(d) === d) break;
      }
    }
    for (const d of chain) {
      const f = loadIgnoreFile(d);
      if (f) ignoreFiles.push(f);
    }
  }

  async function* visit(dir: string, relDir: string, inherited: IgnoreFile[]): AsyncGenerator<WalkEntry> {
    if (options.signal?.aborted) throw new Error("Operation aborted");
    let active = inherited;
    if (options.gitignore) {
      const own = loadIgnoreFile(dir);
      if (own) active = [...inherited, own];
    }
    let dirents;
    try {
      dirents = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // unreadable directory: skip rather than fail the search
    }
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const d of dirents) {
      const abs = join(dir, d.name);
      const rel = relDir ? `${relDir}/${d.name}` : d.name;
      const isDir = d.isDirectory();
      if (isDir && options.skipDirs.has(d.name)) continue;
      if (active.length > 0 && isIgnored(active, abs, isDir)) continue;
      yield { path: abs, rel, isDirectory: isDir, isSymbolicLink: d.isSymbolicLink() };
      if (isDir) yield* visit(abs, rel, active);
    }
  }

  yield* visit(root, "", ignoreFiles);
}
