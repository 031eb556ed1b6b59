/**
 * `list_files` (a parley addition): files under the working folder for `@` references, as pi's
 * editor offers them. Bounded (entries visited, paths answered) and never outside the folder:
 * symlinks are listed as files but never followed, dot entries and node_modules are skipped, and
 * `.gitignore`/`.ignore`/`.fdignore` rules apply as in resource discovery.
 */
import type { ListFilesData } from "@parley/protocol";
import { readdirSync, type Dirent } from "node:fs";
import { join, relative, sep } from "node:path";
import { IgnoreRules } from "../resources/ignore-files.js";

/** Folder entries a walk looks at before it stops (a home folder must not hang the answer). */
export const MAX_VISITED = 20_000;
const DEFAULT_LIMIT = 50;

export function listFiles(cwd: string, query = "", limit = DEFAULT_LIMIT): ListFilesData {
  const needle = query.toLowerCase();
  const rules = new IgnoreRules(cwd);
  const matches: { path: string; score: number }[] = [];
  const queue: string[] = [cwd];
  let visited = 0;
  let truncated = false;
  walk: for (let dir = queue.shift(); dir !== undefined; dir = queue.shift()) {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    rules.addFolder(
      dir,
      entries.map((e) => ({ name: e.name, path: join(dir, e.name), isFile: e.isFile(), isDirectory: e.isDirectory() })),
    );
    for (const entry of entries) {
      if (++visited > MAX_VISITED) {
        truncated = true;
        break walk;
      }
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = join(dir, entry.name);
      const folder = entry.isDirectory();
      if (rules.ignores(path, folder)) continue;
      const rel = relative(cwd, path).split(sep).join("/") + (folder ? "/" : "");
      const score = matchScore(rel, needle);
      if (score !== undefined) matches.push({ path: rel, score });
      if (folder) queue.push(path);
    }
  }
  matches.sort((a, b) => a.score - b.score || a.path.length - b.path.length || (a.path < b.path ? -1 : 1));
  return { files: matches.slice(0, limit).map((m) => m.path), truncated };
}

/**
 * Lower is better; undefined when the query's characters are not all in the path, in order.
 * A match in the file name beats one spread over the folders.
 */
function matchScore(path: string, needle: string): number | undefined {
  if (needle === "") return 0;
  const lower = path.toLowerCase();
  const name = lower.slice(lower.lastIndexOf("/", lower.length - 2) + 1);
  if (name.includes(needle)) return 0;
  if (lower.includes(needle)) return 1;
  let at = 0;
  for (const char of needle) {
    at = lower.indexOf(char, at);
    if (at < 0) return undefined;
    at++;
  }
  return 2;
}
