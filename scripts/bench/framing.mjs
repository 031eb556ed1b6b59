// Framing: parley's JSONL reader, pi's (loaded in-process from the devDependency) and a plain
// linear baseline, each case in its own child process (framing-child.mjs) for a clean peak RSS.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { BENCH_DIR, kibToMiB, median, progress } from "./lib.mjs";

const CHILD = join(BENCH_DIR, "framing-child.mjs");

function runChild(reader, spec, timeoutMs) {
  return new Promise((res) => {
    const started = performance.now();
    execFile(process.execPath, [CHILD, reader, spec], { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      const wallMs = performance.now() - started;
      if (err) {
        if (err.killed || err.signal === "SIGKILL") res({ timeout: true, wallMs });
        else res({ error: (stderr || err.message).trim().split("\n").slice(-1)[0], wallMs });
        return;
      }
      res({ ...JSON.parse(stdout), wallMs });
    });
  });
}

export async function runFraming({ quick }) {
  const mib = quick ? [4, 8] : [16, 32, 64];
  const lineCount = quick ? 100_000 : 1_000_000;
  const cases = [
    ...mib.map((m) => ({ spec: `line:${m}`, label: `${m} MiB line` })),
    { spec: `lines:${lineCount}`, label: `${lineCount.toLocaleString("en-US")} × 100 B lines` },
  ];
  const readers = ["baseline", "parley", "pi"];
  const runs = 3;
  const timeoutMs = quick ? 20_000 : 120_000;
  /** A run slower than this is not repeated (pi's reader on big lines is quadratic). */
  const repeatBelowMs = 10_000;
  const out = [];
  for (const c of cases) {
    const row = { case: c.spec, label: c.label };
    for (const reader of readers) {
      const samples = [];
      for (let r = 0; r < runs; r++) {
        const s = await runChild(reader, c.spec, timeoutMs);
        samples.push(s);
        const shown = s.timeout
          ? `timeout (> ${timeoutMs / 1000} s)`
          : s.error
            ? `error: ${s.error}`
            : `${s.ms.toFixed(0)} ms, peak RSS ${kibToMiB(s.hwmKiB).toFixed(0)} MiB`;
        progress(`framing ${c.label} ${reader} ${r + 1}/${runs}: ${shown}`);
        if (s.timeout || s.error || s.wallMs > repeatBelowMs) break;
      }
      const ok = samples.filter((s) => !s.timeout && !s.error);
      row[reader] =
        ok.length > 0
          ? {
              ms: median(ok.map((s) => s.ms)),
              peakRssMiB: kibToMiB(median(ok.map((s) => s.hwmKiB))),
              startRssMiB: kibToMiB(median(ok.map((s) => s.startRssKiB))),
              runs: ok.length,
            }
          : samples[0].timeout
            ? { timeout: true, timeoutMs }
            : { error: samples[0].error };
    }
    out.push(row);
  }
  return { chunkBytes: 64 * 1024, runs, timeoutMs, cases: out };
}
