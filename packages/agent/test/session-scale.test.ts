/**
 * What keeps big sessions cheap, asserted without timing: loading reads the file in chunks and
 * still checks every line, an append on a loaded session writes only its own line at the end,
 * a get_entries cursor returns exactly the entries after it, and a record with a long array
 * (get_messages on a big session) is serialised in pieces with exactly JSON.stringify's text.
 */
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Session } from "../src/session/session.js";
import { parseSessionFile, readSessionFile, type SessionWarning } from "../src/session/format.js";
import { jsonLinePieces } from "../src/transport/json-pieces.js";
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
    expect(() => session.entriesSince("nope")).toThrow(/Unknown entry id/);
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
        content: [{ type: "text", text: `${i} \u2028 "quoted" ${"z".repeat(i % 700)}` }],
        gone: undefined,
        fn: () => i,
        when: new Date(Date.UTC(2026, 0, 1)),
        timestamp: i,
      })),
      holes: [undefined, () => 1, 2],
    },
  };

  const all = (iterator: Iterator<string> | undefined): string[] => {
    const pieces: string[] = [];
    for (let next = iterator!.next(); !next.done; next = iterator!.next()) pieces.push(next.value);
    return pieces;
  };

  it("yields exactly serializeJsonLine's text, in pieces of bounded size", () => {
    const pieces = all(jsonLinePieces(record));
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe(serializeJsonLine(record));
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(2 << 20);
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
