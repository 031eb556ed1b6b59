/**
 * Every child process parley started and has not seen the end of, so that shutdown (and, as a
 * last resort, process exit) can end them: no child outlives parley. Shell commands lead a
 * process group of their own (the bash tool, the `bash` command), which is killed as a whole so
 * their children (pipelines, sleeps, background jobs) go too; other children are killed alone.
 */
import type { Disposable } from "@parley/protocol/disposable";

interface Tracked {
  pid: number;
  group: boolean;
}

const live = new Set<Tracked>();

/** Kills a process group (or the process alone when it has none); a process already gone is fine. */
export function killProcessTree(pid: number | undefined, group = true): void {
  if (pid === undefined) return;
  if (group) {
    try {
      process.kill(-pid, "SIGKILL");
      return;
    } catch {
      // no such group (any more): try the process itself
    }
  }
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * Tracks a child until the result is disposed. For a group, dispose it when the leader is done: a
 * group some of whose members live on (`cmd &`) stays tracked, and dies with parley.
 */
export function trackChild(pid: number | undefined, options: { group: boolean }): Disposable {
  if (pid === undefined) return NOTHING_TRACKED;
  const entry: Tracked = { pid, group: options.group };
  live.add(entry);
  return {
    dispose() {
      if (entry.group && groupAlive(pid)) return;
      live.delete(entry);
    },
  };
}

const NOTHING_TRACKED: Disposable = { dispose() {} };

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Ends every tracked child at once (SIGKILL, synchronous: safe in an 'exit' handler). */
export function killAllChildren(): void {
  for (const entry of live) killProcessTree(entry.pid, entry.group);
  live.clear();
}
