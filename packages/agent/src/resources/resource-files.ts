/**
 * The files a resource folder holds, by pi's rules for each type: extensions (`.ts`/`.js` files,
 * folders with a package.json `pi.extensions` or an `index.ts`/`index.js`), skills (a folder's
 * SKILL.md, else its `.md` files and its sub-folders' SKILL.md), prompt templates (`.md` files,
 * recursively for listed folders). Hidden entries, node_modules and what the folders' ignore files
 * list (ignore-files.ts) are skipped.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { isDirectory, isFile, listFolder } from "./fs-entries.js";
import { IgnoreRules } from "./ignore-files.js";
import { findSkillFiles } from "./skills.js";

export type ResourceType = "extensions" | "skills" | "prompts";

export const RESOURCE_TYPES: readonly ResourceType[] = ["extensions", "skills", "prompts"];

/** A package.json's `pi` manifest: the resource lists it declares (entries that are not strings dropped). */
export type PiManifest = Partial<Record<ResourceType, string[]>>;

export function readPiManifest(dir: string): PiManifest | undefined {
  const file = join(dir, "package.json");
  if (!existsSync(file)) return undefined;
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
  } catch {
    return undefined;
  }
  const pi = pkg !== null && typeof pkg === "object" && "pi" in pkg ? pkg.pi : undefined;
  if (pi === null || typeof pi !== "object") return undefined;
  const manifest: PiManifest = {};
  for (const type of RESOURCE_TYPES) {
    const list: unknown = type in pi ? (pi as Record<string, unknown>)[type] : undefined;
    if (Array.isArray(list)) manifest[type] = list.filter((e): e is string => typeof e === "string");
  }
  return manifest;
}

/** A folder that is one extension (or a few): its manifest's `extensions` that exist, else its index file. */
export function extensionEntries(dir: string): string[] | undefined {
  const listed = (readPiManifest(dir)?.extensions ?? []).map((p) => resolve(dir, p)).filter((p) => existsSync(p));
  if (listed.length > 0) return listed;
  const index = ["index.ts", "index.js"].map((f) => join(dir, f)).find((f) => existsSync(f));
  return index ? [index] : undefined;
}

/**
 * The extensions of a folder: the folder itself when it is one, else each file and sub-folder
 * extension in it. `moduleFiles`: `.mjs`/`.mts` files too (parley's earlier folders took them).
 */
export function collectExtensionFiles(dir: string, moduleFiles = false): string[] {
  if (!isDirectory(dir)) return [];
  const own = extensionEntries(dir);
  if (own) return own;
  const found: string[] = [];
  const entries = listFolder(dir);
  const rules = new IgnoreRules(dir);
  rules.addFolder(dir, entries);
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules" || rules.ignores(entry.path, entry.isDirectory)) continue;
    const isScript = /\.(ts|js)$/.test(entry.name) || (moduleFiles && /\.m(ts|js)$/.test(entry.name));
    if (entry.isFile && isScript && !entry.name.endsWith(".d.ts")) found.push(entry.path);
    else if (entry.isDirectory) found.push(...(extensionEntries(entry.path) ?? []));
  }
  return found;
}

/** Markdown files under `dir`, recursively (a listed prompts folder, as pi reads it). */
export function collectMarkdownFiles(dir: string, rules = new IgnoreRules(dir)): string[] {
  const found: string[] = [];
  const entries = listFolder(dir);
  rules.addFolder(dir, entries);
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules" || rules.ignores(entry.path, entry.isDirectory)) continue;
    if (entry.isDirectory) found.push(...collectMarkdownFiles(entry.path, rules));
    else if (entry.isFile && entry.name.endsWith(".md")) found.push(entry.path);
  }
  return found;
}

/** The resource files of one type in a folder. */
export function collectResourceFiles(dir: string, type: ResourceType): string[] {
  if (type === "extensions") return collectExtensionFiles(dir);
  if (type === "skills") return findSkillFiles(dir, "pi");
  return collectMarkdownFiles(dir);
}

/** Listed paths to files: a file is itself, a folder its resource files; missing paths give nothing. */
export function collectFromPaths(paths: readonly string[], type: ResourceType): string[] {
  return paths.flatMap((p) => (isFile(p) ? [p] : isDirectory(p) ? collectResourceFiles(p, type) : []));
}
