/** Where a skill or prompt template came from, in the shape pi reports it in get_commands. */
import { dirname } from "node:path";
import type { SourceInfo } from "../extensions/types.js";

/** A file found in one of the folders pi searches by itself: pi calls these "auto". */
export function discoveredSource(path: string, scope: "user" | "project", baseDir: string): SourceInfo {
  return { path, source: "auto", scope, origin: "top-level", baseDir };
}

/** A file or folder named on the command line (--skill, --prompt-template). */
export function explicitSource(path: string, baseDir: string = dirname(path)): SourceInfo {
  return { path, source: "local", scope: "temporary", origin: "top-level", baseDir };
}
