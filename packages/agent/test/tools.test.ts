import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type AgentToolResult,
  allToolNames,
  createAllToolDefinitions,
  createBashTool,
  createBashToolDefinition,
  createCodingTools,
  createEditTool,
  createEditToolDefinition,
  createFindTool,
  createGrepTool,
  createLsTool,
  createReadOnlyTools,
  createReadTool,
  createWriteTool,
  DEFAULT_MAX_BYTES,
  formatSize,
  truncateHead,
  truncateLine,
  truncateTail,
  withFileMutationQueue,
} from "../src/tools/index.js";
import { poll } from "./helpers/waits.js";

let dir: string;

function put(rel: string, content: string | Buffer = ""): string {
  const abs = join(dir, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  return abs;
}

const text = (r: AgentToolResult<unknown>): string => {
  const first = r.content[0];
  if (first?.type !== "text") throw new Error("expected text content");
  return first.text;
};

/** True while `pid` exists and is not a zombie (an orphan may linger unreaped in containers). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true; // no procfs: trust kill(0)
  }
}

// 1x1 transparent PNG
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "parley-tools-"));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("truncation helpers", () => {
  it("formats sizes", () => {
    expect([0, 1023, 1024, 1536, 51200, 1048576, 1572864].map(formatSize)).toEqual(["0B", "1023B", "1.0KB", "1.5KB", "50.0KB", "1.0MB", "1.5MB"]);
  });

  it("truncateHead keeps whole leading lines and reports why", () => {
    expect(truncateHead("a\nb\nc\n", { maxLines: 2 })).toMatchObject({ content: "a\nb", truncatedBy: "lines", totalLines: 3, outputLines: 2 });
    // pi 1.6 counts no line in "" and none after a final newline.
    expect(truncateHead("")).toMatchObject({ totalLines: 0, outputLines: 0 });
    expect(truncateTail("a\n")).toMatchObject({ totalLines: 1, outputLines: 1 });
    expect(truncateHead("aaa\nbbb\nccc", { maxBytes: 8 })).toMatchObject({ content: "aaa\nbbb", truncatedBy: "bytes", outputBytes: 7 });
    expect(truncateHead("aaaa\nb", { maxBytes: 3 })).toMatchObject({ content: "", firstLineExceedsLimit: true, outputLines: 0 });
    expect(truncateHead("short")).toMatchObject({ content: "short", truncated: false, truncatedBy: null });
  });

  it("truncateTail keeps trailing lines, or the tail of one huge last line", () => {
    expect(truncateTail("a\nb\nc", { maxLines: 2 })).toMatchObject({ content: "b\nc", truncatedBy: "lines" });
    expect(truncateTail("aaa\nbébébé", { maxBytes: 4 })).toMatchObject({ content: "bé", lastLinePartial: true, outputBytes: 3 });
  });

  it("truncateLine cuts long lines with a marker", () => {
    expect(truncateLine("abc", 2)).toEqual({ text: "ab... [truncated]", wasTruncated: true });
    expect(truncateLine("abc")).toEqual({ text: "abc", wasTruncated: false });
  });
});

describe("read", () => {
  it("returns file text unchanged (no line numbers), details undefined, the text as structured content (a script's value)", async () => {
    put("a.txt", "line1\nline2\nline3\n");
    const r = await createReadTool(dir).execute("id", { path: "a.txt" });
    expect(r).toEqual({ content: [{ type: "text", text: "line1\nline2\nline3\n" }], details: undefined, structuredContent: "line1\nline2\nline3\n" });
  });

  it("pages with offset/limit and tells the model how to continue", async () => {
    put("a.txt", "line1\nline2\nline3\n");
    const tool = createReadTool(dir);
    expect(text(await tool.execute("id", { path: "a.txt", offset: 2, limit: 1 }))).toBe("line2\n\n[2 more lines in file. Use offset=3 to continue.]");
    expect(text(await tool.execute("id", { path: "a.txt", offset: 2 }))).toBe("line2\nline3\n");
    await expect(tool.execute("id", { path: "a.txt", offset: 10 })).rejects.toThrow("Offset 10 is beyond end of file (4 lines total)");
  });

  it("truncates at 2000 lines with a continuation notice and truncation details", async () => {
    put("big.txt", Array.from({ length: 2500 }, (_, i) => `L${i + 1}`).join("\n"));
    const r = await createReadTool(dir).execute("id", { path: "big.txt" });
    expect(text(r).endsWith("L2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")).toBe(true);
    expect(r.details?.truncation).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 2500, outputLines: 2000 });
  });

  it("truncates at 50KB and explains an oversized first line", async () => {
    put("wide.txt", Array.from({ length: 100 }, () => "x".repeat(1000)).join("\n"));
    put("one.txt", `${"y".repeat(60000)}\nsecond\n`);
    const tool = createReadTool(dir);
    expect(text(await tool.execute("id", { path: "wide.txt" }))).toMatch(/\n\n\[Showing lines 1-51 of 100 \(50\.0KB limit\)\. Use offset=52 to continue\.\]$/);
    expect(text(await tool.execute("id", { path: "one.txt" }))).toBe("[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' one.txt | head -c 51200]");
  });

  it("returns images as attachments, sniffing content not extensions", async () => {
    put("pic.png", PNG);
    put("fake.png", "not an image");
    const tool = createReadTool(dir);
    expect(await tool.execute("id", { path: "pic.png" })).toEqual({
      content: [
        { type: "text", text: "Read image file [image/png]" },
        { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
      ],
      details: undefined,
      structuredContent: { type: "image", data: PNG.toString("base64"), mimeType: "image/png", note: "Read image file [image/png]" },
    });
    expect(text(await tool.execute("id", { path: "fake.png" }))).toBe("not an image");
  });

  it("resolves @-prefixed, absolute and ~ paths", async () => {
    const abs = put("a.txt", "hi");
    const tool = createReadTool("/");
    expect(text(await tool.execute("id", { path: abs }))).toBe("hi");
    expect(text(await createReadTool(dir).execute("id", { path: "@a.txt" }))).toBe("hi");
    const oldHome = process.env.HOME;
    process.env.HOME = dir;
    try {
      expect(text(await tool.execute("id", { path: "~/a.txt" }))).toBe("hi");
    } finally {
      process.env.HOME = oldHome;
    }
  });

  it("fails clearly for missing files, directories and aborted calls", async () => {
    mkdirSync(join(dir, "sub"));
    const tool = createReadTool(dir);
    await expect(tool.execute("id", { path: "missing.txt" })).rejects.toThrow(`File not found: ${join(dir, "missing.txt")}`);
    await expect(tool.execute("id", { path: "sub" })).rejects.toThrow(/is a directory/);
    const ac = new AbortController();
    ac.abort();
    await expect(tool.execute("id", { path: "sub" }, ac.signal)).rejects.toThrow("Operation aborted");
  });

  // A FIFO blocked the read for ever (and parley's exit with it: Node joins its I/O threads);
  // /dev/zero never ends. Neither is waited on: an error at once, for read and edit alike.
  it("refuses a FIFO and an endless device at once, for read and edit", async () => {
    execFileSync("mkfifo", [join(dir, "pipe")]);
    const refusals = { pipe: /is not a regular file \(a FIFO, a block device or a socket\)/, "/dev/zero": /does not end \(more than 16 MiB read\)/ };
    for (const [path, refusal] of Object.entries(refusals)) {
      await expect(createReadTool(dir).execute("id", { path }), path).rejects.toThrow(refusal);
      await expect(createEditTool(dir).execute("id", { path, edits: [{ oldText: "a", newText: "b" }] }), path).rejects.toThrow(refusal);
    }
  });

  // As pi (fs.readFile): /dev/null is an empty file, and a /proc file that reports size 0 is
  // read to its end.
  it("reads /dev/null as empty and a size-0 /proc file whole", async () => {
    expect(text(await createReadTool(dir).execute("id", { path: "/dev/null" }))).toBe("");
    const status = text(await createReadTool(dir).execute("id", { path: "/proc/self/status" }));
    expect(status).toMatch(/^Name:\t/);
    expect(status).toContain(`\nPid:\t${process.pid}\n`);
  });

  it("uses pluggable operations", async () => {
    const tool = createReadTool(dir, {
      operations: { readFile: async () => Buffer.from("remote"), access: async () => {} },
    });
    expect(text(await tool.execute("id", { path: "anything" }))).toBe("remote");
  });
});

describe("write", () => {
  it("creates parent directories and reports what it wrote", async () => {
    const r = await createWriteTool(dir).execute("id", { path: "deep/er/b.txt", content: "hello\n" });
    expect(r).toEqual({ content: [{ type: "text", text: "Successfully wrote to deep/er/b.txt" }], details: undefined });
    expect(readFileSync(join(dir, "deep/er/b.txt"), "utf8")).toBe("hello\n");
  });

  it("overwrites existing files", async () => {
    put("a.txt", "old");
    await createWriteTool(dir).execute("id", { path: "a.txt", content: "new" });
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("new");
  });

  it("fails clearly when the target is a directory or the parent is a file", async () => {
    mkdirSync(join(dir, "d"));
    put("f", "");
    const tool = createWriteTool(dir);
    await expect(tool.execute("id", { path: "d", content: "x" })).rejects.toThrow(/is a directory/);
    await expect(tool.execute("id", { path: "f/g.txt", content: "x" })).rejects.toThrow(/parent directory/);
  });
});

describe("edit", () => {
  const ten = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

  it("replaces a unique block and returns a numbered diff", async () => {
    put("a.txt", ten);
    const r = await createEditTool(dir).execute("id", { path: "a.txt", edits: [{ oldText: "two", newText: "TWO" }] });
    expect(text(r)).toBe("Successfully replaced 1 block(s) in a.txt.");
    expect(r.details).toEqual({
      diff: "  1 one\n- 2 two\n+ 2 TWO\n  3 three\n  4 four\n  5 five\n  6 six\n    ...",
      patch: "--- a.txt\n+++ a.txt\n@@ -1,6 +1,6 @@\n one\n-two\n+TWO\n three\n four\n five\n six\n",
      firstChangedLine: 2,
    });
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe(ten.replace("two", "TWO"));
  });

  it("applies several disjoint edits against the original content", async () => {
    put("a.txt", ten);
    const r = await createEditTool(dir).execute("id", {
      path: "a.txt",
      edits: [
        { oldText: "ten", newText: "10" },
        { oldText: "one", newText: "1" },
      ],
    });
    expect(text(r)).toBe("Successfully replaced 2 block(s) in a.txt.");
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe(ten.replace("one", "1").replace("ten", "10"));
    expect(r.details?.diff).toMatch(/^- 1 one\n\+ 1 1\n {2}2 two\n[\s\S]*\n-10 ten\n\+10 10$/);
  });

  it("fails clearly on missing, ambiguous, overlapping, empty and no-op edits", async () => {
    put("a.txt", "foo\nfoo\nabcdef\n");
    const tool = createEditTool(dir);
    const edit = (edits: { oldText: string; newText: string }[]) => tool.execute("id", { path: "a.txt", edits });
    await expect(edit([{ oldText: "missing", newText: "x" }])).rejects.toThrow(
      "Could not find the exact text in a.txt. The old text must match exactly including all whitespace and newlines.",
    );
    await expect(edit([{ oldText: "foo", newText: "bar" }])).rejects.toThrow(
      "Found 2 occurrences of the text in a.txt. The text must be unique. Please provide more context to make it unique.",
    );
    await expect(
      edit([
        { oldText: "cde", newText: "y" },
        { oldText: "abc", newText: "x" },
      ]),
    ).rejects.toThrow("edits[1] and edits[0] overlap in a.txt. Merge them into one edit or target disjoint regions.");
    await expect(
      edit([
        { oldText: "abc", newText: "x" },
        { oldText: "nope", newText: "y" },
      ]),
    ).rejects.toThrow("Could not find edits[1] in a.txt.");
    await expect(edit([{ oldText: "", newText: "x" }])).rejects.toThrow("oldText must not be empty in a.txt.");
    await expect(edit([{ oldText: "abcdef", newText: "abcdef" }])).rejects.toThrow(/^No changes made to a\.txt\./);
    await expect(edit([])).rejects.toThrow("edits must contain at least one replacement");
    await expect(tool.execute("id", { path: "nope.txt", edits: [{ oldText: "a", newText: "b" }] })).rejects.toThrow("File not found: nope.txt");
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("foo\nfoo\nabcdef\n");
  });

  it("preserves CRLF line endings and a BOM", async () => {
    put("crlf.txt", "a\r\nb\r\nc\r\n");
    put("bom.txt", "\uFEFFhello world\n");
    const tool = createEditTool(dir);
    await tool.execute("id", { path: "crlf.txt", edits: [{ oldText: "a\nb", newText: "A\nB" }] });
    await tool.execute("id", { path: "bom.txt", edits: [{ oldText: "hello", newText: "bye" }] });
    expect(readFileSync(join(dir, "crlf.txt"), "utf8")).toBe("A\r\nB\r\nc\r\n");
    expect(readFileSync(join(dir, "bom.txt"), "utf8")).toBe("\uFEFFbye world\n");
  });

  it("falls back to whitespace/quote-insensitive matching", async () => {
    put("fz.txt", "say \u201Chi\u201D   \nnext \u2013 line\n");
    await createEditTool(dir).execute("id", { path: "fz.txt", edits: [{ oldText: 'say "hi"\nnext - line', newText: "ok" }] });
    expect(readFileSync(join(dir, "fz.txt"), "utf8")).toBe("ok\n");
  });

  it("a fuzzy match rewrites only the lines it touches: the others keep their bytes (pi 1.6)", async () => {
    const before = "keep \u201Cquotes\u201D  \nx = \u2018a\u2019\nmid\ttab \ny = \u2018b\u2019 \nlast line   \n";
    put("fz2.txt", before);
    const r = await createEditTool(dir).execute("id", {
      path: "fz2.txt",
      edits: [
        { oldText: "x = 'a'", newText: "x = 1" },
        { oldText: "y = 'b'", newText: "y = 2" },
      ],
    });
    expect(readFileSync(join(dir, "fz2.txt"), "utf8")).toBe("keep \u201Cquotes\u201D  \nx = 1\nmid\ttab \ny = 2\nlast line   \n");
    // The diff shows the file's own lines, not their normalised form.
    expect(r.details?.diff).toContain("-2 x = \u2018a\u2019\n+2 x = 1");
    // Two edits on one line are one replacement of that line.
    put("fz3.txt", "a \u2018x\u2019 b \u2018y\u2019  \nrest  \n");
    await createEditTool(dir).execute("id", {
      path: "fz3.txt",
      edits: [
        { oldText: "'x'", newText: "X" },
        { oldText: "'y'", newText: "Y" },
      ],
    });
    expect(readFileSync(join(dir, "fz3.txt"), "utf8")).toBe("a X b Y\nrest  \n");
  });

  it("accepts the legacy {oldText,newText} shape through prepareArguments", () => {
    const def = createEditToolDefinition(dir);
    expect(def.prepareArguments?.({ path: "a", oldText: "x", newText: "y" })).toEqual({
      path: "a",
      edits: [{ oldText: "x", newText: "y" }],
    });
  });

  it("serialises concurrent edits of one file so none is lost", async () => {
    put("c.txt", "a\nb\nc\nd\n");
    const tool = createEditTool(dir);
    await Promise.all(["a", "b", "c", "d"].map((l) => tool.execute("id", { path: "c.txt", edits: [{ oldText: `${l}\n`, newText: `${l.toUpperCase()}\n` }] })));
    expect(readFileSync(join(dir, "c.txt"), "utf8")).toBe("A\nB\nC\nD\n");
  });
});

describe("withFileMutationQueue", () => {
  it("runs operations on one path one at a time, in order, surviving failures", async () => {
    const log: string[] = [];
    const file = join(dir, "q.txt");
    const op = (name: string, ms: number, fail = false) =>
      withFileMutationQueue(file, async () => {
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([op("a", 30, true), op("b", 5), op("c", 1)]);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
  });
});

describe("bash", () => {
  it("runs in cwd and merges stdout and stderr", async () => {
    const r = await createBashTool(dir).execute("id", { command: "pwd; echo err >&2" });
    expect(r).toEqual({
      content: [{ type: "text", text: `${dir}\nerr\n` }],
      details: undefined,
      structuredContent: { output: `${dir}\nerr\n`, truncated: false, exit_code: 0, wall_time_seconds: expect.any(Number) },
    });
  });

  it("reports empty output and non-zero exit codes", async () => {
    const tool = createBashTool(dir);
    expect(text(await tool.execute("id", { command: "true" }))).toBe("(no output)");
    // A failed command is an error result with the structured output a codemode script gets (pi 1.6).
    expect(await tool.execute("id", { command: "exit 3" })).toMatchObject({
      content: [{ type: "text", text: "(no output)\n\nCommand exited with code 3" }],
      isError: true,
      structuredContent: { output: "", truncated: false, exit_code: 3 },
    });
    expect(await tool.execute("id", { command: "echo bad; exit 4" })).toMatchObject({
      content: [{ type: "text", text: "bad\n\n\nCommand exited with code 4" }],
      isError: true,
      structuredContent: { output: "bad\n", exit_code: 4 },
    });
  });

  it("gives scripts up to 1 MiB of output: longer output keeps its first and last 512 KiB around a note, with the full output's file", async () => {
    const r = await createBashTool(dir).execute("id", { command: "head -c 1200000 /dev/zero | tr '\\0' 'x'; echo END" });
    const structured = r.structuredContent as { output: string; truncated: boolean; full_output_path?: string };
    expect(structured.truncated).toBe(true);
    expect(structured.full_output_path).toMatch(/parley-bash-[0-9a-f]+\.log$/);
    expect(structured.output).toContain(`\n\n[... ${1200004 - 1024 * 1024} bytes omitted ...]\n\n`);
    expect(structured.output.endsWith("xEND\n")).toBe(true);
    expect(structured.output.length).toBe(1024 * 1024 + `\n\n[... ${1200004 - 1024 * 1024} bytes omitted ...]\n\n`.length);
  });

  it("streams accumulated output through onUpdate", async () => {
    const updates: AgentToolResult<unknown>[] = [];
    await createBashTool(dir).execute("id", { command: "for i in 1 2 3; do echo $i; sleep 0.2; done" }, undefined, (u) => updates.push(u));
    expect(updates[0]).toEqual({ content: [], details: undefined });
    const texts = updates.slice(1).map(text);
    expect(texts).toEqual(["1\n", "1\n2\n", "1\n2\n3\n"]);
  });

  it("kills the whole process group promptly on abort", async () => {
    const ac = new AbortController();
    const updates: string[] = [];
    const started = Date.now();
    const run = createBashTool(dir).execute("id", { command: "sleep 300 & echo $!; sleep 300" }, ac.signal, (u) => {
      if (u.content.length > 0) {
        updates.push(text(u));
        ac.abort();
      }
    });
    await expect(run).rejects.toThrow(/\n\nCommand aborted$/);
    // Well below the 300 s the sleep would take: the abort ended it (generous for a loaded machine).
    expect(Date.now() - started).toBeLessThan(120_000);
    const childPid = Number(updates[0]?.trim());
    expect(childPid).toBeGreaterThan(0);
    // The background sleep dies with the group (the signal is delivered, not awaited).
    await poll(() => !isRunning(childPid), "the background sleep to die with its group");
  });

  it("rejects immediately when already aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(createBashTool(dir).execute("id", { command: "echo x" }, ac.signal)).rejects.toThrow(/^Command aborted$/);
  });

  it("honours the timeout in seconds", async () => {
    const started = Date.now();
    await expect(createBashTool(dir).execute("id", { command: "echo pre; sleep 60", timeout: 0.5 })).rejects.toThrow(
      "pre\n\n\nCommand timed out after 0.5 seconds",
    );
    expect(Date.now() - started).toBeLessThan(30_000); // the timeout, not the 60 s sleep, ended it
  });

  it("keeps the tail of long output and saves the full output to a temp file", async () => {
    const r = await createBashTool(dir).execute("id", { command: "seq 1 3000" });
    const t = text(r);
    expect(t.startsWith("1001\n")).toBe(true);
    expect(t).toMatch(/\n3000\n\n\[Showing lines 1001-3000 of 3000\. Full output: .+\]$/);
    const path = r.details?.fullOutputPath;
    expect(path).toBeDefined();
    expect(t).toContain(path as string);
    expect(readFileSync(path as string, "utf8")).toBe(`${Array.from({ length: 3000 }, (_, i) => i + 1).join("\n")}\n`);
    expect(r.details?.truncation).toMatchObject({ truncatedBy: "lines", totalLines: 3000, outputLines: 2000 });
    rmSync(path as string, { force: true });
  });

  it("shows the tail of a single oversized line", async () => {
    const r = await createBashTool(dir).execute("id", { command: "head -c 60000 /dev/zero | tr '\\0' x" });
    expect(text(r)).toMatch(/^x{51200}\n\n\[Showing last 50\.0KB of line 1 \(line is 58\.6KB\)\. Full output: .+\]$/);
    rmSync(r.details?.fullOutputPath as string, { force: true });
  });

  it("applies commandPrefix and spawnHook, and fails clearly for a missing cwd", async () => {
    const tool = createBashTool(dir, {
      commandPrefix: "export GREETING=hi",
      spawnHook: (ctx) => ({ ...ctx, env: { ...ctx.env, EXTRA: "x" } }),
    });
    expect(text(await tool.execute("id", { command: "echo $GREETING$EXTRA" }))).toBe("hix\n");
    await expect(createBashTool(join(dir, "nope")).execute("id", { command: "true" })).rejects.toThrow(/Working directory does not exist/);
  });

  it("delegates to pluggable operations", async () => {
    const tool = createBashToolDefinition(dir, {
      operations: {
        exec: async (command, _cwd, { onData }) => {
          onData(Buffer.from(`remote:${command}`));
          return { exitCode: 0 };
        },
      },
    });
    expect(text(await tool.execute("id", { command: "ls" }, undefined, undefined, undefined))).toBe("remote:ls");
  });
});

describe("grep", () => {
  beforeEach(() => {
    put("a.txt", "hello\nworld\nhello again\nHELLO caps\n");
    put("src/b.ts", "const hello = 1;\n// foo.bar\nfooXbar\n");
    put("src/deep/c.ts", "l1\nl2\nhello\nl4\nl5\nhello\nl7\n");
    put("bin.dat", "hello\0binary\n");
  });

  it("context as ripgrep streams it (pi 1.6): windows merge, nothing past the end; the limit shows its match's trailing context and is reported only when one more match exists", async () => {
    const tool = createGrepTool(dir);
    expect(text(await tool.execute("id", { pattern: "hello", path: "src/deep/c.ts", context: 2 }))).toBe(
      "c.ts-1- l1\nc.ts-2- l2\nc.ts:3: hello\nc.ts-4- l4\nc.ts-5- l5\nc.ts:6: hello\nc.ts-7- l7",
    );
    // The limit's match keeps its trailing context, where a further match shows as context; that match proves the cut.
    const limited = await tool.execute("id", { pattern: "hello", path: "src/deep/c.ts", context: 3, limit: 1 });
    expect(text(limited)).toBe(
      "c.ts-1- l1\nc.ts-2- l2\nc.ts:3: hello\nc.ts-4- l4\nc.ts-5- l5\nc.ts-6- hello\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]",
    );
    // Exactly `limit` matches: no notice.
    const exact = await tool.execute("id", { pattern: "hello", path: "src/deep/c.ts", limit: 2 });
    expect(text(exact)).toBe("c.ts:3: hello\nc.ts:6: hello");
    expect(exact.details).toBeUndefined();
  });

  it("lists matches as path:line: text relative to the search path", async () => {
    const tool = createGrepTool(dir);
    expect(text(await tool.execute("id", { pattern: "hello" }))).toBe(
      "a.txt:1: hello\na.txt:3: hello again\nsrc/b.ts:1: const hello = 1;\nsrc/deep/c.ts:3: hello\nsrc/deep/c.ts:6: hello",
    );
    expect(text(await tool.execute("id", { pattern: "hello", path: "src/deep" }))).toBe("c.ts:3: hello\nc.ts:6: hello");
    expect(text(await tool.execute("id", { pattern: "HELLO", ignoreCase: true, path: "a.txt" }))).toBe(
      "a.txt:1: hello\na.txt:3: hello again\na.txt:4: HELLO caps",
    );
  });

  it("supports literal, glob, context and limit", async () => {
    const tool = createGrepTool(dir);
    expect(text(await tool.execute("id", { pattern: "foo.bar", literal: true }))).toBe("src/b.ts:2: // foo.bar");
    expect(text(await tool.execute("id", { pattern: "hello", glob: "**/deep/*.ts" }))).toBe("src/deep/c.ts:3: hello\nsrc/deep/c.ts:6: hello");
    expect(text(await tool.execute("id", { pattern: "hello", path: "src/deep/c.ts", context: 1 }))).toBe(
      "c.ts-2- l2\nc.ts:3: hello\nc.ts-4- l4\nc.ts-5- l5\nc.ts:6: hello\nc.ts-7- l7",
    );
    const limited = await tool.execute("id", { pattern: "hello", limit: 2 });
    expect(text(limited)).toBe("a.txt:1: hello\na.txt:3: hello again\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]");
    expect(limited.details).toEqual({ matchLimitReached: 2 });
  });

  it("cuts long lines and says so", async () => {
    put("long.txt", `hello ${"z".repeat(700)}\n`);
    const r = await createGrepTool(dir).execute("id", { pattern: "hello", path: "long.txt" });
    expect(text(r)).toBe(`long.txt:1: hello ${"z".repeat(494)}... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]`);
    expect(r.details).toEqual({ linesTruncated: true });
  });

  it("honours .gitignore inside a git repository only", async () => {
    put(".gitignore", "ignored/\n");
    put("ignored/x.txt", "needle\n");
    const tool = createGrepTool(dir);
    expect(text(await tool.execute("id", { pattern: "needle" }))).toBe("ignored/x.txt:1: needle");
    mkdirSync(join(dir, ".git"));
    expect(text(await tool.execute("id", { pattern: "needle" }))).toBe("No matches found");
  });

  it("fails clearly for bad regexes and paths", async () => {
    const tool = createGrepTool(dir);
    await expect(tool.execute("id", { pattern: "(unclosed" })).rejects.toThrow(/Invalid regex pattern/);
    await expect(tool.execute("id", { pattern: "x", path: "missing" })).rejects.toThrow(`Path not found: ${join(dir, "missing")}`);
  });
});

describe("find", () => {
  beforeEach(() => {
    for (const f of ["a.txt", "b.ts", "src/c.ts", "src/deep/d.ts", "src/deep/e.spec.ts", "ignored/x.ts", "z.log", ".hidden/h.ts", "node_modules/m/i.ts"]) {
      put(f);
    }
    put(".gitignore", "ignored/\n*.log\n");
  });

  it("matches names at any depth, honouring .gitignore and skipping node_modules", async () => {
    const tool = createFindTool(dir);
    expect(text(await tool.execute("id", { pattern: "*.ts" }))).toBe(".hidden/h.ts\nb.ts\nsrc/c.ts\nsrc/deep/d.ts\nsrc/deep/e.spec.ts");
    expect(text(await tool.execute("id", { pattern: "*.log" }))).toBe("No files found matching pattern");
  });

  it("matches path patterns and searches below a given path", async () => {
    const tool = createFindTool(dir);
    expect(text(await tool.execute("id", { pattern: "src/**/*.spec.ts" }))).toBe("src/deep/e.spec.ts");
    expect(text(await tool.execute("id", { pattern: "deep" }))).toBe("src/deep/");
    expect(text(await tool.execute("id", { pattern: "*.ts", path: "src" }))).toBe("c.ts\ndeep/d.ts\ndeep/e.spec.ts");
  });

  it("reports the result limit and missing paths", async () => {
    const tool = createFindTool(dir);
    const r = await tool.execute("id", { pattern: "*.ts", limit: 2 });
    expect(text(r)).toBe(".hidden/h.ts\nb.ts\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]");
    expect(r.details).toEqual({ resultLimitReached: 2 });
    // Exactly `limit` matches is not "more than the limit" (pi 1.6 asks for one past it).
    const exact = await tool.execute("id", { pattern: "*.ts", limit: 5 });
    expect(text(exact)).toBe(".hidden/h.ts\nb.ts\nsrc/c.ts\nsrc/deep/d.ts\nsrc/deep/e.spec.ts");
    expect(exact.details).toBeUndefined();
    await expect(tool.execute("id", { pattern: "*", path: "nope" })).rejects.toThrow(`Path not found: ${join(dir, "nope")}`);
  });
});

describe("ls", () => {
  it("sorts case-insensitively, marks directories, includes dotfiles", async () => {
    put("b.txt");
    put("A.md");
    put(".hidden");
    mkdirSync(join(dir, "sub"));
    symlinkSync(join(dir, "nothing"), join(dir, "dangling"));
    expect(text(await createLsTool(dir).execute("id", {}))).toBe(".hidden\nA.md\nb.txt\nsub/");
  });

  it("reports limits, empty directories and bad paths", async () => {
    for (let i = 0; i < 5; i++) put(`f${i}`);
    mkdirSync(join(dir, "empty"));
    const tool = createLsTool(dir);
    const r = await tool.execute("id", { limit: 3 });
    expect(text(r)).toBe("empty/\nf0\nf1\n\n[3 entries limit reached. Use limit=6 for more]");
    expect(r.details).toEqual({ entryLimitReached: 3 });
    expect(text(await tool.execute("id", { path: "empty" }))).toBe("(empty directory)");
    await expect(tool.execute("id", { path: "f0" })).rejects.toThrow(`Not a directory: ${join(dir, "f0")}`);
    await expect(tool.execute("id", { path: "nope" })).rejects.toThrow(`Path not found: ${join(dir, "nope")}`);
  });

  it("stops at 50KB", async () => {
    for (let i = 0; i < 300; i++) put(`${"n".repeat(200)}${String(i).padStart(3, "0")}`);
    const r = await createLsTool(dir).execute("id", {});
    expect(text(r).endsWith(`\n\n[${formatSize(DEFAULT_MAX_BYTES)} limit reached]`)).toBe(true);
    expect(r.details?.truncation?.truncatedBy).toBe("bytes");
  });
});

describe("tool sets", () => {
  it("exposes pi's bundles and names", () => {
    expect(createCodingTools(dir).map((t) => t.name)).toEqual(["read", "bash", "edit", "write"]);
    expect(createReadOnlyTools(dir).map((t) => t.name)).toEqual(["read", "grep", "find", "ls"]);
    expect(Object.keys(createAllToolDefinitions(dir))).toEqual([...allToolNames]);
    for (const def of Object.values(createAllToolDefinitions(dir))) {
      expect(def.label).toBe(def.name);
      expect(def.description.length).toBeGreaterThan(20);
      expect(def.promptSnippet).toBeTruthy();
    }
  });

  it("definitions ignore the context argument", async () => {
    put("a.txt", "x");
    const defs = createAllToolDefinitions(dir);
    const r = await defs.read.execute("id", { path: "a.txt" }, undefined, undefined, { anything: true });
    expect(text(r)).toBe("x");
  });
});

describe("real git checkout", () => {
  it("grep and find agree with git about ignored files", async () => {
    try {
      execFileSync("git", ["init", "-q"], { cwd: dir });
    } catch {
      return; // git not installed: nothing to compare against
    }
    put(".gitignore", "build/\n*.tmp\n!keep.tmp\n");
    put("build/out.js", "needle\n");
    put("x.tmp", "needle\n");
    put("keep.tmp", "needle\n");
    put("src/a.js", "needle\n");
    expect(existsSync(join(dir, ".git"))).toBe(true);
    expect(text(await createGrepTool(dir).execute("id", { pattern: "needle" }))).toBe("keep.tmp:1: needle\nsrc/a.js:1: needle");
    expect(text(await createFindTool(dir).execute("id", { pattern: "*.*" }))).toBe(".gitignore\nkeep.tmp\nsrc/a.js");
  });
});
