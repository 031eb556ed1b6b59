// Start-up and first prompt as users run them: with real extensions. Each run is a fresh process
// (private temp HOME), spawn → first get_state response (time, and VmHWM then: the start-up peak),
// and, on a fresh process, prompt sent → first message_update (the first prompt pays for loading
// the agent loop; the floor agent, which answers at once, gives the pipe round trip for scale). The model is the bench extension's faux provider, the same code in both agents.
import { join } from "node:path";
import { AGENTS, BENCH_EXT, PI_PKG, kibToMiB, mainThreadCpuMs, median, progress, request, roundOrder } from "./lib.mjs";
import { startAgent } from "./lib.mjs";

const EXAMPLES = join(PI_PKG, "examples/extensions");
/** The extension sets of the issue: pi's rpc-demo (types only), and three that import libraries. */
export const EXTENSION_SETS = {
  "rpc-demo": [join(EXAMPLES, "rpc-demo.ts")],
  "three examples": ["permission-gate.ts", "confirm-destructive.ts", "todo.ts"].map((f) => join(EXAMPLES, f)),
};

const extensionArgs = (files) => files.flatMap((f) => ["-e", f]);

async function startOnce(agent, files) {
  const proc = startAgent(agent, extensionArgs(files));
  try {
    await request(proc, { type: "get_state" }, 60_000);
    const ms = performance.now() - proc.spawnedAt;
    return { ms, peakRssMiB: kibToMiB(proc.status()?.VmHWM) };
  } finally {
    await proc.stop();
  }
}

const isMessageUpdate = (line) => line.startsWith('{"type":"message_update"');
const isAgentEnd = (line) => line.startsWith('{"type":"agent_end"');

/**
 * Wall time from sending the prompt to reading the first message_update, and the agent's
 * main-thread CPU over the whole prompt (sent → agent_end read). CPU to the first update cannot be
 * read from outside: the agent goes on streaming while the client reads it.
 */
async function firstPromptOnce(agent, files) {
  const proc = startAgent(agent, [...extensionArgs(files), "-e", BENCH_EXT]);
  try {
    await request(proc, { type: "set_model", provider: "bench-faux", modelId: "faux-1" }, 60_000);
    const update = proc.waitLine(isMessageUpdate, 60_000, "the first message_update");
    const end = proc.waitLine(isAgentEnd, 60_000, "agent_end");
    const cpuAtStart = mainThreadCpuMs(proc.pid);
    const sentAt = performance.now();
    proc.send({ type: "prompt", message: "deltas:10", id: "first" });
    await update;
    const ms = performance.now() - sentAt;
    await end;
    const cpuAtEnd = mainThreadCpuMs(proc.pid);
    return { ms, cpuMs: cpuAtStart == null || cpuAtEnd == null ? null : cpuAtEnd - cpuAtStart };
  } finally {
    await proc.stop();
  }
}

export async function runExtensions({ quick, runs: runsOverride }) {
  const runs = runsOverride ?? (quick ? 1 : 5);
  const names = ["parley", "pi"];
  const out = { runs, startup: {}, firstPrompt: {}, firstPromptCpuMs: {} };
  for (const [set, files] of Object.entries(EXTENSION_SETS)) {
    const samples = { parley: [], pi: [] };
    for (let r = 0; r < runs; r++) {
      for (const name of roundOrder(names, r)) {
        const s = await startOnce(AGENTS[name], files);
        samples[name].push(s);
        progress(`start-up with ${set} ${r + 1}/${runs} ${name}: ${s.ms.toFixed(0)} ms, peak RSS ${s.peakRssMiB?.toFixed(1)} MiB`);
      }
    }
    out.startup[set] = {
      ms: Object.fromEntries(names.map((n) => [n, median(samples[n].map((s) => s.ms))])),
      peakRssMiB: Object.fromEntries(names.map((n) => [n, median(samples[n].map((s) => s.peakRssMiB))])),
    };
  }
  for (const [set, files] of [
    ["bench extension only", []],
    ["three examples", EXTENSION_SETS["three examples"]],
  ]) {
    // The floor (a plain-Node agent that answers at once) shows what a pipe round trip alone costs.
    const withFloor = ["floor", ...names];
    const samples = { floor: [], parley: [], pi: [] };
    for (let r = 0; r < runs; r++) {
      for (const name of roundOrder(withFloor, r)) {
        const s = await firstPromptOnce(AGENTS[name], files);
        samples[name].push(s);
        progress(`first prompt (${set}) ${r + 1}/${runs} ${name}: ${s.ms.toFixed(1)} ms, main-thread CPU to agent_end ${s.cpuMs?.toFixed(1)} ms`);
      }
    }
    out.firstPrompt[set] = Object.fromEntries(withFloor.map((n) => [n, median(samples[n].map((s) => s.ms))]));
    out.firstPromptCpuMs[set] = Object.fromEntries(withFloor.map((n) => [n, median(samples[n].map((s) => s.cpuMs))]));
  }
  return out;
}
