// Cold start and idle RSS: spawn (no extensions, --no-session, private temp HOME) → first
// get_state response; then wait 1 s and read VmRSS. Also, for scale, the cold start with one
// extension loaded (the bench extension, which imports pi-ai): what a user with extensions waits.
import { AGENTS, BENCH_EXT, kibToMiB, median, progress, request, roundOrder, sleep, startAgent } from "./lib.mjs";

const AGENT_ARGS = { parley: ["--no-extensions"], pi: ["--no-extensions"], floor: [] };

async function withExtension(agent) {
  const proc = startAgent(agent, ["-e", BENCH_EXT]);
  try {
    await request(proc, { type: "get_state" }, 30_000);
    return performance.now() - proc.spawnedAt;
  } finally {
    await proc.stop();
  }
}

async function once(agent) {
  const proc = startAgent(agent, AGENT_ARGS[agent.name]);
  try {
    // Written at once: the command waits in the pipe until the agent reads stdin.
    await request(proc, { type: "get_state" }, 30_000);
    const coldStartMs = performance.now() - proc.spawnedAt;
    await sleep(1000);
    const st = proc.status();
    return { coldStartMs, idleRssMiB: kibToMiB(st?.VmRSS), startupHwmMiB: kibToMiB(st?.VmHWM) };
  } finally {
    await proc.stop();
  }
}

export async function runStartup({ quick }) {
  const runs = quick ? 2 : 7;
  const names = ["floor", "parley", "pi"];
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  // Interleaved, in a rotating order, so drift on the machine hits all three alike.
  for (let r = 0; r < runs; r++) {
    for (const name of roundOrder(names, r)) {
      const s = await once(AGENTS[name]);
      samples[name].push(s);
      if (name !== "floor") s.withExtensionMs = await withExtension(AGENTS[name]);
      progress(
        `startup ${r + 1}/${runs} ${name}: ${s.coldStartMs.toFixed(0)} ms, idle RSS ${s.idleRssMiB.toFixed(1)} MiB` +
          (s.withExtensionMs === undefined ? "" : `, with an extension ${s.withExtensionMs.toFixed(0)} ms`),
      );
    }
  }
  const pick = (key) =>
    Object.fromEntries(names.flatMap((n) => (samples[n].every((s) => s[key] !== undefined) ? [[n, median(samples[n].map((s) => s[key]))]] : [])));
  return {
    runs,
    coldStartMs: pick("coldStartMs"),
    idleRssMiB: pick("idleRssMiB"),
    withExtensionMs: pick("withExtensionMs"),
    startupHwmMiB: pick("startupHwmMiB"),
    samples,
  };
}
