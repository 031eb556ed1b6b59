/**
 * A stack trace as an extension's author needs it: the frames of parley's own code (the bundle,
 * dist, src) and of Node's internals are dropped, so what is left points at the extension's
 * files and lines (jiti keeps the lines of a .ts file). A stack with no other frame is kept whole.
 */
import { join, sep } from "node:path";
import { packageRoot } from "../package-root.js";

const ownDirs = [join(packageRoot, "dist") + sep, join(packageRoot, "src") + sep];

function isOwnFrame(line: string): boolean {
  if (!/^\s+at /.test(line)) return false;
  return line.includes("node:internal/") || ownDirs.some((dir) => line.includes(dir) || line.includes(`file://${dir}`));
}

export function extensionStack(stack: string): string {
  const lines = stack.split("\n");
  const kept = lines.filter((line) => !isOwnFrame(line));
  const frames = kept.filter((line) => /^\s+at /.test(line));
  return frames.length > 0 ? kept.join("\n") : stack;
}
