/** Folder listing for resource discovery: sorted, symlinks followed, broken ones skipped. */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export interface FolderEntry {
  name: string;
  path: string;
  isFile: boolean;
  isDirectory: boolean;
}

/** The entries of `dir` in byte order of their names (Node's readdir order); [] when unreadable. */
export function listFolder(dir: string): FolderEntry[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const entries: FolderEntry[] = [];
  for (const name of names.sort(byCodeUnit)) {
    const path = join(dir, name);
    try {
      const stats = statSync(path);
      entries.push({ name, path, isFile: stats.isFile(), isDirectory: stats.isDirectory() });
    } catch {
      // A broken symlink or a file removed meanwhile: nothing to load.
    }
  }
  return entries;
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
