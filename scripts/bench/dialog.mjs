// Dialog round trip: the bench extension's /bench-confirm N awaits ctx.ui.confirm() N times in a
// row and times each call (request written → answer delivered to the extension); the client
// answers every confirm as soon as it reads it. p50/p99 per run, medians over runs; peak RSS
// (VmHWM) of a fresh process per run.
import { BENCH_EXT, benchResult, kibToMiB, percentile, request, sampleAgents, startAgent } from "./lib.mjs";

/** The request's id as JSON text: cut out of the line when it is a plain string (always, in practice). */
function confirmId(line) {
  const m = /"id":("[^"\\]*")/.exec(line);
  return m ? m[1] : JSON.stringify(JSON.parse(line).id);
}

async function once(agent, n) {
  const proc = startAgent(agent, agent.name === "floor" ? [] : ["-e", BENCH_EXT]);
  try {
    let answered = 0;
    // The client is part of the instrument: it answers with as little work as it can (no parse,
    // no stringify per line), so what the figure shows is the agent and the pipe, not the harness.
    proc.onLine = (line) => {
      if (!line.includes('"method":"confirm"')) return;
      proc.sendLine(`{"type":"extension_ui_response","id":${confirmId(line)},"confirmed":true}`);
      answered++;
    };
    await request(proc, { type: "get_state" }, 30_000);
    const result = benchResult(proc, 120_000);
    const sentAt = performance.now();
    proc.send({ type: "prompt", message: `/bench-confirm ${n}`, id: "bench-confirm" });
    const { rtt, yes } = await result;
    const clientMs = performance.now() - sentAt;
    if (answered !== n || yes !== n) throw new Error(`${agent.name}: ${answered} confirms answered, ${yes} confirmed, expected ${n}`);
    const hwm = proc.status()?.VmHWM;
    return {
      p50Us: percentile(rtt, 50) * 1000,
      p99Us: percentile(rtt, 99) * 1000,
      meanUs: (rtt.reduce((a, b) => a + b, 0) / rtt.length) * 1000,
      clientMs,
      peakRssMiB: kibToMiB(hwm),
    };
  } finally {
    await proc.stop();
  }
}

export async function runDialog({ quick }) {
  const n = quick ? 500 : 2000;
  const runs = quick ? 2 : 7;
  const names = ["floor", "parley", "pi"];
  const { samples, pick } = await sampleAgents(
    names,
    runs,
    (agent) => once(agent, n),
    (r, name, s) => `dialog ${r + 1}/${runs} ${name}: ${n} confirms, p50 ${s.p50Us.toFixed(0)} µs, p99 ${s.p99Us.toFixed(0)} µs`,
  );
  return { n, runs, p50Us: pick("p50Us"), p99Us: pick("p99Us"), meanUs: pick("meanUs"), peakRssMiB: pick("peakRssMiB"), samples };
}
