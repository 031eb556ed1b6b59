import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as schemas from "../src/schema/index.js";
import { checkCommand } from "../src/validate.js";
import { quickCheckCommand } from "../src/quick-check.js";
// @ts-expect-error: a plain .mjs helper without types
import { buildValidatorModule } from "../scripts/validator-code.mjs";

const ROOT = join(import.meta.dirname, "..");

describe("generated command validators", () => {
  it("are fresh (regenerate with npm run generate)", () => {
    const committed = readFileSync(join(ROOT, "src/generated/command-checks.ts"), "utf8");
    expect(committed, "src/generated/command-checks.ts is stale: run `npm run generate`").toBe((buildValidatorModule as (s: unknown) => string)(schemas));
  });

  const samples: unknown[] = [
    null,
    [1],
    42,
    {},
    { id: "x" },
    { type: 1 },
    { type: "nope", id: 3 },
    { type: "get_state" },
    { type: "get_state", id: true },
    { type: "prompt", message: "hi", images: [{ type: "image", data: "AA", mimeType: "image/png" }] },
    { type: "prompt" },
    { type: "prompt", message: "hi", streamingBehavior: "later" },
    { type: "set_thinking_level", level: 42 },
    { type: "set_thinking_level", level: "high", id: "t" },
    { type: "set_steering_mode", mode: "all", extra: { nested: [1, 2] } },
    { type: "bash", command: "ls", excludeFromContext: "yes" },
    { type: "get_entries", since: 5 },
    { type: "constructor" },
    JSON.parse('{"type":"get_state","__proto__":{"polluted":true}}'),
  ];

  it("agree with the full validator: same verdict, same error text", async () => {
    for (const value of samples) {
      const full = checkCommand(value);
      const quick = quickCheckCommand(value);
      expect(quick.ok, JSON.stringify(value)).toBe(full.ok);
      if (!quick.ok && !full.ok) {
        const error = "error" in quick ? quick.error : await quick.explain();
        expect(error, JSON.stringify(value)).toBe(full.error);
        expect(quick.command).toBe(full.command);
        expect(quick.id).toBe(full.id);
      }
    }
  });

  it("agree with the full validator on generated command-like values", async () => {
    const types = Object.keys(schemas.COMMAND_SCHEMAS);
    const commandLike = fc.record(
      {
        type: fc.constantFrom(...types, "unknown_type"),
        id: fc.oneof(fc.string(), fc.integer(), fc.boolean()),
        message: fc.jsonValue(),
        level: fc.jsonValue(),
        mode: fc.jsonValue(),
        enabled: fc.jsonValue(),
        name: fc.jsonValue(),
      },
      { requiredKeys: ["type"] },
    );
    await fc.assert(
      fc.asyncProperty(commandLike, async (value) => {
        const full = checkCommand(value);
        const quick = quickCheckCommand(value);
        expect(quick.ok).toBe(full.ok);
        if (!quick.ok && !full.ok) expect("error" in quick ? quick.error : await quick.explain()).toBe(full.error);
      }),
      { numRuns: 300 },
    );
  });
});
