/**
 * "No busy loop", measured: the CPU time a process burns over an idle wait, compared with the
 * wait itself (never with a fixed speed, so a loaded machine does not fail it).
 */
import { readFileSync } from "node:fs";

/** utime + stime of `pid` so far, in ms (Linux clock ticks are 1/100 s). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The share of one core `pid` used during `ms` of waiting (0: asleep; ~1: a busy loop). */
export async function idleShare(pid: number, ms = 1000): Promise<number> {
  const cpu = cpuMs(pid);
  const start = Date.now();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (cpuMs(pid) - cpu) / (Date.now() - start);
}
