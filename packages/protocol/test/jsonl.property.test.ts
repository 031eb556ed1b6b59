import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JsonlLineSplitter, serializeJsonLine } from "../src/jsonl.js";

type Event = { line: string } | { overflow: number };

const NUM_RUNS = 300;

/** Characters that trip up naive line readers or chunk decoders. */
const trickyString = fc.string({
  unit: fc.constantFrom("a", "Z", " ", "\r", "\n", "\r\n", "\u2028", "\u2029", "😀", "é", "中", '"', "\\", "\u0000"),
  maxLength: 40,
});

/** A record as it exists after a JSON round trip (e.g. -0 becomes 0), so equality is exact. */
const record = fc
  .oneof(fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }), trickyString, fc.record({ type: fc.constant("text_delta"), delta: trickyString }))
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** Split a byte array at arbitrary points (inside multi-byte characters too). */
function chunkBytes(data: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => (data.length === 0 ? 0 : c % (data.length + 1))))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let prev = 0;
  for (const p of [...points, data.length]) {
    chunks.push(data.subarray(prev, p)); // empty chunks included on purpose
    prev = p;
  }
  return chunks;
}

/** Split a string at arbitrary UTF-16 indices (inside surrogate pairs too). */
function chunkString(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let prev = 0;
  for (const p of [...points, text.length]) {
    chunks.push(text.slice(prev, p));
    prev = p;
  }
  return chunks;
}

/** With reuseBuffer, every byte chunk is pushed from one scratch buffer that is scribbled over
 * right after push() returns: the splitter must not keep any chunk it was given. */
function run(chunks: Array<Uint8Array | string>, maxLineBytes?: number, reuseBuffer = false): Event[] {
  const events: Event[] = [];
  const splitter = new JsonlLineSplitter((line) => events.push({ line }), {
    maxLineBytes,
    onOverflow: (info) => events.push({ overflow: info.bytes }),
  });
  const scratch = Buffer.alloc(64 * 1024);
  for (const c of chunks) {
    if (!reuseBuffer || typeof c === "string") {
      splitter.push(c);
      continue;
    }
    const view = scratch.subarray(0, c.length);
    view.set(c);
    splitter.push(view);
    view.fill(0x41);
  }
  splitter.end();
  return events;
}

const cuts = fc.array(fc.nat(), { maxLength: 30 });

describe("JsonlLineSplitter properties", () => {
  it("any byte chunking of serialized records yields the same lines, each parsing back to its record", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 15 }), cuts, fc.boolean(), fc.boolean(), (records, cutPoints, crlf, reuse) => {
        const serialized = records.map((r) => serializeJsonLine(r));
        const text = serialized.map((s) => (crlf ? s.replace(/\n$/, "\r\n") : s)).join("");
        // A caller that reuses its buffer must get the same lines as one that hands over fresh chunks.
        const events = run(chunkBytes(Buffer.from(text, "utf8"), cutPoints), undefined, reuse);
        expect(events).toEqual(serialized.map((s) => ({ line: s.slice(0, -1) })));
        expect(events.map((e) => JSON.parse((e as { line: string }).line))).toEqual(records);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("CRLF framing yields exactly the same lines as LF framing", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 15 }), cuts, cuts, (records, cutsA, cutsB) => {
        const lf = records.map((r) => serializeJsonLine(r)).join("");
        const crlf = lf.replace(/\n/g, "\r\n"); // safe: serialized JSON has no raw LF inside
        expect(run(chunkBytes(Buffer.from(crlf, "utf8"), cutsB))).toEqual(run(chunkBytes(Buffer.from(lf, "utf8"), cutsA)));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("any string chunking (split surrogate pairs included) yields the same lines", () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 15 }), cuts, (records, cutPoints) => {
        const serialized = records.map((r) => serializeJsonLine(r));
        const events = run(chunkString(serialized.join(""), cutPoints));
        expect(events).toEqual(serialized.map((s) => ({ line: s.slice(0, -1) })));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("with any limit, lines within it arrive and longer ones are reported, in input order", () => {
    fc.assert(
      fc.property(
        fc.array(record, { maxLength: 15 }),
        fc.nat({ max: 120 }),
        cuts,
        fc.boolean(),
        fc.boolean(),
        (records, limit, cutPoints, crlf, dropFinalLf) => {
          const lines = records.map((r) => serializeJsonLine(r).slice(0, -1));
          let text = lines.map((l) => l + (crlf ? "\r\n" : "\n")).join("");
          if (dropFinalLf) text = text.replace(/\r?\n$/, ""); // final unterminated line
          const expected: Event[] = lines.map((line) => {
            const size = Buffer.byteLength(line, "utf8");
            return size <= limit ? { line } : { overflow: size };
          });
          expect(run(chunkBytes(Buffer.from(text, "utf8"), cutPoints), limit)).toEqual(expected);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it("arbitrary bytes: every LF-terminated segment is one event (line or overflow)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat({ max: 64 }), cuts, (data, limit, cutPoints) => {
        const buf = Buffer.from(data);
        const segments: Buffer[] = [];
        let start = 0;
        for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, start)) {
          segments.push(buf.subarray(start, i));
          start = i + 1;
        }
        const tail = buf.subarray(start);
        const expected: Event[] = [];
        const add = (seg: Buffer, final: boolean): void => {
          const content = seg.length > 0 && seg[seg.length - 1] === 0x0d ? seg.subarray(0, -1) : seg;
          if (final && content.length === 0) return;
          expected.push(content.length <= limit ? { line: content.toString("utf8") } : { overflow: content.length });
        };
        for (const seg of segments) add(seg, false);
        add(tail, true);
        expect(run(chunkBytes(buf, cutPoints), limit)).toEqual(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });
  it("bytes rich in UTF-8 lead, continuation and invalid bytes and CRs decode as one-shot toString would, under any chunking", () => {
    const byte = fc.oneof(
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom(0x0a, 0x0d, 0x0d, 0xc2, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xed, 0xa0, 0xc0, 0xff, 0x61),
    );
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 300 }), cuts, fc.boolean(), (bytes, cutPoints, reuse) => {
        const buf = Buffer.from(bytes);
        const expected: Event[] = [];
        const segments = buf.toString("latin1").split("\n");
        segments.forEach((seg, i) => {
          const raw = Buffer.from(seg, "latin1");
          const content = raw.length > 0 && raw[raw.length - 1] === 0x0d ? raw.subarray(0, -1) : raw;
          if (i === segments.length - 1 && content.length === 0) return;
          expected.push({ line: content.toString("utf8") });
        });
        expect(run(chunkBytes(buf, cutPoints), undefined, reuse)).toEqual(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
