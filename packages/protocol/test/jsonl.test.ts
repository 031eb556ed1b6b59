import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_LINE_BYTES, JsonlLineSplitter, attachJsonlReader, readJsonlLines, serializeJsonLine, type JsonlReaderOptions } from "../src/jsonl.js";

type Event = { line: string } | { overflow: number };

/** Run chunks through a splitter, recording lines and overflow reports in one ordered list. */
function split(chunks: Array<Uint8Array | string>, options: JsonlReaderOptions = {}): Event[] {
  const events: Event[] = [];
  const splitter = new JsonlLineSplitter((line) => events.push({ line }), {
    ...options,
    onOverflow: (info) => {
      expect(info.maxLineBytes).toBe(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
      events.push({ overflow: info.bytes });
    },
  });
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return events;
}

function lines(chunks: Array<Uint8Array | string>, options?: JsonlReaderOptions): string[] {
  return split(chunks, options).map((e) => {
    if (!("line" in e)) throw new Error(`unexpected overflow ${JSON.stringify(e)}`);
    return e.line;
  });
}

const bytes = (s: string): Buffer => Buffer.from(s, "utf8");

/** Every single byte as its own chunk. */
const byteByByte = (s: string): Uint8Array[] => [...bytes(s)].map((b) => Uint8Array.of(b));

describe("JsonlLineSplitter", () => {
  it("splits on LF", () => {
    expect(lines([bytes('{"a":1}\n{"b":2}\n')])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it("strips a CR before LF (CRLF input)", () => {
    expect(lines([bytes("one\r\ntwo\r\n")])).toEqual(["one", "two"]);
  });

  it("strips only one CR", () => {
    expect(lines([bytes("one\r\r\n")])).toEqual(["one\r"]);
  });

  it("keeps a CR in the middle of a line", () => {
    expect(lines([bytes("a\rb\n\rc\n")])).toEqual(["a\rb", "\rc"]);
  });

  it("keeps U+2028 and U+2029 inside the line", () => {
    expect(lines([bytes("a\u2028b\u2029c\nd\n")])).toEqual(["a\u2028b\u2029c", "d"]);
    expect(lines(byteByByte("a\u2028b\u2029c\n"))).toEqual(["a\u2028b\u2029c"]);
  });

  it("decodes multi-byte UTF-8 split across chunks (emoji byte by byte)", () => {
    const text = "x😀é中\u2028y";
    expect(bytes(text).length).toBeGreaterThan(text.length);
    expect(lines(byteByByte(`${text}\n${text}\n`))).toEqual([text, text]);
  });

  it("handles a CRLF split between chunks", () => {
    expect(lines([bytes("one\r"), bytes("\ntwo\r"), bytes("\n")])).toEqual(["one", "two"]);
  });

  it("tells a CR at the end of a chunk that ends the line from one that belongs to it", () => {
    // The CR before the LF is stripped; a CR followed by anything else is content.
    expect(lines([bytes("a\r"), bytes("\r\n")])).toEqual(["a\r"]);
    expect(lines([bytes("a\r"), bytes("b\n")])).toEqual(["a\rb"]);
    expect(lines([bytes("a"), bytes("\r"), bytes("\n")])).toEqual(["a"]);
    expect(lines([bytes("a"), bytes("\r"), bytes("\r"), bytes("\n")])).toEqual(["a\r"]);
    expect(lines([bytes("\r"), bytes("\n")])).toEqual([""]);
    expect(lines([bytes("a\r"), bytes("\r")])).toEqual(["a\r"]);
  });

  it("decodes an incomplete UTF-8 sequence before a CR split across chunks as one-shot decoding would", () => {
    const raw = Buffer.from([0x61, 0xe2, 0x82, 0x0d, 0x0d, 0x0a]);
    const want = raw.subarray(0, 4).toString("utf8"); // the last CR before the LF is stripped
    for (let cut = 1; cut < raw.length; cut++) {
      expect(lines([raw.subarray(0, cut), raw.subarray(cut)])).toEqual([want]);
    }
  });

  it("delivers a line pushed one byte at a time (a deep rope of pieces) that parses back", () => {
    const record = { type: "big", text: "é😀".repeat(20_000) };
    const [line] = lines(byteByByte(serializeJsonLine(record)));
    expect(JSON.parse(line!)).toEqual(record);
  });

  it("delivers a final line without LF", () => {
    expect(lines([bytes("a\nb")])).toEqual(["a", "b"]);
    expect(lines([bytes("a\nb\r")])).toEqual(["a", "b"]);
  });

  it("does not deliver an empty final line (nothing, or only a CR, after the last LF)", () => {
    expect(lines([bytes("a\n")])).toEqual(["a"]);
    expect(lines([bytes("a\n\r")])).toEqual(["a"]);
    expect(lines([])).toEqual([]);
  });

  it("delivers blank lines", () => {
    expect(lines([bytes("\n\r\na\n\n")])).toEqual(["", "", "a", ""]);
  });

  it("accepts string chunks, including a surrogate pair split between two strings", () => {
    const emoji = "😀";
    expect(lines(["a\u2028", "b\nc", emoji[0]!, emoji[1]!, "\n"])).toEqual(["a\u2028b", `c${emoji}`]);
  });

  it("accepts string and byte chunks mixed", () => {
    const e = bytes("é");
    expect(lines(["x", e.subarray(0, 1), e.subarray(1), "\ny"])).toEqual(["xé", "y"]);
  });

  it("accepts a Uint8Array view with a byte offset", () => {
    const backing = bytes("XXXhello\nworldYYY");
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 3, 11);
    expect(lines([view])).toEqual(["hello", "world"]);
  });

  it("is not affected when the caller reuses its chunk buffer", () => {
    const events: string[] = [];
    const splitter = new JsonlLineSplitter((l) => events.push(l));
    const buf = Buffer.from("abc");
    splitter.push(buf);
    buf.write("xyz");
    splitter.push(Buffer.from("\n"));
    expect(events).toEqual(["abc"]);
  });

  it("rejects an invalid maxLineBytes", () => {
    expect(() => new JsonlLineSplitter(() => {}, { maxLineBytes: -1 })).toThrow(RangeError);
    expect(() => new JsonlLineSplitter(() => {}, { maxLineBytes: Number.NaN })).toThrow(RangeError);
  });

  describe("overflow", () => {
    it("reports a too-long line once with its true size, and the next line still arrives", () => {
      const long = "x".repeat(100);
      expect(split([bytes(`ok\n${long}\nnext\n`)], { maxLineBytes: 10 })).toEqual([{ line: "ok" }, { overflow: 100 }, { line: "next" }]);
    });

    it("reports the size in bytes, not characters", () => {
      expect(split([bytes("😀😀😀\n")], { maxLineBytes: 11 })).toEqual([{ overflow: 12 }]);
    });

    it("handles the LF arriving in a later chunk", () => {
      const chunks = [bytes("a\nxxxx"), bytes("xxxx"), bytes("xxxx"), bytes("xx\r"), bytes("\nb\n")];
      expect(split(chunks, { maxLineBytes: 5 })).toEqual([{ line: "a" }, { overflow: 14 }, { line: "b" }]);
    });

    it("counts bytes byte by byte", () => {
      expect(split(byteByByte("0123456789\nabc\n"), { maxLineBytes: 3 })).toEqual([{ overflow: 10 }, { line: "abc" }]);
    });

    it("accepts a line exactly maxLineBytes long (CR of CRLF not counted)", () => {
      expect(split([bytes("12345\n123456\n")], { maxLineBytes: 5 })).toEqual([{ line: "12345" }, { overflow: 6 }]);
      expect(split(byteByByte("12345\r\n123456\r\n"), { maxLineBytes: 5 })).toEqual([{ line: "12345" }, { overflow: 6 }]);
      expect(split([bytes("12345\r"), bytes("\n")], { maxLineBytes: 5 })).toEqual([{ line: "12345" }]);
      // The same within one chunk (the splitter's fast path for lines that start and end in a chunk).
      expect(split([bytes("12345\r\n123456\r\n\r\n")], { maxLineBytes: 5 })).toEqual([{ line: "12345" }, { overflow: 6 }, { line: "" }]);
    });

    it("reports a too-long final line without LF", () => {
      expect(split([bytes("ok\n"), bytes("xxxxxxxx")], { maxLineBytes: 4 })).toEqual([{ line: "ok" }, { overflow: 8 }]);
    });

    it("with maxLineBytes 0 only blank lines pass", () => {
      expect(split([bytes("\na\n\r\n")], { maxLineBytes: 0 })).toEqual([{ line: "" }, { overflow: 1 }, { line: "" }]);
    });
  });

  describe("large lines", () => {
    const MiB = 1024 * 1024;
    const CHUNK = 64 * 1024;
    const SIZE = 64 * MiB;

    it("delivers a 64 MiB line pushed in 64 KiB chunks intact", () => {
      const received: string[] = [];
      const splitter = new JsonlLineSplitter((l) => received.push(l));
      // One reused chunk buffer: also proves the splitter copies what it keeps.
      const chunk = Buffer.alloc(CHUNK, "x");
      for (let offset = 0; offset < SIZE; offset += CHUNK) {
        chunk.fill("x");
        if (offset === 0) chunk[0] = "{".charCodeAt(0);
        if (offset + CHUNK === SIZE) chunk[CHUNK - 1] = "}".charCodeAt(0);
        splitter.push(chunk);
      }
      splitter.push("\nafter\n");
      splitter.end();
      expect(received).toHaveLength(2);
      const line = received[0]!;
      expect(line.length).toBe(SIZE);
      expect(line[0]).toBe("{");
      expect(line[1]).toBe("x");
      expect(line[SIZE - 2]).toBe("x");
      expect(line[SIZE - 1]).toBe("}");
      expect(received[1]).toBe("after");
    });

    it("reports a 64 MiB line over a 1 MiB limit as overflow without buffering it", () => {
      const received: string[] = [];
      const overflows: number[] = [];
      const splitter = new JsonlLineSplitter((l) => received.push(l), {
        maxLineBytes: MiB,
        onOverflow: (info) => overflows.push(info.bytes),
      });
      const chunk = Buffer.alloc(CHUNK, "x");
      const baseline = process.memoryUsage().arrayBuffers;
      let peak = baseline;
      for (let offset = 0; offset < SIZE; offset += CHUNK) {
        splitter.push(chunk);
        if ((offset / CHUNK) % 16 === 0) peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      }
      splitter.push("\r\nnext\n");
      splitter.end();
      expect(peak - baseline).toBeLessThan(16 * MiB);
      expect(overflows).toEqual([SIZE]);
      expect(received).toEqual(["next"]);
    });
  });
});

describe("serializeJsonLine", () => {
  it("is JSON.stringify plus LF", () => {
    expect(serializeJsonLine({ a: [1, "two", null] })).toBe('{"a":[1,"two",null]}\n');
    expect(serializeJsonLine("line\nbreak\r")).toBe('"line\\nbreak\\r"\n');
  });

  it("leaves U+2028/U+2029 raw, and the record round-trips as ONE line", () => {
    const record = { type: "text_delta", delta: "a\u2028b\u2029c\rd\ne😀" };
    const text = serializeJsonLine(record);
    expect(text).toContain("\u2028");
    expect(text).toContain("\u2029");
    expect(text.indexOf("\n")).toBe(text.length - 1);
    const got = lines(byteByByte(text + text));
    expect(got).toHaveLength(2);
    expect(got.map((l) => JSON.parse(l))).toEqual([record, record]);
  });

  it("throws a TypeError naming the problem", () => {
    expect(() => serializeJsonLine(undefined)).toThrow(/undefined/);
    expect(() => serializeJsonLine(() => 1)).toThrow(/function/);
    expect(() => serializeJsonLine(Symbol("s"))).toThrow(/symbol/);
    expect(() => serializeJsonLine({ toJSON: () => undefined })).toThrow(/toJSON/);
    expect(() => serializeJsonLine({ n: 1n })).toThrow(/BigInt/);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(() => serializeJsonLine(circular)).toThrow(/circular/i);
    for (const bad of [undefined, () => 1, 1n, circular]) {
      expect(() => serializeJsonLine(bad)).toThrow(TypeError);
    }
  });
});

describe("attachJsonlReader", () => {
  it("reads lines from a PassThrough and calls onEnd after the final line", async () => {
    const stream = new PassThrough();
    const events: string[] = [];
    const ended = new Promise<void>((resolve) => {
      attachJsonlReader(stream, (line) => events.push(line), {
        onEnd: () => {
          events.push("<end>");
          resolve();
        },
      });
    });
    const emoji = bytes("😀");
    stream.write('{"a":1}\r\n{"b":"');
    stream.write(emoji.subarray(0, 2));
    stream.write(emoji.subarray(2));
    stream.write('\u2028"}\nlast');
    stream.end();
    await ended;
    expect(events).toEqual(['{"a":1}', '{"b":"😀\u2028"}', "last", "<end>"]);
  });

  it("works with string chunks (setEncoding) and reports overflow", async () => {
    const stream = new PassThrough();
    stream.setEncoding("utf8");
    const events: Event[] = [];
    await new Promise<void>((resolve) => {
      attachJsonlReader(stream, (line) => events.push({ line }), {
        maxLineBytes: 5, // "é\u2028" is 2 + 3 bytes
        onOverflow: (info) => events.push({ overflow: info.bytes }),
        onEnd: resolve,
      });
      stream.end("é\u2028\ntoo long\nok\n");
    });
    expect(events).toEqual([{ line: "é\u2028" }, { overflow: 8 }, { line: "ok" }]);
  });

  it("stops delivering after detach", async () => {
    const stream = new PassThrough();
    const got: string[] = [];
    let ended = false;
    const detach = attachJsonlReader(stream, (line) => got.push(line), { onEnd: () => (ended = true) });
    stream.write("a\n");
    await new Promise((r) => setImmediate(r));
    detach();
    stream.resume(); // keep it flowing with no data listener
    stream.end("b\n");
    await new Promise<void>((r) => stream.on("end", () => r()));
    expect(got).toEqual(["a"]);
    expect(ended).toBe(false);
  });
});

describe("readJsonlLines", () => {
  it("iterates lines over Readable.from", async () => {
    const emoji = bytes("😀");
    const source = Readable.from([bytes("one\r\ntw"), bytes("o\u2029"), emoji.subarray(0, 1), emoji.subarray(1), "\n\nlast"]);
    const got: string[] = [];
    for await (const line of readJsonlLines(source)) got.push(line);
    expect(got).toEqual(["one", "two\u2029😀", "", "last"]);
  });

  it("reports overflow in input order relative to yielded lines", async () => {
    const events: Event[] = [];
    const source = Readable.from([bytes("a\nxxxxxxxx\nb\nyyyyyy"), bytes("yy\nc")]);
    for await (const line of readJsonlLines(source, {
      maxLineBytes: 3,
      onOverflow: (info) => events.push({ overflow: info.bytes }),
    })) {
      events.push({ line });
    }
    expect(events).toEqual([{ line: "a" }, { overflow: 8 }, { line: "b" }, { overflow: 8 }, { line: "c" }]);
  });

  it("stops reading the source when the consumer breaks early", async () => {
    const stream = Readable.from(["a\nb\nc\n"]);
    for await (const line of readJsonlLines(stream)) {
      expect(line).toBe("a");
      break;
    }
    expect(stream.destroyed).toBe(true);
  });
});
