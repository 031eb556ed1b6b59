/**
 * `npm run bench -- --quick` end to end: it runs parley, pi and the floor, prints the table and
 * writes the JSON file with a value for every figure. The figures themselves are not judged here
 * (speed claims belong to the bench, not to a timed test); that the bench still works is.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");

interface Row {
  section: string;
  figure: string;
  status: string;
  values: { parley: number | null; pi: number | null; ratio: number | null };
}

describe("npm run bench -- --quick", () => {
  it("measures every figure for parley and pi and writes the table and the JSON file", () => {
    const out = join(mkdtempSync(join(tmpdir(), "parley-bench-")), "results.json");
    const run = spawnSync(process.execPath, [join(ROOT, "scripts/bench/index.mjs"), "--quick", "--out", out], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 540_000,
    });
    expect(run.status, run.stderr.slice(-2000)).toBe(0);
    // Progress on stderr, the table on stdout.
    expect(run.stderr).toMatch(/\[bench\s+[\d.]+s\] startup/);
    expect(run.stdout).toMatch(/^targets: \d+ met, \d+ missed/m);

    const results = JSON.parse(readFileSync(out, "utf8")) as { meta: Record<string, unknown>; errors: Record<string, unknown>; rows: Row[] };
    expect(results.errors).toEqual({});
    expect(results.meta).toMatchObject({ node: process.version });
    const sections = new Set(results.rows.map((r) => r.section));
    expect([...sections]).toEqual(["start-up", "start-up with extensions", "sessions", "dialog", "fire-and-forget", "framing", "streaming"]);
    for (const row of results.rows) expect(typeof row.values.parley, row.figure).toBe("number");
    // Every judged row has a ratio against pi (or the baseline) and a verdict.
    for (const row of results.rows.filter((r) => r.status !== "")) {
      expect(typeof row.values.ratio, row.figure).toBe("number");
      expect(row.status, row.figure).toMatch(/^(met|MISSED)\*?$/);
    }
  }, 600_000);
});
