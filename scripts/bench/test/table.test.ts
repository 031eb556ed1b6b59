import { describe, expect, it } from "vitest";
// @ts-expect-error -- the bench is plain JavaScript (ES module) without type declarations
import { buildRows } from "../table.mjs";

interface Row {
  figure: string;
  ratio: string;
  status: string;
}

const startup = (parley: number, pi: number): { startup: object } => ({
  startup: { coldStartMs: { parley, pi, floor: 100 }, idleRssMiB: { parley: 40, pi: 140, floor: 40 } },
});

describe("bench table ratios", () => {
  it("show enough digits to read the way they are judged", () => {
    const rows = (r: object): Row[] => buildRows(r) as Row[];
    const missedByLittle = rows(startup(127, 1241))[0] as Row;
    expect(missedByLittle).toMatchObject({ ratio: "0.102", status: "MISSED" });
    const metByLittle = rows(startup(124, 1241))[0] as Row;
    expect(metByLittle).toMatchObject({ ratio: "0.100", status: "met" });
    const plain = rows(startup(150, 1000))[0] as Row;
    expect(plain).toMatchObject({ ratio: "0.15", status: "MISSED" });
  });

  it("give the start-up with an extension for scale, judged against no target", () => {
    const [, withExtension] = buildRows({
      startup: { ...startup(120, 1200).startup, withExtensionMs: { parley: 480, pi: 1300 } },
    }) as (Row & { floor: string; target: string })[];
    expect(withExtension).toMatchObject({ figure: expect.stringMatching(/with one extension/), ratio: "0.37", floor: "–", target: "", status: "" });
  });
});
