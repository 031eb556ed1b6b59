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

  it("judge the dialog round trip as issue 20 states it: p50 at pi's, p99 within noise of the floor", () => {
    const dialog = (p50: number, p99: number): Row[] =>
      buildRows({
        dialog: {
          n: 2000,
          p50Us: { parley: p50, pi: 80, floor: 70 },
          p99Us: { parley: p99, pi: 5000, floor: 2000 },
          peakRssMiB: { parley: 70, pi: 140, floor: 50 },
        },
      }) as Row[];
    const [p50Row, p99Row, p99VsFloor] = dialog(88, 3900);
    expect(p50Row).toMatchObject({ ratio: "1.10", status: "met" });
    // Against pi, p99 is shown for scale only: pi's own p99 moves several-fold between runs.
    expect(p99Row).toMatchObject({ figure: expect.stringMatching(/p99 \(2,000 confirms\)/), ratio: "0.78", status: "" });
    expect(p99VsFloor).toMatchObject({ figure: expect.stringMatching(/parley vs floor/), ratio: "1.95", status: "met" });
    const [slowerP50, , slowerP99] = dialog(90, 4100);
    expect(slowerP50).toMatchObject({ ratio: "1.13", status: "MISSED" });
    expect(slowerP99).toMatchObject({ ratio: "2.05", status: "MISSED" });
  });
});
