/**
 * The ignore files pi honours while it discovers resources (`.gitignore`, `.ignore`, `.fdignore`):
 * a walk of one resource folder gathers the rules of every folder it enters, each file's patterns
 * made relative to the walk's root (pi drops a leading `/`: in the root's own file such a pattern
 * matches at any depth), and skips what they match. The matching is the `ignore` package's (gitignore semantics), as in pi; it loads
 * only when a walk meets an ignore file.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, sep } from "node:path";
import type { FolderEntry } from "./fs-entries.js";

type Ignore = ReturnType<typeof import("ignore")>;

const IGNORE_FILES = [".gitignore", ".ignore", ".fdignore"];

const toPosix = (path: string): string => path.split(sep).join("/");

/** One line of an ignore file, prefixed with its folder's path below the root; undefined for blanks and comments. */
export function prefixedPattern(line: string, prefix: string): string | undefined {
  const trimmed = line.trim();
  if (!trimmed || (trimmed.startsWith("#") && !trimmed.startsWith("\\#"))) return undefined;
  let pattern = line;
  const negated = pattern.startsWith("!");
  if (negated) pattern = pattern.slice(1);
  else if (pattern.startsWith("\\!")) pattern = pattern.slice(1);
  if (pattern.startsWith("/")) pattern = pattern.slice(1);
  return `${negated ? "!" : ""}${prefix}${pattern}`;
}

export class IgnoreRules {
  readonly root: string;
  #matcher: Ignore | undefined;

  constructor(root: string) {
    this.root = root;
  }

  /** Adds the rules of `dir`'s ignore files; `entries` is its listing (no file is opened unless listed). */
  addFolder(dir: string, entries: readonly FolderEntry[]): void {
    const below = toPosix(relative(this.root, dir));
    const prefix = below ? `${below}/` : "";
    for (const name of IGNORE_FILES) {
      if (!entries.some((e) => e.name === name && e.isFile)) continue;
      let text: string;
      try {
        text = readFileSync(join(dir, name), "utf8");
      } catch {
        continue; // unreadable: as if absent, as in pi
      }
      const patterns = text.split(/\r?\n/).flatMap((line) => prefixedPattern(line, prefix) ?? []);
      if (patterns.length > 0) (this.#matcher ??= newMatcher()).add(patterns);
    }
  }

  /** Whether a file or folder below the root is ignored (a folder is asked as `path/`). */
  ignores(path: string, isDirectory: boolean): boolean {
    if (!this.#matcher) return false;
    const rel = toPosix(relative(this.root, path));
    return this.#matcher.ignores(isDirectory ? `${rel}/` : rel);
  }
}

function newMatcher(): Ignore {
  const ignore = createRequire(import.meta.url)("ignore") as typeof import("ignore");
  return ignore();
}
