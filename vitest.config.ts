import { defineConfig } from "vitest/config";

// Tests wait for events; these are only ceilings against a hang, generous enough for a loaded,
// shared 2-core machine, and scaled like the spawn helper's (PARLEY_TEST_DEADLINE_SCALE).
const scale = Number(process.env["PARLEY_TEST_DEADLINE_SCALE"] ?? "1");
const ceiling = 120_000 * (Number.isFinite(scale) && scale > 0 ? scale : 1);

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/test/**/*.test.ts", "scripts/**/test/**/*.test.ts"],
    testTimeout: ceiling,
    hookTimeout: ceiling,
    pool: "forks",
  },
});
