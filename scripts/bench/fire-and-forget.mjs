// Fire-and-forget throughput: the bench extension's /bench-status N calls ctx.ui.setStatus() N
// times in a loop. The client times from sending the command to reading the last setStatus
// record and reports records/s; peak RSS (VmHWM) of a fresh process per run.
import { BENCH_EXT, benchResult, kibToMiB, request, sampleAgents, startAgent } from "./lib.mjs";

async function once(agent, n) {
  const proc = startAgent(agent, agent.name === "floor" ? [] : ["-e", BENCH_EXT]);
  try {
    await request(proc, { type: "get_state" }, 30_000);
    let count = 0;
    proc.onLine = (line) => {
      if (line.includes('"method":"setStatus"')) count++;
    };
    const lastText = `"statusText":"s${n - 1}"`;
    const last = proc.waitLine((line) => line.includes(lastText), 300_000, "the last setStatus record");
    const result = benchResult(proc, 300_000);
    const sentAt = performance.now();
    proc.send({ type: "prompt", message: `/bench-status ${n}`, id: "bench-status" });
    await last;
    const ms = performance.now() - sentAt;
    const { totalMs: extensionMs } = await result;
    if (count !== n) throw new Error(`${agent.name}: read ${count} setStatus records, expected ${n}`);
    return { recordsPerSec: (n / ms) * 1000, ms, extensionMs, peakRssMiB: kibToMiB(proc.status()?.VmHWM) };
  } finally {
    await proc.stop();
  }
}

export async function runFireAndForget({ quick }) {
  const n = quick ? 10_000 : 100_000;
  const runs = quick ? 1 : 5;
  const names = ["floor", "parley", "pi"];
  const { samples, pick } = await sampleAgents(
    names,
    runs,
    (agent) => once(agent, n),
    (r, name, s) => `fire-and-forget ${r + 1}/${runs} ${name}: ${n} setStatus in ${s.ms.toFixed(0)} ms (${Math.round(s.recordsPerSec)} records/s)`,
  );
  return { n, runs, recordsPerSec: pick("recordsPerSec"), ms: pick("ms"), extensionMs: pick("extensionMs"), peakRssMiB: pick("peakRssMiB"), samples };
}
