/**
 * Every child process parley started and has not seen the end of, so that shutdown (and, as a
 * last resort, process exit) can end them: no child outlives parley. Shell commands lead a
 * process group of their own (the bash tool, the `bash` command), which is killed as a whole so
 * their children (pipelines, sleeps, background jobs) go too; other children are killed alone.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { Disposable } from "@parley/protocol/disposable";
import { watchdogForget, watchdogTrack } from "./child-watchdog.js";
import { stuckWatchdogForget, stuckWatchdogTrack } from "./stuck-watchdog.js";

interface Tracked {
  pid: number;
  group: boolean;
}

const live = new Set<Tracked>();

/**
 * Kills a process group (or the process alone when it has none), and every descendant that left
 * it (`setsid cmd &`, a child of a non-group child); a process already gone is fine.
 */
export function killProcessTree(pid: number | undefined, group = true): void {
  if (pid === undefined) return;
  // Listed before anything dies: a dead parent's children go to init, out of reach.
  const escaped = descendantsOf(pid);
  killLeader(pid, group);
  for (const descendant of escaped) {
    try {
      process.kill(descendant, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

/**
 * Every live descendant of `pid`, from /proc (Linux; none where it cannot be read). Synchronous:
 * it also runs in the 'exit' handler. A process group misses those that made a group or a
 * session of their own; the parent links do not.
 */
function descendantsOf(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ")".
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const siblings = children.get(ppid);
    if (siblings) siblings.push(Number(entry));
    else children.set(ppid, [Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  for (let at = queue.shift(); at !== undefined; at = queue.shift()) {
    for (const child of children.get(at) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function killLeader(pid: number, group: boolean): void {
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
  // Should parley die without running its exit handlers (SIGKILL), the watchdog ends it.
  watchdogTrack(pid, options.group);
  // Should the main thread be stuck when parley is asked to end, the stuck watchdog ends it.
  stuckWatchdogTrack(pid, options.group);
  return {
    dispose() {
      if (entry.group && groupAlive(pid)) return;
      if (!live.delete(entry)) return;
      watchdogForget(pid, entry.group);
      stuckWatchdogForget(pid, entry.group);
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
