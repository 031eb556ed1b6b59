/**
 * Your files are safe: parley writes session lines only into a new file, a 0-byte file or a file
 * that already holds a session, and there only appends. Anything else is refused and left byte
 * for byte as it was; an HTML export never lands on a session or on a file parley did not write.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentMessage, AssistantMessage } from "@parley/protocol";
import type { SaveNotice, Session } from "../src/session/session.js";
import { SessionFileError, createSession, exportHtml, openSession } from "../src/session/index.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "parley-files-"));
  dirs.push(dir);
});

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
const assistant = (text: string): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "a",
  provider: "p",
  model: "m",
  usage,
  stopReason: "stop",
  timestamp: 2,
});
const say = (s: Session, m: AgentMessage) => s.append({ type: "message", message: m });
const quiet = { onWarning: () => {} };
/** The save notices `s` gives from now on. */
const told = (s: Session): SaveNotice[] => {
  const notices: SaveNotice[] = [];
  s.onSave = (notice) => notices.push(notice);
  return notices;
};

const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: "2025-01-01T00:00:00.000Z", cwd: "/p" });
const entry = (id: string, parentId: string | null, text: string) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2025-01-01T00:00:01.000Z", message: user(text) });

/** Contents a user may point --session or switch_session at, none of which is a session. */
const NOT_SESSIONS: Record<string, string | Buffer> = {
  "notes.txt": "Shopping list\nmilk\neggs\n",
  "package.json": `${JSON.stringify({ name: "x", version: "1.0.0", scripts: { test: "vitest" } }, null, 2)}\n`,
  "one-line.json": '{"name":"x","version":"1.0.0"}\n',
  "whitespace.jsonl": " \n\n",
  "newline.jsonl": "\n",
  "torn-header.jsonl": '{"type":"session","id":"ab',
  "wrong-kind.jsonl": `${entry("aaaa0001", null, "hi")}\n`,
  "header-without-id.jsonl": '{"type":"session","version":3}\n',
  "array.jsonl": "[1,2,3]\n",
  "null.jsonl": "null\n",
  "blank-first-line.jsonl": `\n${header("s1")}\n`,
  "garbage-then-header.jsonl": `garbage\n${header("s1")}\n`,
  "bom-only.jsonl": "\ufeff",
  "binary.bin": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x0a]),
};

describe("a file that is not a session", () => {
  it.each(Object.keys(NOT_SESSIONS))("%s is refused with a reason, and never written", (name) => {
    const file = path.join(dir, name);
    const content = NOT_SESSIONS[name]!;
    writeFileSync(file, content);
    const before = readFileSync(file);
    // Both ways in: opening (switch_session) and --session, which may create a missing file.
    expect(() => openSession(file, quiet)).toThrow(SessionFileError);
    expect(() => openSession(file, { ...quiet, createIfMissing: { cwd: dir } })).toThrow(/is not a session file \(.+\); parley leaves it untouched/);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it("a directory or a FIFO-like non-regular file is refused too", () => {
    const sub = path.join(dir, "folder");
    mkdirSync(sub);
    expect(() => openSession(sub, quiet)).toThrow(/it is a directory/);
    expect(() => openSession("/dev/null", quiet)).toThrow(/not a regular file/);
  });

  it("a symlink to a notes file is refused; the target is untouched", () => {
    const target = path.join(dir, "notes.txt");
    writeFileSync(target, "my notes\n");
    const link = path.join(dir, "link.jsonl");
    symlinkSync(target, link);
    expect(() => openSession(link, quiet)).toThrow(SessionFileError);
    expect(readFileSync(target, "utf8")).toBe("my notes\n");
  });
});

describe("only ever appends", () => {
  /** Every write path that touches an existing file: the old bytes stay a prefix of the new ones. */
  function expectAppendedOnly(file: string, before: Buffer): void {
    const after = readFileSync(file);
    expect(after.length).toBeGreaterThan(before.length);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
  }

  it("a 0-byte file becomes a session by appending to it", () => {
    const file = path.join(dir, "empty.jsonl");
    writeFileSync(file, "");
    const s = openSession(file, quiet);
    say(s, user("q"));
    say(s, assistant("a"));
    expect(readFileSync(file, "utf8").split("\n")[0]).toBe(JSON.stringify(s.header));
    expect(openSession(file, quiet).entries()).toEqual(s.entries());
  });

  it("a 0-byte file that someone fills meanwhile is never written: the failure is told once, and the file kept", () => {
    const file = path.join(dir, "empty.jsonl");
    writeFileSync(file, "");
    const s = openSession(file, quiet);
    writeFileSync(file, "somebody else's text\n");
    const notices: SaveNotice[] = [];
    s.onSave = (notice) => notices.push(notice);
    say(s, user("q"));
    say(s, assistant("a"));
    expect(notices).toEqual([{ kind: "refused", file, error: expect.stringMatching(/no longer empty/), unsaved: 1 }]);
    expect(s.written).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("somebody else's text\n");
  });

  // Root ignores permissions, so the folder is replaced by a regular file (ENOTDIR for anyone).
  it("a write that fails loses nothing: told once, the waiting lines appended when writing works again", () => {
    const folder = path.join(dir, "sessions");
    const s = createSession({ cwd: dir, sessionDir: folder, persist: true, onWarning: () => {} });
    const notices: SaveNotice[] = [];
    s.onSave = (notice) => notices.push(notice);
    say(s, user("one"));
    say(s, assistant("two"));
    const file = s.file!;
    const before = readFileSync(file);
    renameSync(folder, `${folder}.aside`);
    writeFileSync(folder, "not a folder\n");
    say(s, user("three"));
    say(s, assistant("four"));
    expect(notices).toEqual([{ kind: "failed", file, error: expect.stringMatching(/ENOTDIR/), unsaved: 1 }]);
    expect(s.written).toBe(false);
    rmSync(folder);
    renameSync(`${folder}.aside`, folder);
    say(s, user("five"));
    expect(notices.slice(1)).toEqual([{ kind: "resumed", file }]);
    expect(s.written).toBe(true);
    const after = readFileSync(file);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    expect(openSession(file, quiet).entries()).toEqual(s.entries());
  });

  // A write the disk cuts short (here a file size limit, RLIMIT_FSIZE, which binds root too):
  // the lines wholly written stay, the torn one and those after it wait, and the count is exact.
  it("a torn write: the lines wholly written are not written again, the rest wait", () => {
    const built = pathToFileURL(path.join(import.meta.dirname, "../dist/session/index.js")).href;
    const script = `
      const { createSession } = await import(process.argv[1]);
      process.on("SIGXFSZ", () => {}); // the write fails (EFBIG) instead of killing the process
      const s = createSession({ cwd: "/p", sessionDir: process.argv[2], persist: true });
      const notices = [];
      s.onSave = (n) => notices.push({ ...n, entriesThen: s.entries().length });
      const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
      s.append({ type: "message", message: { role: "user", content: "q", timestamp: 1 } });
      s.append({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "a" }], api: "a", provider: "p", model: "m", usage, stopReason: "stop", timestamp: 1 } });
      for (let i = 0; i < 10; i++) s.append({ type: "message", message: { role: "user", content: "é".repeat(700) + i, timestamp: 1 } });
      process.stdout.write(JSON.stringify({ file: s.file, notices, entries: s.entries().length, written: s.written }));
    `;
    const folder = path.join(dir, "limited");
    // 8 blocks (512 or 1024 bytes, by shell): the header and a few entries fit, the next one is torn.
    const out = execFileSync("sh", ["-c", 'ulimit -f 8; exec "$0" --input-type=module -e "$1" "$2" "$3"', process.execPath, script, built, folder], {
      encoding: "utf8",
    });
    const result = JSON.parse(out) as { file: string; notices: (SaveNotice & { entriesThen: number })[]; entries: number; written: boolean };
    expect(result.written).toBe(false);
    const warnings: string[] = [];
    const loaded = openSession(result.file, { onWarning: (w) => warnings.push(w.kind) });
    expect(warnings).toEqual(["torn_tail"]);
    expect(loaded.entries().length).toBeGreaterThan(2);
    // Told once; what waited then is exactly what was not wholly written.
    const entriesThen = result.notices[0]?.entriesThen ?? 0;
    expect(result.notices).toEqual([
      { kind: "failed", file: result.file, error: expect.stringMatching(/EFBIG/), unsaved: entriesThen - loaded.entries().length, entriesThen },
    ]);
    expect(entriesThen).toBeLessThan(result.entries);
  });

  it("a session with garbage lines after its header keeps them: they are skipped with warnings, new lines are appended", () => {
    const file = path.join(dir, "garbage.jsonl");
    const content = `${header("s1")}\n${entry("e0000001", null, "one")}\nnot json at all\n{"type":"mystery","id":"m1"}\n\u0000\u0001binary\n${entry("e0000002", "e0000001", "two")}\n{"torn`;
    writeFileSync(file, content);
    const before = readFileSync(file);
    const warnings: string[] = [];
    const s = openSession(file, { onWarning: (w) => warnings.push(w.kind) });
    expect(warnings.sort()).toEqual(["invalid_entry", "invalid_line", "invalid_line", "torn_tail"]);
    expect(s.entries().map((e) => e.id)).toEqual(["e0000001", "e0000002"]);
    say(s, user("three"));
    expectAppendedOnly(file, before);
    const reread = openSession(file, quiet);
    expect(reread.entries().map((e) => (e.type === "message" && e.message.role === "user" ? e.message.content : ""))).toEqual(["one", "two", "three"]);
  });

  it("a pi v1 session (entries without ids) is appended to, not rewritten", () => {
    const file = path.join(dir, "v1.jsonl");
    const t = "2024-01-01T00:00:00.000Z";
    writeFileSync(
      file,
      `${JSON.stringify({ type: "session", id: "old", timestamp: t, cwd: "/p" })}\n${JSON.stringify({ type: "message", timestamp: t, message: user("one") })}\n`,
    );
    const before = readFileSync(file);
    const s = openSession(file, quiet);
    say(s, assistant("two"));
    say(s, user("three"));
    expectAppendedOnly(file, before);
    const reread = openSession(file, quiet);
    expect(reread.entries()).toEqual(s.entries());
    expect(reread.branch().map((e) => e.id)).toEqual(s.branch().map((e) => e.id));
  });

  it("fork and clone write new files beside the session and leave it byte for byte", () => {
    const s = createSession({ cwd: "/p", sessionDir: dir, persist: true });
    const first = say(s, user("one"));
    say(s, assistant("a"));
    const before = readFileSync(s.file!);
    const forked = s.fork(first.id, "at").session;
    forked.flush(true);
    const cloned = s.clone();
    cloned.flush(true);
    expect(readFileSync(s.file!).equals(before)).toBe(true);
    expect(new Set([s.file, forked.file, cloned.file]).size).toBe(3);
    // Beside each, while it is open, its lock (session-lock.ts).
    expect(
      readdirSync(dir)
        .filter((name) => !name.endsWith(".lock"))
        .sort(),
    ).toEqual([s.file!, forked.file!, cloned.file!].map((f) => path.basename(f)).sort());
    expect(openSession(forked.file!, quiet).header.parentSession).toBe(s.file);
  });

  it("a new session whose file name is taken meanwhile refuses to write rather than replace that file", () => {
    const s = createSession({ cwd: "/p", sessionDir: dir, persist: true, parentSession: path.join(dir, "parent.jsonl") });
    writeFileSync(s.file!, "someone else's file\n");
    const notices = told(s);
    say(s, user("q"));
    say(s, assistant("a"));
    expect(notices).toEqual([
      { kind: "refused", file: s.file, error: expect.stringMatching(/a file appeared at this path that parley did not create/), unsaved: 2 },
    ]);
    expect(readFileSync(s.file!, "utf8")).toBe("someone else's file\n");
  });

  it("--session at a missing path creates the file; a file created there meanwhile is not replaced", () => {
    const file = path.join(dir, "new.jsonl");
    const s = openSession(file, { ...quiet, createIfMissing: { cwd: "/p" } });
    writeFileSync(file, "raced\n");
    const notices = told(s);
    say(s, user("q"));
    say(s, assistant("a"));
    expect(notices).toEqual([{ kind: "refused", file, error: expect.stringMatching(/a file appeared at this path that parley did not create/), unsaved: 2 }]);
    expect(readFileSync(file, "utf8")).toBe("raced\n");
  });
});

describe("export_html never writes over a session or a file parley did not create", () => {
  function session(): Session {
    const s = createSession({ cwd: dir, sessionDir: path.join(dir, "sessions"), persist: true });
    say(s, user("hello"));
    say(s, assistant("hi"));
    return s;
  }

  it("refuses the current session file, by its path or through a symlink", () => {
    const s = session();
    const before = readFileSync(s.file!);
    expect(() => exportHtml(s, s.file)).toThrow(/is the current session file; exporting there would destroy the session/);
    const link = path.join(dir, "link.html");
    symlinkSync(s.file!, link);
    expect(() => exportHtml(s, link)).toThrow(/current session file/);
    expect(readFileSync(s.file!).equals(before)).toBe(true);
  });

  it("refuses the current session's path even before its file is written", () => {
    const s = createSession({ cwd: dir, sessionDir: path.join(dir, "sessions"), persist: true });
    say(s, user("no answer yet"));
    expect(() => exportHtml(s, s.file)).toThrow(/current session file/);
  });

  it("refuses any other file that holds a session", () => {
    const s = session();
    const other = path.join(dir, "other.jsonl");
    const content = `${header("s2")}\n${entry("e0000001", null, "keep me")}\n`;
    writeFileSync(other, content);
    expect(() => exportHtml(s, other)).toThrow(/holds a session; parley never writes an export over a session/);
    expect(readFileSync(other, "utf8")).toBe(content);
  });

  it("refuses an existing file it did not write (an HTML page included), and a directory", () => {
    const s = session();
    for (const [name, content] of [
      ["notes.txt", "notes\n"],
      ["index.html", "<!DOCTYPE html><html><body>my page</body></html>\n"],
      ["empty.html", ""],
    ] as const) {
      const file = path.join(dir, name);
      writeFileSync(file, content);
      expect(() => exportHtml(s, file)).toThrow(/already exists.* and is not a page parley exported; parley does not overwrite files it did not create/);
      expect(readFileSync(file, "utf8")).toBe(content);
    }
    expect(() => exportHtml(s, dir)).toThrow(/already exists \(it is a directory\)/);
  });

  it("writes a new file, and replaces a page it exported earlier", () => {
    const s = session();
    const out = path.join(dir, "out", "page.html");
    // As pi, the folder must exist: it is not created.
    expect(() => exportHtml(s, out)).toThrow(/^ENOENT: no such file or directory/);
    mkdirSync(path.dirname(out));
    expect(exportHtml(s, out)).toBe(out);
    say(s, user("later question"));
    expect(exportHtml(s, out)).toBe(out);
    expect(readFileSync(out, "utf8")).toContain("later question");
    expect(readdirSync(path.dirname(out))).toEqual(["page.html"]);
  });
});

// Issue 34, item 7: a session writes only to the file it opened or created.
describe("a session file replaced while parley runs", () => {
  const opened = (): { s: Session; file: string; before: string } => {
    const file = path.join(dir, "live.jsonl");
    const s = createSession({ cwd: "/p", sessionDir: dir, persist: true });
    say(s, user("q"));
    say(s, assistant("a"));
    renameSync(s.file!, file);
    const live = openSession(file, quiet);
    return { s: live, file, before: readFileSync(file, "utf8") };
  };

  it.each([
    ["a symlink to another session file", (file: string, other: string) => (rmSync(file), symlinkSync(other, file)), /replaced by another file/],
    // Renamed over it, as an editor saves (a new inode while the old one is still taken).
    ["a file that is not a session", (file: string) => (writeFileSync(`${file}.new`, "notes\n"), renameSync(`${file}.new`, file)), /replaced by another file/],
    [
      "the same file rewritten in place",
      (file: string) => writeFileSync(file, "notes, much longer than the session was, so it does not look cut short ".repeat(40)),
      /no longer a session file/,
    ],
    ["the same file cut short", (file: string) => writeFileSync(file, '{"type":"session","id":"x"}\n'), /cut short/],
    ["nothing (deleted)", (file: string) => rmSync(file), /deleted/],
  ])("%s: refused at once, said once, never written; nothing is created", (_what, replace, reason) => {
    const { s, file } = opened();
    const other = path.join(dir, "other.jsonl");
    writeFileSync(other, '{"type":"session","version":3,"id":"other","timestamp":"t","cwd":"/o"}\n');
    replace(file, other);
    const shown = (() => {
      try {
        return readFileSync(file, "utf8");
      } catch {
        return undefined;
      }
    })();
    const notices = told(s);
    say(s, user("q2"));
    say(s, assistant("a2"));
    expect(notices).toEqual([{ kind: "refused", file, error: expect.stringMatching(reason), unsaved: 1 }]);
    expect(s.written).toBe(false);
    expect(s.unsavedReport()).toMatch(/2 entries of session .* were never written/);
    expect(readFileSync(other, "utf8")).toBe('{"type":"session","version":3,"id":"other","timestamp":"t","cwd":"/o"}\n');
    if (shown === undefined) expect(() => readFileSync(file)).toThrow(/ENOENT/);
    else expect(readFileSync(file, "utf8")).toBe(shown);
  });

  it("lines another writer appended (a pi on the same file) stay, and parley's follow on lines of their own", () => {
    const { s, file, before } = opened();
    const piLine = '{"type":"custom","customType":"pi","id":"p1","parentId":null,"timestamp":"t"}';
    writeFileSync(file, `${before}${piLine}`); // no final LF: torn by pi's kill
    const notices = told(s);
    say(s, user("q2"));
    expect(notices).toEqual([]);
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines).toContain(piLine);
    expect(JSON.parse(lines.at(-2)!)).toMatchObject({ type: "message", message: { role: "user" } });
    expect(
      openSession(file, { ...quiet, lock: false })
        .entries()
        .map((e) => e.id),
    ).toContain("p1");
  });
});

// Issue 34, item 6: one writer per session file.
describe("a session file another process writes", () => {
  const lockOf = (file: string) => `${file}.lock`;

  it("is refused while its lock names a running process, with what to do; a lock left by a dead one is taken over", () => {
    const file = path.join(dir, "shared.jsonl");
    writeFileSync(lockOf(file), `${JSON.stringify({ pid: process.ppid, host: hostname() })}\n`);
    expect(() => openSession(file, { ...quiet, createIfMissing: { cwd: "/p" } })).toThrow(
      new RegExp(`is open in another process \\(pid ${process.ppid}\\).*End the other one first, or continue in a copy of the session \\(--fork`),
    );
    // A pid no process has: the lock is stale.
    const dead = execFileSync("sh", ["-c", "echo $$"], { encoding: "utf8" }).trim();
    writeFileSync(lockOf(file), `${JSON.stringify({ pid: Number(dead), host: hostname() })}\n`);
    const s = openSession(file, { ...quiet, createIfMissing: { cwd: "/p" } });
    expect(JSON.parse(readFileSync(lockOf(file), "utf8"))).toEqual({ pid: process.pid, host: hostname() });
    // Only reading (a --fork source, an export) takes no lock.
    say(s, user("q"));
    say(s, assistant("a"));
    expect(openSession(file, { ...quiet, lock: false }).entries()).toHaveLength(2);
    s.release();
    expect(readdirSync(dir)).not.toContain("shared.jsonl.lock");
  });

  it("a new session whose lock another process took before the file was created is refused, and says so", () => {
    const s = createSession({ cwd: "/p", sessionDir: dir, persist: true });
    writeFileSync(lockOf(s.file!), `${JSON.stringify({ pid: process.ppid, host: hostname() })}\n`);
    const notices = told(s);
    say(s, user("q"));
    say(s, assistant("a"));
    expect(notices).toEqual([{ kind: "refused", file: s.file, error: expect.stringMatching(/is open in another process/), unsaved: 2 }]);
    expect(readdirSync(dir)).not.toContain(path.basename(s.file!));
  });
});
