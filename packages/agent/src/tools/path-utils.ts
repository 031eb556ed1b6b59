import { accessSync, constants } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

// Unicode spaces models sometimes emit instead of a plain space.
const ODD_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

/**
 * Normalise a path argument from the model: drop a leading "@" (some models
 * copy the @file mention syntax), normalise odd spaces, and expand "~".
 */
export function expandPath(filePath: string): string {
  let p = filePath.startsWith("@") ? filePath.slice(1) : filePath;
  p = p.replace(ODD_SPACES, " ");
  if (p === "~") return homedir();
  if (p.startsWith("~/")) return join(homedir(), p.slice(2));
  return p;
}

/** Resolve a model-supplied path against the tool's working directory. */
export function resolveToCwd(filePath: string, cwd: string): string {
  const p = expandPath(filePath);
  return isAbsolute(p) ? p : resolve(cwd, p);
}

function exists(p: string): boolean {
  try {
    accessSync(p, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Like resolveToCwd, but when the file does not exist tries the spellings a
 * model plausibly lost: macOS screenshot names use U+202F before AM/PM, some
 * filesystems store NFD names, and curly apostrophes get flattened to ASCII.
 */
export function resolveReadPath(filePath: string, cwd: string): string {
  const resolved = resolveToCwd(filePath, cwd);
  if (exists(resolved)) return resolved;
  const variants = [resolved.replace(/ (AM|PM)\./g, "\u202F$1."), resolved.normalize("NFD"), resolved.replace(/'/g, "\u2019")];
  for (const v of variants) {
    if (v !== resolved && exists(v)) return v;
  }
  return resolved;
}
