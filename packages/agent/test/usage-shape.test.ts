/**
 * Usages summed as pi 1.6's `combineUsage` sums them (a split turn's two summaries, a tool's own
 * usage and its nested calls'): pi's own function is the reference.
 */
import { join } from "node:path";
import type { Usage } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { addUsage } from "../src/agent/usage-shape.js";
import { ROOT } from "./helpers/spawn.js";

const { combineUsage } = (await import(join(ROOT, "node_modules/pi-newest/dist/core/usage-totals.js"))) as { combineUsage: (a: Usage, b: Usage) => Usage };

const usage = (n: number, extra: Partial<Usage> = {}, fromProvider?: boolean): Usage => ({
  input: n,
  output: n + 1,
  cacheRead: n + 2,
  cacheWrite: n + 3,
  totalTokens: 4 * n + 6,
  cost: {
    input: n / 10,
    output: n / 5,
    cacheRead: 0,
    cacheWrite: 0,
    total: (3 * n) / 10,
    ...(fromProvider === undefined ? {} : { totalFromProvider: fromProvider }),
  },
  ...extra,
});

describe("addUsage", () => {
  it("is pi 1.6's combineUsage: token splits kept when either side has them, a total provider-reported only when both are", () => {
    const cases: Array<[Usage, Usage]> = [
      [usage(1), usage(2)],
      [usage(1, {}, true), usage(2, {}, true)],
      [usage(1, {}, true), usage(2)],
      [usage(1, { reasoning: 3 }), usage(2)],
      [usage(1), usage(2, { cacheWrite1h: 4, reasoning: 0 })],
    ];
    for (const [a, b] of cases) expect(addUsage(a, b)).toEqual(combineUsage(a, b));
  });
});
