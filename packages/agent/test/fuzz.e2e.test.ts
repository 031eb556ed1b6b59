/**
 * Wire fuzzing through the real CLI: 10^5 generated lines (random bytes, invalid UTF-8, NUL, CR,
 * U+2028, truncated JSON, a wrong type for every field of every command, huge numbers, 10^4-deep
 * nesting, strings up to 1 MB, __proto__/constructor/prototype keys, answers to unknown and to
 * fire-and-forget ids, valid state commands) into `parley -e examples/extensions/rpc-demo.ts`.
 *
 * The generator, the oracle and the checks live in scripts/fuzz.mjs, which also runs the long
 * variant (10^6 lines, several seeds): `node scripts/fuzz.mjs`. Set FUZZ_SEED to replay a seed
 * here, FUZZ_LINES to change the count.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO, ROOT, spawnParley, type AgentProcess } from "./helpers/spawn.js";

interface FuzzResult {
  seed: number;
  lines: number;
  ms: number;
  exitMs: number;
  exit: { code: number | null; signal: string | null } | undefined;
  stats: {
    bytesIn: number;
    bytesOut: number;
    responses: number;
    uiErrors: number;
    expectedResponses: number;
    expectedUiErrors: number;
    withId: number;
    withoutId: number;
    blank: number;
    garbage: number;
    peakRssKb: number;
    kinds: Record<string, number>;
    events: Record<string, number>;
  };
  stderr: string;
  failures: string[];
}
interface FuzzModule {
  runFuzz(options: { seed: number; lines: number; log?: (m: string) => void; generator?: { unicodeBlank?: boolean } }): Promise<FuzzResult>;
}

const fuzz = (await import(pathToFileURL(join(ROOT, "scripts/fuzz.mjs")).href)) as FuzzModule;
const SEED = Number(process.env["FUZZ_SEED"] ?? Math.floor(Math.random() * 2 ** 32));
const LINES = Number(process.env["FUZZ_LINES"] ?? 100_000);

const agents: AgentProcess[] = [];
afterEach(() => {
  for (const a of agents.splice(0)) a.kill();
});

describe("wire fuzzing", () => {
  it(`${LINES} hostile lines (seed ${SEED}): parley stays up, stdout stays strict JSONL, every line gets exactly its reply, in order`, async () => {
    const result = await fuzz.runFuzz({ seed: SEED, lines: LINES });
    const s = result.stats;
    const replay = `replay: FUZZ_SEED=${SEED} npx vitest run packages/agent/test/fuzz.e2e.test.ts, or node scripts/fuzz.mjs --seed ${SEED} --lines ${LINES}`;
    console.log(
      `fuzz seed ${SEED}: ${LINES} lines in ${result.ms} ms, ${(s.bytesIn / 1e6).toFixed(1)} MB in, ${(s.bytesOut / 1e6).toFixed(1)} MB out, ` +
        `${s.responses} responses (${s.withId} with an id), ${s.uiErrors} ui errors, ${s.blank} blank lines, peak RSS ${(s.peakRssKb / 1024).toFixed(0)} MB; kinds ${JSON.stringify(s.kinds)}`,
    );
    expect(result.failures, `seed ${SEED}; ${replay}`).toEqual([]);
    expect(s.garbage).toBe(0);
    // Counted, not just matched: one response per command / non-JSON line, one ui error per answer.
    expect(s.responses, `seed ${SEED}`).toBe(s.expectedResponses);
    expect(s.uiErrors, `seed ${SEED}`).toBe(s.expectedUiErrors);
    expect(result.exit, `seed ${SEED}`).toEqual({ code: 0, signal: null });
    // The generator really produced every kind of line.
    for (const kind of [
      "valid",
      "mutated",
      "bad-type",
      "random-bytes",
      "truncated",
      "non-object",
      "ui-response",
      "proto",
      "huge",
      "deep",
      "long",
      "blank",
      "byte-mutated",
    ]) {
      expect(s.kinds[kind] ?? 0, `no "${kind}" line in ${LINES}`).toBeGreaterThan(0);
    }
  }, 300_000);

  // JSON whitespace is space, tab, CR and LF only: a line of other "blank" characters is not
  // blank, and must get a parse error like any other non-JSON line.
  it("a line holding only non-JSON whitespace (U+2028, U+2029, NBSP, BOM, VT, FF) gets a parse error", async () => {
    const agent = spawnParley(["-e", DEMO]);
    agents.push(agent);
    const lines = ["\u2028", "\u2029", "\u00a0", "\ufeff", "\u000b", "\u000c", " \u2028 "];
    agent.sendRaw(lines.map((l) => `${l}\n`).join(""));
    const last = await agent.request({ type: "get_state" });
    const parseErrors = agent.records.slice(0, agent.records.indexOf(last)).filter((r) => r.type === "response" && r["command"] === "parse");
    expect(parseErrors).toHaveLength(lines.length);
  });
});
