/**
 * "No child process outlives parley", checked with a marker: a shell command that backgrounds a
 * `sleep` in its process group, records its pid in a file and waits for it. Used by every mode's
 * lifetime tests (agent and web packages).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { poll } from "./waits.js";

/** Re-exported for the lifetime tests, which poll for the marker's end. */
export { poll };

/** Alive: exists and is not a zombie (an orphan killed in a container may wait for a reaper). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** A command that backgrounds a marker sleep in its group, records its pid and waits for it. */
export function markerCommand(dir: string): { command: string; pid: () => Promise<number> } {
  const file = join(dir, "marker.pid");
  return {
    command: `sleep 29.5 & echo $! > ${file}.tmp && mv ${file}.tmp ${file}; wait`,
    pid: async () => {
      await poll(() => existsSync(file), "the marker's pid file");
      return Number(readFileSync(file, "utf8").trim());
    },
  };
}

/** The signals a user or supervisor ends parley with, and the status each must give (128+n). */
export const SIGNAL_EXITS = [
  ["SIGTERM", 143],
  ["SIGINT", 130],
] as const;
