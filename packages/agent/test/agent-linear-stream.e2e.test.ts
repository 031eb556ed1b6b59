/**
 * Framing cost of a long reply: message_update carries deltas only, so stdout grows linearly with
 * the reply (pi 0.73.1 repeated the whole partial message in every update: quadratic).
 */
import { describe, expect, it } from "vitest";
import { msg, processRegistry, runPrompt, textOf, writeScript } from "./fixtures/agent/harness.js";

const procs = processRegistry();

/** A text of `n` words; the script model streams about one word per delta. */
const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i.toString(36)}`).join(" ");

describe("a long reply streams in linear space", () => {
  it("4,000 deltas: every message_update line is small and their total is linear in the reply", async () => {
    const short = words(1000, "s");
    const long = words(4000, "w");
    const agent = procs.parley(["--model-script", writeScript([short, long])]);
    // Raw stdout lines, byte-exact, beside the parsed records.
    const lines: Buffer[] = [];
    let pending = Buffer.alloc(0);
    agent.child.stdout.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      let nl: number;
      while ((nl = pending.indexOf(0x0a)) !== -1) {
        lines.push(pending.subarray(0, nl));
        pending = pending.subarray(nl + 1);
      }
    });
    const measure = async (prompt: string) => {
      const fromLine = lines.length;
      const records = await runPrompt(agent, prompt, 60_000);
      const updateLines = lines.slice(fromLine).filter((l) => l.includes('"type":"message_update"'));
      const deltas = records.filter((r) => r.type === "message_update" && (r["assistantMessageEvent"] as { type: string }).type === "text_delta");
      const end = msg(records.find((r) => r.type === "message_end" && msg(r).role === "assistant") ?? records[0]!);
      return {
        records,
        updateLines,
        deltas,
        end,
        updateBytes: updateLines.reduce((n, l) => n + l.length, 0),
        totalBytes: lines.slice(fromLine).reduce((n, l) => n + l.length + 1, 0),
      };
    };

    const a = await measure("short");
    const b = await measure("long");

    // One word per delta (give or take the chunker's edges).
    expect(b.deltas.length).toBeGreaterThanOrEqual(3990);
    expect(b.deltas.length).toBeLessThanOrEqual(4010);
    expect(b.deltas.map((r) => (r["assistantMessageEvent"] as { delta: string }).delta).join("")).toBe(long);
    expect(textOf(b.end)).toBe(long);
    expect(b.updateLines.length).toBe(b.records.filter((r) => r.type === "message_update").length);

    // Every update line is small; all of them together are linear in the number of deltas.
    const biggestDelta = Math.max(...b.updateLines.filter((l) => l.includes('"text_delta"')).map((l) => l.length));
    expect(biggestDelta).toBeLessThan(1024);
    // text_end carries the whole text once (as pi's does); every other update line stays under 1 KB.
    const nonEnd = b.updateLines.filter((l) => !l.includes('"text_end"'));
    expect(Math.max(...nonEnd.map((l) => l.length))).toBeLessThan(1024);
    const textEndBytes = b.updateLines.filter((l) => l.includes('"text_end"')).reduce((n, l) => n + l.length, 0);
    expect(textEndBytes).toBeLessThan(long.length * 1.1 + 1024);
    expect(b.updateBytes - textEndBytes).toBeLessThan(400 * b.deltas.length);

    // Quadratic would be ~ sum of partial sizes: n²/2 × average word size. We are far below it.
    const quadratic = (b.deltas.length * long.length) / 2;
    expect(b.updateBytes).toBeLessThan(quadratic / 20);
    // The whole run (message_end, turn_end and agent_end each carry the reply once more) stays linear too.
    expect(b.totalBytes).toBeLessThan(400 * b.deltas.length + 6 * long.length);

    // 4× the words → about 4× the bytes (quadratic would be 16×).
    const ratio = b.updateBytes / a.updateBytes;
    expect(ratio).toBeGreaterThan(3);
    expect(ratio).toBeLessThan(5.5);
  });
});
