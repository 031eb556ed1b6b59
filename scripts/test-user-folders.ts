/**
 * What the suite must never touch: the folders pi and parley keep in the user's real home (from the
 * password database, as a child without HOME finds it), listed with each entry's size and times.
 */
import { lstatSync, readdirSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";

const FOLDERS = [".pi", ".parley"];
/** Enough for any real agent folder; a bigger tree is compared on its first entries. */
const MAX_ENTRIES = 20_000;

export type FolderSnapshot = Map<string, string>;

export function snapshotUserFolders(home: string = userInfo().homedir): FolderSnapshot {
  const seen: FolderSnapshot = new Map();
  const visit = (path: string): void => {
    if (seen.size >= MAX_ENTRIES) return;
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      return;
    }
    seen.set(path, `${stat.isDirectory() ? "dir" : stat.size} modified ${stat.mtimeMs} changed ${stat.ctimeMs}`);
    if (!stat.isDirectory()) return;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch {
      return;
    }
    for (const name of names.sort()) visit(join(path, name));
  };
  for (const folder of FOLDERS) visit(join(home, folder));
  return seen;
}

/** Each path added, removed or changed between the two snapshots. */
export function userFolderChanges(before: FolderSnapshot, after: FolderSnapshot): string[] {
  const changes: string[] = [];
  for (const [path, was] of before) {
    const now = after.get(path);
    if (now === undefined) changes.push(`removed ${path}`);
    else if (now !== was) changes.push(`changed ${path}`);
  }
  for (const path of after.keys()) if (!before.has(path)) changes.push(`added ${path}`);
  return changes;
}
