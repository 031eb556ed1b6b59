/**
 * Differential tests: the same inputs through parley's tools and pi 1.6.0's
 * own tool factories (the `pi-newest` devDependency, in this Node) must give
 * the same model-visible text, details and error flag. Temp dirs and
 * temp-file names are normalised.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as parley from "../src/tools/index.js";

type Factory = (cwd: string, options?: any) => { execute: (...args: any[]) => Promise<any>; parameters: unknown; name: string };
type ToolSet = Record<string, Factory>;

let pi: ToolSet & Record<string, any>;
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "parley-diff-"));
  // Keep pi from touching the real ~/.pi while it is imported and used.
  process.env.PI_CODING_AGENT_DIR = join(root, "pi-agent");
  pi = (await import("pi-newest")) as any;
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function fixture(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(dir, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

const FILES: Record<string, string> = {
  "a.txt": "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n",
  "big.txt": Array.from({ length: 2500 }, (_, i) => `L${i + 1}`).join("\n"),
  "wide.txt": Array.from({ length: 100 }, () => "x".repeat(1000)).join("\n"),
  "oneline.txt": `${"y".repeat(60000)}\nsecond\n`,
  "long.txt": `${Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join("\n")}\n`,
  "crlf.txt": "a\r\nb\r\nc\r\n",
  "fz.txt": "x = \u2018a\u2019\ny = 1   \n",
  "dup.txt": "foo\nfoo\n",
  "nine.txt": `${Array.from({ length: 9 }, (_, i) => `l${i + 1}`).join("\n")}\n`,
  "noeol.txt": "a\nb",
};

/** bash's `wall_time_seconds` is timing, not behaviour: checked to be a non-negative number, then a placeholder. */
function withoutWallTime(structured: unknown): unknown {
  if (structured === null || typeof structured !== "object" || !("wall_time_seconds" in structured)) return structured;
  const seconds = (structured as { wall_time_seconds: unknown }).wall_time_seconds;
  expect(typeof seconds === "number" && seconds >= 0, `wall_time_seconds ${String(seconds)}`).toBe(true);
  return { ...structured, wall_time_seconds: "<seconds>" };
}

/**
 * Outcome of one call with paths made comparable: "threw <message>", or "result <json>" with the
 * whole result (content, details, structuredContent, isError): pi 1.6's bash, for one, returns a
 * failed command as an error result rather than throwing, and both must do the same.
 */
async function outcome(factory: Factory, dir: string, params: unknown, options?: unknown): Promise<string> {
  let s: string;
  try {
    const r = await factory(dir, options).execute("id", params);
    s = `result ${JSON.stringify({ content: r.content, details: r.details ?? null, structuredContent: withoutWallTime(r.structuredContent) ?? null, isError: r.isError ?? false })}`;
  } catch (error) {
    s = `threw ${(error as Error).message}`;
  }
  // Bash saves long output to temp files; do not leave them behind.
  for (const m of s.matchAll(/Full output: ([^\]\s"]+)/g)) rmSync(m[1] as string, { force: true });
  return s
    .split(dir)
    .join("<DIR>")
    .replace(/\/[^"\s\]]*(pi|parley)-bash-[0-9a-f]+\.log/g, "<LOG>");
}

/** Run the same calls in two identical fixtures, one per implementation, in order. */
async function compare(tool: string, calls: unknown[], files: Record<string, string> = FILES, options?: unknown) {
  const mineDir = fixture(`${tool}-parley-${Math.random().toString(36).slice(2)}`, files);
  const piDir = fixture(`${tool}-pi-${Math.random().toString(36).slice(2)}`, files);
  const name = `create${tool}Tool`;
  for (const params of calls) {
    const mine = await outcome((parley as unknown as ToolSet)[name] as Factory, mineDir, params, options);
    const theirs = await outcome(pi[name] as Factory, piDir, params, options);
    expect({ params, result: mine }).toEqual({ params, result: theirs });
  }
  return { mineDir, piDir };
}

const stripDescriptions = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema), (key, value) => (key === "description" ? undefined : value));

describe("parley tools vs pi 1.6.0", () => {
  it("argument schemas have the same structure", () => {
    for (const tool of ["Read", "Write", "Edit", "Bash", "Grep", "Find", "Ls"]) {
      const mine = (parley as unknown as ToolSet)[`create${tool}Tool`]!("/tmp");
      const theirs = (pi[`create${tool}Tool`] as Factory)("/tmp");
      expect(mine.name).toBe(theirs.name);
      expect(stripDescriptions(mine.parameters)).toEqual(stripDescriptions(theirs.parameters));
    }
  });

  it("truncation helpers agree", () => {
    const inputs = ["", "a\nb\nc\n", "aaa\nbbb\nccc", "aaaa\nb", "\u00e9\nb", "aaa\nb\u00e9b\u00e9b\u00e9", "aaa\nbbbbbbbb\n", "x".repeat(70000)];
    const opts = [{}, { maxLines: 2 }, { maxBytes: 3 }, { maxBytes: 7 }, { maxLines: 1, maxBytes: 4 }];
    for (const input of inputs) {
      for (const o of opts) {
        expect(parley.truncateHead(input, o)).toEqual(pi.truncateHead(input, o));
        expect(parley.truncateTail(input, o)).toEqual(pi.truncateTail(input, o));
      }
      expect(parley.truncateLine(input, 5)).toEqual(pi.truncateLine(input, 5));
    }
    for (const n of [0, 5, 1023, 1024, 51200, 1048575, 1048576, 5e9]) expect(parley.formatSize(n)).toBe(pi.formatSize(n));
  });

  it("read", async () => {
    await compare("Read", [
      { path: "a.txt" },
      { path: "a.txt", offset: 2, limit: 1 },
      { path: "a.txt", offset: 4 },
      { path: "a.txt", limit: 0 },
      { path: "a.txt", offset: 20 },
      { path: "@a.txt" },
      { path: "big.txt" },
      { path: "big.txt", offset: 100, limit: 10 },
      { path: "big.txt", offset: 400, limit: 2100 },
      { path: "big.txt", offset: 2495, limit: 10 },
      { path: "wide.txt" },
      { path: "oneline.txt" },
      { path: "oneline.txt", offset: 2 },
      { path: "crlf.txt" },
      // Not regular files: a device that ends at once, and procfs files that report size 0.
      { path: "/dev/null" },
      { path: "/proc/version" },
      { path: "/proc/self/cmdline", limit: 0 },
    ]);
  });

  it("write", async () => {
    const { mineDir, piDir } = await compare("Write", [
      { path: "new.txt", content: "hello\n" },
      { path: "a.txt", content: "h\u00e9llo" },
      { path: "deep/er/x.txt", content: "" },
    ]);
    for (const f of ["new.txt", "a.txt", "deep/er/x.txt"]) {
      expect(readFileSync(join(mineDir, f), "utf8")).toBe(readFileSync(join(piDir, f), "utf8"));
    }
  });

  it("edit (results, diffs and resulting files)", async () => {
    const calls = [
      { path: "a.txt", edits: [{ oldText: "two", newText: "TWO" }] },
      { path: "a.txt", edits: [{ oldText: "five\nsix", newText: "5\n6\n6.5" }] },
      {
        path: "a.txt",
        edits: [
          { oldText: "one", newText: "1" },
          { oldText: "ten", newText: "10" },
        ],
      },
      { path: "a.txt", edits: [{ oldText: "missing", newText: "x" }] },
      { path: "a.txt", edits: [{ oldText: "TWO", newText: "TWO" }] },
      {
        path: "a.txt",
        edits: [
          { oldText: "1\n", newText: "x" },
          { oldText: "nope", newText: "y" },
        ],
      },
      { path: "dup.txt", edits: [{ oldText: "foo", newText: "bar" }] },
      {
        path: "dup.txt",
        edits: [
          { oldText: "foo\nfoo", newText: "bar" },
          { oldText: "foo", newText: "baz" },
        ],
      },
      {
        path: "long.txt",
        edits: [
          { oldText: "line 5\n", newText: "" },
          { oldText: "line 30", newText: "LINE 30\nextra" },
        ],
      },
      { path: "long.txt", edits: [{ oldText: "line 40\n", newText: "line 40\nline 41\n" }] },
      { path: "nine.txt", edits: [{ oldText: "l9", newText: "L9" }] },
      { path: "noeol.txt", edits: [{ oldText: "b", newText: "b\n" }] },
      { path: "crlf.txt", edits: [{ oldText: "a\nb", newText: "A\nB" }] },
      { path: "fz.txt", edits: [{ oldText: "x = 'a'", newText: "x = 'b'" }] },
    ];
    const { mineDir, piDir } = await compare("Edit", calls);
    for (const f of Object.keys(FILES)) {
      expect(readFileSync(join(mineDir, f), "utf8")).toBe(readFileSync(join(piDir, f), "utf8"));
    }
  });

  it("edit keeps every byte it does not replace: files of mixed line endings, generated", async () => {
    // Lines with distinct words and each its own ending (LF, CRLF, a rare lone CR, none at the end);
    // an edit replaces a run of whole or partial lines with text of its own lines.
    const ending = fc.constantFrom("\n", "\n", "\r\n", "\r\n", "\r");
    const file = fc.array(fc.tuple(fc.constantFrom("", "  ", "\t"), ending), { minLength: 1, maxLength: 8 });
    const edit = fc.record({
      from: fc.nat(),
      span: fc.nat({ max: 2 }),
      cut: fc.boolean(),
      lines: fc.array(fc.constantFrom("new", "", "x y"), { maxLength: 3 }),
    });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(file, edit, fc.boolean(), async (lines, e, endless) => {
        const words = lines.map(([indent], i) => `${indent}w${i}`);
        let text = lines.map(([, end], i) => `${words[i]}${end}`).join("");
        if (endless) text = text.replace(/(\r\n|\r|\n)$/, "");
        const from = e.from % words.length;
        const to = Math.min(words.length - 1, from + e.span);
        const oldText = words
          .slice(from, to + 1)
          .join("\n")
          .slice(e.cut ? 1 : 0);
        const newText = e.lines.join("\n");
        const files = { "m.txt": text };
        const name = `mixed-${run++}`;
        const mine = fixture(`${name}-parley`, files);
        const theirs = fixture(`${name}-pi`, files);
        const params = { path: "m.txt", edits: [{ oldText, newText }] };
        const a = await outcome(parley.createEditTool as Factory, mine, params);
        const b = await outcome(pi.createEditTool as Factory, theirs, params);
        expect({ text, params, result: a }).toEqual({ text, params, result: b });
        expect(readFileSync(join(mine, "m.txt"), "latin1")).toBe(readFileSync(join(theirs, "m.txt"), "latin1"));
      }),
      { numRuns: 150 },
    );
  });

  it("bash", async () => {
    await compare("Bash", [
      { command: "echo hi; pwd" },
      { command: "echo out; echo err >&2" },
      { command: "true" },
      { command: "exit 3" },
      { command: "echo bad; exit 3" },
      { command: "printf 'no newline'" },
      { command: "seq 1 3000" },
      { command: "seq 1 3000; exit 2" },
      { command: "head -c 60000 /dev/zero | tr '\\0' 'x'" },
      { command: "for i in $(seq 1 100); do printf 'x%.0s' $(seq 1 1000); echo; done" },
      { command: "printf '\\xff\\xfe bin\\n'" },
      { command: "echo pre; sleep 5", timeout: 1 },
    ]);
  });

  it("bash streaming updates", async () => {
    const collect = async (factory: Factory) => {
      const updates: unknown[] = [];
      await factory(root).execute("id", { command: "for i in 1 2 3; do echo $i; sleep 0.25; done" }, undefined, (u: unknown) => updates.push(u));
      return updates;
    };
    expect(await collect(parley.createBashTool as Factory)).toEqual(await collect(pi.createBashTool as Factory));
  });

  it("ls", async () => {
    const files = { ...FILES, "B.md": "", ".hidden": "", _u: "", "10": "", "9": "", "sub/x": "" };
    await compare("Ls", [{}, { limit: 3 }, { path: "sub" }, { path: "a.txt" }, { path: "nope" }], files);
  });

  it("find output formatting (same pluggable glob backend)", async () => {
    const dir = fixture("find-ops", { "a.ts": "", "src/b.ts": "" });
    const lists: Record<string, string[]> = {
      none: [],
      some: [join(dir, "src/b.ts"), join(dir, "a.ts")],
      many: Array.from({ length: 1000 }, (_, i) => join(dir, `${"m".repeat(100)}${i}`)),
      two: ["x", "y"].map((n) => join(dir, n)),
    };
    for (const [pattern, limit] of [
      ["none", undefined],
      ["some", undefined],
      ["many", undefined],
      ["two", 2],
    ] as const) {
      const operations = { exists: (p: string) => existsSync(p), glob: () => lists[pattern] as string[] };
      const params = limit ? { pattern, limit } : { pattern };
      const mine = await outcome(parley.createFindTool as Factory, dir, params, { operations });
      const theirs = await outcome(pi.createFindTool as Factory, dir, params, { operations });
      expect(mine).toBe(theirs);
    }
  });

  // pi's grep shells out to ripgrep (never let pi try to download it): .ci/run installs
  // Debian's ripgrep, and without it this comparison fails rather than hiding.
  const hasRipgrep = (() => {
    try {
      execFileSync("rg", ["--version"], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  })();

  it("grep (against ripgrep-backed pi; file order normalised)", async () => {
    expect(hasRipgrep, "ripgrep (rg) is needed to run pi's grep: apt-get install ripgrep (.ci/run does)").toBe(true);
    const files = {
      "a.txt": "hello\nworld\nhello again\nHELLO caps\n",
      "src/b.ts": "const hello = 1;\n// foo.bar\nfooXbar\n",
      "src/deep/c.ts": "l1\nl2\nhello\nl4\nl5\nhello\nl7\n",
      ".hidden/h.txt": "hello hidden\n",
      "long.txt": `hello ${"z".repeat(700)}\n`,
      "bin.dat": "hello\0binary\n",
      "crlf.txt": "hello\r\nthere\r\n",
    };
    const dir = fixture("grep", files);
    const sortBody = (s: string) => {
      const [body = "", ...rest] = s.split("\n\n[");
      return [body.split("\n").sort().join("\n"), ...rest].join("\n\n[");
    };
    const calls = [
      { pattern: "hello" },
      { pattern: "hello", ignoreCase: true },
      { pattern: "foo.bar" },
      { pattern: "foo.bar", literal: true },
      { pattern: "hello", path: "src" },
      { pattern: "hello", path: "src/deep/c.ts", context: 2 },
      { pattern: "hello", glob: "*.ts" },
      { pattern: "hello", path: "a.txt", limit: 1 },
      { pattern: "nomatch" },
      { pattern: "hello", path: "crlf.txt" },
    ];
    for (const params of calls) {
      const mine = await outcome(parley.createGrepTool as Factory, dir, params);
      const theirs = await outcome(pi.createGrepTool as Factory, dir, params);
      const norm = (s: string) => {
        if (!s.startsWith("result ")) return s;
        const parsed = JSON.parse(s.slice("result ".length));
        parsed.content[0].text = sortBody(parsed.content[0].text);
        return JSON.stringify(parsed);
      };
      expect({ params, result: norm(mine) }).toEqual({ params, result: norm(theirs) });
    }
  });
});
