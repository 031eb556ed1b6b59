import fc from "fast-check";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- the bench is plain JavaScript (ES module) without type declarations
import { LineSplitter } from "../lib.mjs";

type Splitter = { push(chunk: Buffer): void };
const Splitter = LineSplitter as new (onLine: (line: string, bytes: number) => void, onLineEnd?: (head: string) => void) => Splitter;

describe("the bench client's line splitter", () => {
  it("reports each line's whole size in bytes, however the stream is cut into chunks", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" }).map((s) => s.replaceAll("\n", " "))), fc.array(fc.nat(), { maxLength: 20 }), (lines, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(""), "utf8");
        const seen: [string, number][] = [];
        const splitter = new Splitter((line, size) => seen.push([line, size]));
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const at of [...points, bytes.length]) {
          splitter.push(bytes.subarray(from, at));
          from = at;
        }
        expect(seen).toEqual(lines.map((l) => [Buffer.from(l, "utf8").toString("utf8"), Buffer.byteLength(l, "utf8") + 1]));
      }),
    );
  });

  it("tells each line's end first, with its first 200 bytes, however the stream is cut", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme-ascii", maxLength: 500 }).map((s) => s.replaceAll("\n", " "))),
        fc.array(fc.nat(), { maxLength: 20 }),
        (lines, cuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(""), "utf8");
          const seen: string[] = [];
          const splitter = new Splitter(
            (line) => seen.push(`line:${line}`),
            (head) => seen.push(`end:${head}`),
          );
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          let from = 0;
          for (const at of [...points, bytes.length]) {
            splitter.push(bytes.subarray(from, at));
            from = at;
          }
          expect(seen).toEqual(lines.flatMap((l) => [`end:${l.slice(0, 200)}`, `line:${l}`]));
        },
      ),
    );
  });
});
