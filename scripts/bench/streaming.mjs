// Streaming: a scripted reply of N text deltas from the bench extension's faux provider (same
// extension, same provider code in both agents; the floor writes N bare delta records). Measured
// by the client from sending the prompt to reading agent_end: stdout bytes (whole lines) and time.
// One fresh process per agent and size, so peak RSS (VmHWM) belongs to that size.
import { AGENTS, BENCH_EXT, kibToMiB, median, progress, request, startAgent } from "./lib.mjs";

const isAgentEnd = (line) => line.startsWith('{"type":"agent_end"');

async function reply(proc, deltas, timeoutMs) {
  let bytes = 0;
  proc.onLine = (_line, lineBytes) => {
    bytes += lineBytes;
  };
  const end = proc.waitLine(isAgentEnd, timeoutMs, `agent_end of a ${deltas}-delta reply`);
  const sentAt = performance.now();
  proc.send({ type: "prompt", message: `deltas:${deltas}`, id: `stream-${deltas}` });
  await end;
  const ms = performance.now() - sentAt;
  proc.onLine = () => {};
  return { bytes, ms };
}

async function forSize(agent, deltas, runs, timeoutMs) {
  const proc = startAgent(agent, agent.name === "floor" ? [] : ["-e", BENCH_EXT]);
  try {
    await request(proc, { type: "set_model", provider: "bench-faux", modelId: "faux-1" }, 30_000);
    await reply(proc, 100, 30_000); // warm-up
    await request(proc, { type: "new_session" }, 30_000);
    const samples = [];
    for (let r = 0; r < runs; r++) {
      try {
        samples.push(await reply(proc, deltas, timeoutMs));
      } catch (err) {
        progress(`streaming ${deltas} deltas ${agent.name}: ${err.short ?? err.message}`);
        return { error: err.short ?? err.message, peakRssMiB: null };
      }
      await request(proc, { type: "new_session" }, 30_000);
    }
    return {
      bytes: median(samples.map((s) => s.bytes)),
      ms: median(samples.map((s) => s.ms)),
      peakRssMiB: kibToMiB(proc.status()?.VmHWM),
      runs,
    };
  } finally {
    await proc.stop();
  }
}

export async function runStreaming({ quick }) {
  const sizes = quick ? [250, 1000, 4000] : [1000, 4000, 16000];
  const runs = quick ? 1 : 3;
  const timeoutMs = quick ? 20_000 : 180_000;
  const names = ["floor", "parley", "pi"];
  const rows = [];
  for (const deltas of sizes) {
    const row = { deltas };
    for (const name of names) {
      const s = await forSize(AGENTS[name], deltas, runs, timeoutMs);
      row[name] = s;
      if (!s.error) {
        progress(`streaming ${deltas} deltas ${name}: ${(s.bytes / 2 ** 20).toFixed(2)} MiB in ${s.ms.toFixed(0)} ms, peak RSS ${s.peakRssMiB.toFixed(0)} MiB`);
      }
    }
    rows.push(row);
  }
  // Linear output means a constant number of bytes per delta as the reply grows.
  const bytesPerDeltaGrowth = {};
  for (const name of names) {
    const ok = rows.filter((r) => r[name] && !r[name].error);
    if (ok.length < 2) {
      bytesPerDeltaGrowth[name] = null;
      continue;
    }
    const first = ok[0];
    const last = ok[ok.length - 1];
    bytesPerDeltaGrowth[name] = {
      from: first.deltas,
      to: last.deltas,
      factor: last[name].bytes / last.deltas / (first[name].bytes / first.deltas),
    };
  }
  return { sizes, runs, timeoutMs, rows, bytesPerDeltaGrowth };
}
