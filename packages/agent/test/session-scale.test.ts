/**
 * What keeps big sessions cheap, asserted without timing: loading reads the file in chunks and
 * still checks every line, an append on a loaded session writes only its own line at the end,
 * a get_entries cursor returns exactly the entries after it, and a record with a long array
 * (get_messages on a big session) is serialised in pieces with exactly JSON.stringify's text.
 */
import { afterAll, describe, expect, it } from "vitest";
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Session } from "../src/session/session.js";
import { parseSessionFile, readSessionFile, type SessionWarning } from "../src/session/format.js";
import { jsonLinePieces, recyclePiece, withKnownJson } from "../src/transport/json-pieces.js";
import { serializeJsonLine } from "@parley/protocol/jsonl";
import { sessionText } from "./helpers/session-text.js";

const dir = mkdtempSync(path.join(tmpdir(), "parley-session-scale-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loading a big session", () => {
  it("reads across chunk boundaries (lines longer than a chunk, multi-byte text) exactly as the text parser does", () => {
    const lines = sessionText(dir, 40, 300_000);
    const file = path.join(dir, "long-lines.jsonl");
    writeFileSync(file, `\uFEFF${lines.join("\n")}\n`);
    const fromFile = readSessionFile(file);
    const fromText = parseSessionFile(readFileSync(file, "utf8"), file);
    expect(fromFile.entries).toEqual(fromText.entries);
    expect(fromFile.entries).toHaveLength(40);
    expect(fromFile.header).toEqual(fromText.header);
    expect(fromFile.warnings).toEqual([]);
    expect(JSON.stringify(fromFile.entries[2])).toContain("éé");
  });

  it("reads lines longer than the read buffer, CRLF, blank lines and invalid UTF-8 exactly as the text parser does", () => {
    const lines = sessionText(dir, 12, 50);
    // 2.5 MiB and 5 MiB lines: the buffer doubles (twice) to hold them.
    lines[3] = lines[3]!.replace("x".repeat(50), "x".repeat(2_600_000));
    lines[8] = lines[8]!.replace("y".repeat(50), "é".repeat(2_700_000));
    const cut = lines[5]!.indexOf("q4 ") + 3;
    const bytes = Buffer.concat([
      Buffer.from(`${lines.slice(0, 5).join("\r\n")}\n\n   \n`),
      // An entry whose text holds bytes that are not UTF-8: decoded as U+FFFD, as readFileSync does.
      Buffer.from(lines[5]!.slice(0, cut)),
      Buffer.from([0xff, 0xc3, 0x28]),
      Buffer.from(`${lines[5]!.slice(cut)}\n${lines.slice(6).join("\n")}`),
    ]);
    const file = path.join(dir, "long-crlf-invalid.jsonl");
    writeFileSync(file, bytes);
    const fromFile = readSessionFile(file);
    const fromText = parseSessionFile(readFileSync(file, "utf8"), file);
    expect(fromFile.entries).toEqual(fromText.entries);
    expect(fromFile.entries).toHaveLength(12);
    expect(fromFile.warnings).toEqual([]);
    expect(fromFile.endsWithNewline).toBe(false);
    expect(JSON.stringify(fromFile.entries[4])).toContain("\uFFFD");
  });

  it("walks a cycle of parents (a hand-edited file) to a path that stops before the first entry seen twice", () => {
    const lines = sessionText(dir, 3);
    const entry = (i: number, parentId: string) => ({ ...(JSON.parse(lines[i + 1]!) as object), parentId });
    const file = path.join(dir, "cycle.jsonl");
    writeFileSync(file, `${[lines[0], ...[entry(0, "e0000002"), entry(1, "e0000000"), entry(2, "e0000001")].map((e) => JSON.stringify(e))].join("\n")}\n`);
    const session = Session.open(file);
    expect(session.branch().map((e) => e.id)).toEqual(["e0000000", "e0000001", "e0000002"]);
    expect(session.branch("e0000001").map((e) => e.id)).toEqual(["e0000002", "e0000000", "e0000001"]);
    expect(session.buildContext()).toHaveLength(3);
  });

  it("still checks every line: a corrupt middle line and a torn tail are reported, the rest loads, the file is untouched", () => {
    const lines = sessionText(dir, 3000);
    lines[1500] = `${lines[1500]!.slice(0, 40)}#corrupt`;
    const file = path.join(dir, "corrupt-middle.jsonl");
    const text = `${lines.join("\n")}\n{"type":"message","id":"torn`;
    writeFileSync(file, text);
    const warnings: SessionWarning[] = [];
    const session = Session.open(file, { onWarning: (w) => warnings.push(w) });
    expect(warnings.map((w) => [w.kind, w.line])).toEqual([
      ["invalid_line", 1501],
      ["torn_tail", 3002],
    ]);
    expect(session.entryCount).toBe(2999);
    // The entry after the corrupt one keeps its place: its parent was skipped, so it is a root.
    expect(session.tree()).toHaveLength(2);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(readSessionFile(file).entries).toEqual(parseSessionFile(text, file).entries);
  });
});

describe("messages' own bytes in the file (the first get_messages sends them as they are)", () => {
  /** Lines that are, and are not, in pi's message line shape; every one loads as a whole-line parse would. */
  function mixedLines(): string[] {
    const lines = sessionText(dir, 8, 30);
    const entry = (i: number) => JSON.parse(lines[i]!) as Record<string, unknown>;
    // Spaces between the fields: not pi's shape, parsed whole (no span).
    lines[2] = JSON.stringify(entry(2), null, 1).replaceAll("\n", "");
    // A second "message" key after the first: the prefix matches, the rest is not one value; the last key wins.
    lines[3] = `${lines[3]!.slice(0, -1)},"message":{"role":"user","content":"second","timestamp":3}}`;
    // The message's own JSON spelled unlike JSON.stringify (spaces, escapes): the same value, its own bytes.
    lines[4] = lines[4]!.replace('{"role":"user","content":', '{ "role" : "user" , "content" :').replace("q", "\\u0071");
    // A corrupt message whose line still ends with "}": reported as before.
    lines[5] = `${lines[5]!.slice(0, 90)}#corrupt}`;
    // Non-ASCII text and CRLF.
    lines[6] = lines[6]!.replace("a5 ", "a5 é😀 ");
    lines[7] = `${lines[7]}\r`;
    return lines;
  }

  it("loads the same entries as a whole-line parse, and each span is a JSON text of its message", () => {
    const lines = mixedLines();
    const file = path.join(dir, "mixed-shapes.jsonl");
    const text = `${lines.join("\n")}\n`;
    writeFileSync(file, text);
    const fromFile = readSessionFile(file);
    const fromText = parseSessionFile(text, file);
    expect(fromFile.entries).toEqual(fromText.entries);
    expect(fromFile.warnings).toEqual(fromText.warnings);
    expect(fromFile.warnings.map((w) => [w.kind, w.line])).toEqual([["invalid_line", 6]]);
    expect(Object.keys(fromFile.entries[0]!)).toEqual(["type", "id", "parentId", "timestamp", "message"]);
    const bytes = readFileSync(file);
    const spans = fromFile.messageSpans!;
    const withSpan = fromFile.entries.filter((e) => e.type === "message" && spans.has(e.message));
    // Lines 3, 4 (not pi's shape), 6 (corrupt) and 8 (CRLF) have none.
    expect(withSpan.map((e) => e.id)).toEqual(["e0000000", "e0000003", "e0000005", "e0000007"]);
    for (const e of withSpan) {
      if (e.type !== "message") continue;
      const span = spans.get(e.message)!;
      expect(JSON.parse(bytes.subarray(span.start, span.end).toString("utf8"))).toEqual(e.message);
    }
    expect(fromFile.entries.find((e) => e.id === "e0000002")).toMatchObject({ message: { content: "second" } });
    // Older versions' messages are migrated in memory: their bytes are not theirs.
    const v2 = path.join(dir, "v2.jsonl");
    writeFileSync(v2, text.replace('"version":3', '"version":2'));
    expect(readSessionFile(v2).messageSpans).toBeUndefined();
  });

  it("reads them back only from the file as this session left it", () => {
    const lines = sessionText(dir, 3000, 40);
    const file = path.join(dir, "read-back.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const serialise = (session: Session): string => {
      const json = session.takeMessageJson();
      const messages = json !== undefined ? withKnownJson(session.buildContext(), json) : session.buildContext();
      const pieces = jsonLinePieces({ type: "response", data: { messages } })!;
      const out: Buffer[] = [];
      for (let next = pieces.next(); !next.done; next = pieces.next()) out.push(next.value);
      return Buffer.concat(out).toString("utf8");
    };
    const expected = serializeJsonLine({ type: "response", data: { messages: lines.slice(1).map((l) => JSON.parse(l).message) } });

    // Appended to by this session: its messages' bytes are read back.
    const own = Session.open(file);
    own.setName("x");
    const ownJson = own.takeMessageJson()!;
    expect(ownJson.get(own.buildContext()[2]!)).toBeDefined();
    const again = Session.open(file);
    again.setName("y");
    expect(serialise(again)).toBe(expected);
    // Taken once: the next answer serialises (the same text).
    expect(again.takeMessageJson()).toBeUndefined();
    expect(serialise(again)).toBe(expected);

    // Appended to by another process (or rewritten in place): every message is serialised.
    const behind = Session.open(file);
    const lastId = (JSON.parse(readFileSync(file, "utf8").trim().split("\n").at(-1)!) as { id: string }).id;
    appendFileSync(file, `${JSON.stringify({ type: "custom", id: "zz", parentId: lastId, timestamp: "2026-01-01T00:00:00.000Z", customType: "t" })}\n`);
    const behindJson = behind.takeMessageJson()!;
    expect(behindJson.get(behind.buildContext()[2]!)).toBeUndefined();

    // Another file moved over the path (another inode; same length, other text): every message is serialised.
    const replaced = Session.open(file);
    const other = path.join(dir, "other.jsonl");
    writeFileSync(other, readFileSync(file, "utf8").replaceAll("xxxx", "XXXX").replaceAll("yyyy", "YYYY"));
    renameSync(other, file);
    expect(serialise(replaced)).toBe(expected);
  });
});

describe("appending to a big session", () => {
  it("writes only its own line at the end of the file, leaving every earlier byte as it was", () => {
    const file = path.join(dir, "append.jsonl");
    const before = `${sessionText(dir, 20_000).join("\n")}\n`;
    writeFileSync(file, before);
    const session = Session.open(file);
    const size = statSync(file).size;
    for (let i = 0; i < 50; i++) session.setName(`name ${i}`);
    const after = readFileSync(file, "utf8");
    expect(after.startsWith(before)).toBe(true);
    const added = after.slice(before.length).split("\n").slice(0, -1);
    expect(added).toHaveLength(50);
    expect(added.map((line) => JSON.parse(line).name)).toEqual(Array.from({ length: 50 }, (_, i) => `name ${i}`));
    expect(statSync(file).size).toBe(size + Buffer.byteLength(after.slice(before.length)));
    expect(session.entryCount).toBe(20_050);
    expect(session.name).toBe("name 49");
  });
});

describe("get_entries cursors on a big session", () => {
  it("returns exactly the entries after the cursor, in append order, without copying the rest", () => {
    const file = path.join(dir, "cursor.jsonl");
    writeFileSync(file, `${sessionText(dir, 20_000).join("\n")}\n`);
    const session = Session.open(file);
    const all = session.entries();
    const cursor = all[19_990]!.id;
    const since = session.entriesSince(cursor);
    expect(since.map((e) => e.id)).toEqual(all.slice(19_991).map((e) => e.id));
    // The entries are the session's own (no per-call copies of entries), so a page costs its size.
    expect(since[0]).toBe(session.entry(since[0]!.id));
    expect(session.entriesSince(all.at(-1)!.id)).toEqual([]);
    session.setName("later");
    expect(session.entriesSince(cursor).at(-1)).toMatchObject({ type: "session_info", name: "later" });
    expect(() => session.entriesSince("nope")).toThrow(/Entry not found/);
  });
});

describe("serialising a record with a long array", () => {
  const record = {
    id: "m",
    type: "response",
    command: "get_messages",
    success: true,
    skipped: undefined,
    data: {
      messages: Array.from({ length: 5000 }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        // Multi-byte and astral characters, a lone surrogate, and one element longer than a piece.
        content: [{ type: "text", text: `${i} \u2028 "quoted" é😀\ud800 ${"z".repeat(i % 700)}${i === 2500 ? "😀é".repeat(200_000) : ""}` }],
        gone: undefined,
        fn: () => i,
        when: new Date(Date.UTC(2026, 0, 1)),
        timestamp: i,
      })),
      holes: [undefined, () => 1, 2],
    },
  };

  /** The pieces as text; each must be whole UTF-8 on its own (a piece ends between elements). */
  const all = (iterator: Iterator<Buffer> | undefined): string[] => {
    const pieces: string[] = [];
    for (let next = iterator!.next(); !next.done; next = iterator!.next()) {
      const text = next.value.toString("utf8");
      expect(Buffer.from(text, "utf8").equals(next.value)).toBe(true);
      pieces.push(text);
    }
    return pieces;
  };

  it("yields exactly serializeJsonLine's text, in pieces of bounded size", () => {
    const pieces = all(jsonLinePieces(record));
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe(serializeJsonLine(record));
    expect(Math.max(...pieces.map((p) => Buffer.byteLength(p)))).toBeLessThan(2 << 20);
  });

  it("makes later pieces in the buffers of pieces given back, never in one still held, and ignores any other buffer", () => {
    // ~12 MB in ~12 pieces, every element different, and one element longer than a piece.
    const record = {
      type: "response",
      data: { messages: Array.from({ length: 12_000 }, (_, i) => ({ i, text: `${i}:${"é😀".repeat(i === 6000 ? 400_000 : 160)}` })) },
    };
    const line = serializeJsonLine(record);
    // Given back at once (its bytes copied first, as the OS copies them), each buffer serves again.
    const copies: Buffer[] = [];
    const buffers = new Set<ArrayBufferLike>();
    const pieces = jsonLinePieces(record)!;
    for (let next = pieces.next(); !next.done; next = pieces.next()) {
      copies.push(Buffer.from(next.value));
      buffers.add(next.value.buffer);
      recyclePiece(next.value);
      // A second give-back of the same piece, and buffers that are not pieces', change nothing.
      recyclePiece(next.value);
      recyclePiece(Buffer.allocUnsafeSlow(1 << 20));
      recyclePiece(Buffer.alloc(10));
    }
    expect(Buffer.concat(copies).toString("utf8")).toBe(line);
    expect(copies.length).toBeGreaterThan(8);
    // The element longer than a piece gets a buffer of its own; the other pieces share a few.
    expect(buffers.size).toBeLessThanOrEqual(4);
    // Held (never given back), every piece keeps its bytes while later ones are made.
    const held: Buffer[] = [];
    const again = jsonLinePieces(record)!;
    for (let next = again.next(); !next.done; next = again.next()) held.push(next.value);
    expect(new Set(held.map((p) => p.buffer)).size).toBe(held.length);
    expect(Buffer.concat(held).toString("utf8")).toBe(line);
  });

  it("leaves small records to serializeJsonLine, and throws before yielding anything for a value JSON cannot hold", () => {
    expect(jsonLinePieces({ type: "response", data: { messages: [1, 2, 3] } })).toBeUndefined();
    const bad = { type: "response", data: { messages: Array.from({ length: 2000 }, (_, i) => (i === 1500 ? { n: 1n } : { n: i })) } };
    const pieces = jsonLinePieces(bad);
    expect(() => pieces!.next()).toThrow(/BigInt/);
  });

  it("closes a line as valid JSON, the array cut short, when a value JSON cannot hold comes after a piece went out", () => {
    const big = "x".repeat(4096);
    const messages = Array.from({ length: 2000 }, (_, i) => (i === 1500 ? { n: 1n } : { i, big }));
    const cuts: unknown[] = [];
    const pieces = all(jsonLinePieces({ type: "response", data: { messages }, after: 1 }, (error) => cuts.push(error)));
    expect(pieces.length).toBeGreaterThan(1);
    const line = pieces.join("");
    expect(line.endsWith("}\n")).toBe(true);
    const parsed = JSON.parse(line) as { data: { messages: { i: number }[] } };
    // Every element before the one that failed, none after it.
    expect(parsed.data.messages.map((m) => m.i)).toEqual(Array.from({ length: 1500 }, (_, i) => i));
    expect(String(cuts[0])).toMatch(/BigInt/);
  });
});
