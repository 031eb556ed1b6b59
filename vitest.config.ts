import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

// Tests wait for events; these are only ceilings against a hang, generous enough for a loaded,
// shared 2-core machine, and scaled like the spawn helper's (PARLEY_TEST_DEADLINE_SCALE).
const scale = Number(process.env["PARLEY_TEST_DEADLINE_SCALE"] ?? "1");
const ceiling = 120_000 * (Number.isFinite(scale) && scale > 0 ? scale : 1);

const testRoots = ["packages/*/test/**", "examples/test/**", "scripts/**/test/**"];
// End to end: a spawned CLI, a browser, a terminal, the bench. The name says it (`*.e2e.test.ts`),
// except for the terminal client's test and the bench smoke run, which are end to end by nature.
const e2e = ["packages/*/test/**/*.e2e.test.ts", "examples/test/**/*.test.ts", "scripts/bench/test/bench-smoke.test.ts"];

export default defineConfig({
  test: {
    testTimeout: ceiling,
    hookTimeout: ceiling,
    pool: "forks",
    // vitest's default is one worker fewer than the CPUs: on a 2-core machine, one file at a time.
    // Most of the suite waits on spawned agents, so two files at once nearly halve its time, and
    // the tests are made to pass beside another copy of the suite anyway.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Every temp folder of the run (tests' and spawned agents') lives in one folder removed at the end.
    globalSetup: ["./scripts/test-tmpdir.ts"],
    // `vitest run --project unit` or `--project e2e` (npm run test:unit, test:e2e); both by default.
    projects: [
      {
        extends: true,
        test: { name: "unit", include: testRoots.map((root) => `${root}/*.test.ts`), exclude: [...configDefaults.exclude, ...e2e] },
      },
      { extends: true, test: { name: "e2e", include: e2e } },
    ],
  },
});
