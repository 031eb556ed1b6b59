/**
 * The session store: pi-format JSONL persistence that survives kill -9, the entry tree
 * (labels, cursors, leaf moves, fork/clone), compaction-aware context and stats, and
 * compatibility with files the real pi writes (and pi reading ours).
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Compile } from "typebox/compile";
import { GetEntriesData, GetTreeData, SessionStats, type AgentMessage, type AssistantMessage, type SessionEntry } from "@parley/protocol";
import { Session } from "../src/session/session.js";
import {
  SessionFileError,
  continueSession,
  createSession,
  cwdSlug,
  defaultSessionDir,
  legacySessionDir,
  latestSession,
  openSession,
  type SessionWarning,
} from "../src/session/index.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "parley-session-"));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

// ---- message builders ------------------------------------------------------------------

function usage(input: number, output: number, cost: number, cacheRead = 0, cacheWrite = 0) {
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
  };
}
const user = (text: string) => ({ role: "user" as const, content: text, timestamp: 1_700_000_000_000 });
function assistant(
  text: string,
  options: { tools?: { id: string; name: string; arguments: Record<string, unknown> }[]; usage?: ReturnType<typeof usage> } = {},
): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }, ...(options.tools ?? []).map((t) => ({ type: "toolCall" as const, ...t }))],
    api: "test-api",
    provider: "test",
    model: "test-model",
    usage: options.usage ?? usage(10, 5, 0.01),
    stopReason: options.tools ? "toolUse" : "stop",
    timestamp: 1_700_000_000_001,
  };
}
const toolResult = (id: string, text: string) => ({
  role: "toolResult" as const,
  toolCallId: id,
  toolName: "bash",
  content: [{ type: "text" as const, text }],
  isError: false,
  timestamp: 1_700_000_000_002,
});

const say = (s: Session, m: AgentMessage) => s.append({ type: "message", message: m });

function collect(): { warnings: SessionWarning[]; onWarning: (w: SessionWarning) => void } {
  const warnings: SessionWarning[] = [];
  return { warnings, onWarning: (w) => warnings.push(w) };
}

function lines(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "");
}

const entriesValidator = Compile(GetEntriesData);
const treeValidator = Compile(GetTreeData);
const statsValidator = Compile(SessionStats);
function expectWireValid(session: Session): void {
  const entries = { entries: session.entries(), leafId: session.leafId };
  const tree = { tree: session.tree(), leafId: session.leafId };
  expect(entriesValidator.Check(entries), JSON.stringify(entriesValidator.Errors(entries).slice(0, 3))).toBe(true);
  expect(treeValidator.Check(tree), JSON.stringify(treeValidator.Errors(tree).slice(0, 3))).toBe(true);
  expect(statsValidator.Check(session.stats())).toBe(true);
}

/** A session with two branches, a label, a rename, a model change and extension entries. */
function richSession(s: Session): { firstUser: string; firstReply: string; secondUser: string; altUser: string } {
  const firstUser = say(s, user("hello")).id;
  const firstReply = say(s, assistant("hi there", { tools: [{ id: "c1", name: "bash", arguments: { command: "ls" } }] })).id;
  say(s, toolResult("c1", "file.txt"));
  s.append({ type: "model_change", provider: "other", modelId: "bigger" });
  s.append({ type: "thinking_level_change", thinkingLevel: "high" });
  const secondUser = say(s, user("second question")).id;
  say(s, assistant("second answer"));
  s.append({ type: "custom", customType: "ext-state", data: { n: 1 } });
  s.append({ type: "custom_message", customType: "ext-msg", content: "extension says hi", display: true });
  s.setLabel(firstReply, "checkpoint");
  s.setName("My session");
  s.moveLeaf(firstReply);
  const altUser = say(s, user("alternative path")).id;
  say(s, assistant("alternative answer"));
  return { firstUser, firstReply, secondUser, altUser };
}

// ---- persistence -----------------------------------------------------------------------

describe("persistence", () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });

  it("keeps a --no-session session in memory only", () => {
    const s = createSession({ cwd: "/work/p", sessionDir: dir, persist: false });
    say(s, user("hi"));
    say(s, assistant("hello"));
    expect(s.file).toBeUndefined();
    expect(s.persisted).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    expect(s.entries()).toHaveLength(2);
  });

  it("names the file like pi and creates it with the first assistant message, then appends one line per entry", () => {
    const s = createSession({ cwd: "/work/p", sessionDir: dir, persist: true });
    expect(path.dirname(s.file!)).toBe(dir);
    expect(path.basename(s.file!)).toBe(`${s.header.timestamp.replace(/[:.]/g, "-")}_${s.id}.jsonl`);
    expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    s.setName("early name");
    say(s, user("question"));
    expect(existsSync(s.file!)).toBe(false);
    expect(s.written).toBe(false);

    say(s, assistant("answer"));
    expect(s.written).toBe(true);
    const written = lines(s.file!).map((l) => JSON.parse(l));
    expect(written[0]).toEqual({ type: "session", version: 3, id: s.id, timestamp: s.header.timestamp, cwd: "/work/p" });
    expect(written.slice(1)).toEqual(s.entries());

    for (let i = 0; i < 3; i++) {
      const before = readFileSync(s.file!, "utf8");
      const entry = say(s, user(`more ${i}`));
      const after = readFileSync(s.file!, "utf8");
      expect(after.slice(0, before.length)).toBe(before);
      expect(after.slice(before.length)).toBe(`${JSON.stringify(entry)}\n`);
    }
  });

  it("flush(true) writes a session that has no assistant message yet", () => {
    const s = createSession({ cwd: "/w", sessionDir: path.join(dir, "nested", "deeper"), persist: true });
    say(s, user("only a question"));
    s.flush();
    expect(existsSync(s.file!)).toBe(false);
    s.flush(true);
    expect(lines(s.file!)).toHaveLength(2);
    say(s, user("next"));
    expect(lines(s.file!)).toHaveLength(3);
  });

  it("reopens with the same header, entries, tree, leaf, name, labels and context", () => {
    const s = createSession({ cwd: "/work/p", sessionDir: dir, persist: true, parentSession: "/old/parent.jsonl" });
    richSession(s);
    const { warnings, onWarning } = collect();
    const reopened = openSession(s.file!, { onWarning });
    expect(warnings).toEqual([]);
    expect(reopened.header).toEqual(s.header);
    expect(reopened.header.parentSession).toBe("/old/parent.jsonl");
    expect(reopened.entries()).toEqual(s.entries());
    expect(reopened.tree()).toEqual(s.tree());
    expect(reopened.leafId).toBe(s.leafId);
    expect(reopened.name).toBe("My session");
    expect(reopened.buildContext()).toEqual(s.buildContext());
    expect(reopened.stats()).toEqual(s.stats());
    expectWireValid(reopened);

    // Appending after reopening continues the same file and tree.
    const next = say(reopened, user("after reopen"));
    expect(next.parentId).toBe(s.leafId);
    expect(openSession(s.file!).entries()).toEqual(reopened.entries());
  });

  it("stores a JSON copy: memory equals disk, and the caller's object is not shared", () => {
    const s = createSession({ cwd: "/w", sessionDir: dir, persist: true });
    const message = { ...user("x"), extra: undefined as unknown };
    const stored = s.append({ type: "message", message });
    message.content = "mutated";
    expect((stored as { message: { content: string } }).message.content).toBe("x");
    expect(Object.hasOwn((stored as { message: object }).message, "extra")).toBe(false);
    expect(() => s.append({ type: "custom", customType: "x", data: { big: 1n } })).toThrow(/not serialisable/);
    expect(s.entries()).toHaveLength(1);
  });

  it("refuses summary messages as message entries, and labels for missing entries", () => {
    const s = new Session("/w");
    expect(() => s.append({ type: "message", message: { role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 0 } })).toThrow(
      /compaction entry/,
    );
    expect(() => s.setLabel("nope", "x")).toThrow(/no such entry/);
  });

  describe("a torn final line", () => {
    function sessionFile(): { file: string; lastLine: string; before: SessionEntry[] } {
      const s = createSession({ cwd: "/w", sessionDir: dir, persist: true });
      say(s, user("first"));
      say(s, assistant("reply"));
      say(s, user("héllo wörld ✓ 😀 <&> \u2028 done"));
      const all = lines(s.file!);
      return { file: s.file!, lastLine: all.at(-1)!, before: s.entries().slice(0, -1) };
    }

    it("is ignored with a warning at every byte offset, and the next append starts a fresh line", () => {
      const { file, lastLine, before } = sessionFile();
      const original = readFileSync(file);
      const lastLineBytes = Buffer.byteLength(lastLine) + 1; // with its LF
      const lastLineStart = original.length - lastLineBytes;
      for (let cut = 0; cut < lastLineBytes; cut++) {
        writeFileSync(file, original);
        truncateSync(file, lastLineStart + cut);
        const { warnings, onWarning } = collect();
        const loaded = openSession(file, { onWarning });
        if (cut === 0) {
          expect(warnings).toEqual([]);
          expect(loaded.entries()).toEqual(before);
        } else if (cut === lastLineBytes - 1) {
          // Only the LF is missing: the entry is complete and kept.
          expect(warnings).toEqual([]);
          expect(loaded.entries()).toHaveLength(before.length + 1);
        } else {
          expect(
            warnings.map((w) => w.kind),
            `cut at ${cut}`,
          ).toEqual(["torn_tail"]);
          expect(warnings[0]!.line).toBe(4); // header + 3 entries
          expect(loaded.entries()).toEqual(before);
        }
        expect(loaded.leafId).toBe(loaded.entries().at(-1)!.id);

        // Appending after a torn tail must not glue the new entry onto the fragment.
        const added = say(loaded, user(`after cut ${cut}`));
        const again = collect();
        const reloaded = openSession(file, { onWarning: again.onWarning });
        expect(reloaded.entries()).toEqual(loaded.entries());
        expect(reloaded.leafId).toBe(added.id);
        expect(again.warnings.every((w) => w.kind === "invalid_line")).toBe(true);
      }
    });
  });

  it("skips invalid lines with a warning and re-attaches the children of unreadable entries", () => {
    const s = createSession({ cwd: "/w", sessionDir: dir, persist: true });
    const a = say(s, user("a"));
    say(s, assistant("b"));
    const file = s.file!;
    const ghost = { type: "from_the_future", id: "ghost001", parentId: s.leafId, timestamp: new Date().toISOString() };
    appendFileSync(file, `not json at all\n${JSON.stringify(ghost)}\n{"type":"message","id":"bad00001","parentId":"ghost001","timestamp":"t"}\n`);
    const child = { type: "message", id: "child001", parentId: "ghost001", timestamp: new Date().toISOString(), message: user("after the ghost") };
    appendFileSync(file, `${JSON.stringify(child)}\n${JSON.stringify({ ...child, message: user("duplicate id") })}\n\n`);

    const { warnings, onWarning } = collect();
    const loaded = openSession(file, { onWarning });
    expect(warnings.map((w) => [w.kind, w.line])).toEqual([
      ["invalid_line", 4],
      ["unknown_entry", 5],
      ["invalid_entry", 6],
      ["duplicate_id", 8],
    ]);
    expect(warnings.every((w) => w.file === file)).toBe(true);
    expect(loaded.entries().map((e) => e.id)).toEqual([a.id, s.leafId, "child001"]);
    expect(loaded.entry("child001")!.parentId).toBe(s.leafId);
    expect(loaded.branch().map((e) => e.id)).toEqual([a.id, s.leafId, "child001"]);
    expect(loaded.tree()).toHaveLength(1);
    // A new id never reuses one that is on disk, even on a skipped line.
    for (let i = 0; i < 50; i++) expect(["ghost001", "bad00001"]).not.toContain(say(loaded, user(`n${i}`)).id);
  });

  it("refuses a file that is not a session (a torn header included); only a 0-byte file becomes a fresh session", () => {
    const notSession = path.join(dir, "x.jsonl");
    writeFileSync(notSession, '{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"}}\n');
    expect(() => openSession(notSession)).toThrow(SessionFileError);
    expect(() => openSession(path.join(dir, "missing.jsonl"))).toThrow(/ENOENT/);
    const torn = path.join(dir, "torn.jsonl");
    writeFileSync(torn, '{"type":"sess');
    expect(() => openSession(torn)).toThrow(/not a session file \(its first line is not JSON\)/);
    expect(readFileSync(torn, "utf8")).toBe('{"type":"sess');

    const file = path.join(dir, "fresh.jsonl");
    writeFileSync(file, "");
    const { warnings, onWarning } = collect();
    const s = openSession(file, { onWarning });
    expect(warnings).toEqual([]);
    expect(s.entries()).toEqual([]);
    say(s, user("q"));
    say(s, assistant("a"));
    const written = lines(file).map((l) => JSON.parse(l));
    expect(written[0]).toMatchObject({ type: "session", id: s.id });
    expect(written).toHaveLength(3);
  });

  it("creates a session at an explicit missing path when asked (pi's --session <new file>)", () => {
    const file = path.join(dir, "sub", "named.jsonl");
    const s = openSession(file, { createIfMissing: { cwd: "/proj" } });
    expect(s.file).toBe(file);
    say(s, user("q"));
    say(s, assistant("a"));
    expect(openSession(file).entries()).toEqual(s.entries());
    expect(openSession(file).header.cwd).toBe("/proj");
  });

  it("migrates pi v1 (no ids) and v2 (hookMessage) files", () => {
    const v1 = path.join(dir, "v1.jsonl");
    const t = "2024-01-01T00:00:00.000Z";
    writeFileSync(
      v1,
      [
        { type: "session", id: "old-v1", timestamp: t, cwd: "/old" },
        { type: "message", timestamp: t, message: user("one") },
        { type: "message", timestamp: t, message: assistant("two") },
        { type: "message", timestamp: t, message: user("three") },
        { type: "compaction", timestamp: t, summary: "sum", firstKeptEntryIndex: 3, tokensBefore: 99 },
      ]
        .map((e) => JSON.stringify(e))
        .join("\n") + "\n",
    );
    const s = openSession(v1);
    const ids = s.entries().map((e) => e.id);
    expect(s.entries().map((e) => e.parentId)).toEqual([null, ids[0], ids[1], ids[2]]);
    expect(s.entries()[3]).toMatchObject({ type: "compaction", firstKeptEntryId: ids[2] });
    expect(s.buildContext().map((m) => m.role)).toEqual(["compactionSummary", "user"]);
    // The generated ids derive from line numbers, so the file is appended to, never rewritten.
    const before = readFileSync(v1, "utf8");
    say(s, user("four"));
    expect(readFileSync(v1, "utf8").startsWith(before)).toBe(true);
    const reread = openSession(v1);
    expect(reread.entries()).toEqual(s.entries());
    expect(reread.header.version).toBe(3);

    const v2 = path.join(dir, "v2.jsonl");
    writeFileSync(
      v2,
      `${JSON.stringify({ type: "session", version: 2, id: "old-v2", timestamp: t, cwd: "/old" })}\n${JSON.stringify({
        type: "message",
        id: "aaaa0001",
        parentId: null,
        timestamp: t,
        message: { role: "hookMessage", customType: "x", content: "c", display: true, timestamp: 1 },
      })}\n`,
    );
    expect(openSession(v2).buildContext()).toEqual([{ role: "custom", customType: "x", content: "c", display: true, timestamp: 1 }]);
  });

  it("latestSession picks the most recently modified session file; continueSession opens it", () => {
    expect(latestSession(path.join(dir, "does-not-exist"))).toBeUndefined();
    expect(latestSession(dir)).toBeUndefined();
    const files: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = createSession({ cwd: "/p", sessionDir: dir, persist: true });
      say(s, user(`q${i}`));
      say(s, assistant(`a${i}`));
      files.push(s.file!);
    }
    writeFileSync(path.join(dir, "zzz-not-a-session.jsonl"), "garbage\n");
    writeFileSync(path.join(dir, "zzz-notes.txt"), "x");
    mkdirSync(path.join(dir, "zzz-dir.jsonl"));
    const now = Date.now() / 1000;
    utimesSync(files[0]!, now - 100, now - 100);
    utimesSync(files[1]!, now - 10, now - 10);
    utimesSync(files[2]!, now - 50, now - 50);
    utimesSync(path.join(dir, "zzz-not-a-session.jsonl"), now, now);
    expect(latestSession(dir)).toBe(files[1]);
    // Same mtime: the later name (creation time) wins.
    utimesSync(files[2]!, now - 10, now - 10);
    expect(latestSession(dir)).toBe([files[1]!, files[2]!].sort()[1]);

    utimesSync(files[0]!, now + 5, now + 5);
    const continued = continueSession({ cwd: "/p", sessionDir: dir });
    expect(continued.file).toBe(files[0]);
    expect(continued.buildContext()).toHaveLength(2);

    const fresh = continueSession({ cwd: "/p", sessionDir: path.join(dir, "empty") });
    expect(fresh.entries()).toEqual([]);
    expect(path.dirname(fresh.file!)).toBe(path.join(dir, "empty"));
  });

  it("derives the default directory like pi: --<cwd with separators as ->--", () => {
    expect(cwdSlug("/home/me/my project")).toBe("--home-me-my project--");
    expect(cwdSlug("C:\\Users\\me")).toBe("--C--Users-me--");
    expect(defaultSessionDir("/srv/app", "/home/u/.pi/agent")).toBe("/home/u/.pi/agent/sessions/--srv-app--");
    expect(legacySessionDir("/srv/app", "/home/u")).toBe("/home/u/.parley/sessions/--srv-app--");
    const s = createSession({ cwd: "/srv/app", persist: true, sessionDir: defaultSessionDir("/srv/app", "/home/u/.pi/agent") });
    expect(path.dirname(s.file!)).toBe("/home/u/.pi/agent/sessions/--srv-app--");
  });
});

// ---- kill -9 ----------------------------------------------------------------------------

describe("a writer killed with SIGKILL", () => {
  const built = path.join(repoRoot, "packages/agent/dist/session/index.js");

  // The child imports the compiled module, as the real CLI would (build: npx tsc -b).
  const childScript = `
    const { createSession } = await import(process.argv[1]);
    const size = Number(process.argv[3]);
    const s = createSession({ cwd: "/kill/test", sessionDir: process.argv[2], persist: true });
    const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const assistant = (text) => ({ role: "assistant", content: [{ type: "text", text }], api: "a", provider: "p", model: "m", usage, stopReason: "stop", timestamp: Date.now() });
    s.append({ type: "message", message: { role: "user", content: "start", timestamp: Date.now() } });
    s.append({ type: "message", message: assistant("ok") });
    process.stdout.write(s.file + "\\n");
    const pad = "é".repeat(size);
    for (let i = 0; ; i++) {
      s.append({ type: "message", message: { role: "user", content: "u" + i + pad, timestamp: Date.now() } });
      s.append({ type: "message", message: assistant("a" + i + pad) });
    }
  `;

  async function runAndKill(dir: string, size: number, minBytes: number): Promise<string> {
    const child = spawn(process.execPath, ["--input-type=module", "-e", childScript, pathToFileURL(built).href, dir, String(size)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    const file = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("\n")) resolve(out.split("\n")[0]!);
      });
      child.on("exit", () => reject(new Error(`child exited early: ${stderr}`)));
    });
    const deadline = Date.now() + 15_000;
    while (statSync(file).size < minBytes && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    // Land the kill at an arbitrary point of the write loop.
    await new Promise((r) => setTimeout(r, Math.random() * 20));
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    return file;
  }

  it.each([
    [200, 200_000],
    [20_000, 2_000_000],
    [500_000, 8_000_000],
  ])("leaves a loadable file (line padding %i chars)", async (size, minBytes) => {
    expect(existsSync(built), `${built} is missing: build first (npx tsc -b)`).toBe(true);
    const dir = tempDir();
    const file = await runAndKill(dir, size, minBytes);

    const raw = readFileSync(file);
    const torn = raw.at(-1) !== 0x0a;
    const { warnings, onWarning } = collect();
    const s = openSession(file, { onWarning });
    expect(warnings.map((w) => w.kind)).toEqual(torn ? ["torn_tail"] : []);
    expect(s.header.cwd).toBe("/kill/test");
    const entries = s.entries();
    expect(entries.length).toBeGreaterThanOrEqual(2);
    // Every entry before the cut is intact and chained.
    entries.forEach((e, i) => expect(e.parentId).toBe(i === 0 ? null : entries[i - 1]!.id));
    expect(s.leafId).toBe(entries.at(-1)!.id);

    // The survivor can be continued, and the continuation loads cleanly.
    const added = say(s, user("resumed after kill"));
    const again = collect();
    const resumed = openSession(file, { onWarning: again.onWarning });
    expect(resumed.entries()).toEqual([...entries, added]);
    expect(resumed.entry(added.id)!.parentId).toBe(entries.at(-1)!.id);
    expect(again.warnings.map((w) => w.kind)).toEqual(torn ? ["invalid_line"] : []);
  });
});

// ---- the tree ----------------------------------------------------------------------------

describe("tree", () => {
  it("branch() walks root to leaf, from the current or a given leaf", () => {
    const s = new Session("/w");
    const ids = richSession(s);
    expect(s.branch().map((e) => e.id)).toEqual([ids.firstUser, ids.firstReply, ids.altUser, s.leafId]);
    expect(
      s
        .branch(ids.secondUser)
        .map((e) => e.id)
        .slice(0, 2),
    ).toEqual([ids.firstUser, ids.firstReply]);
    expect(s.branch("unknown")).toEqual([]);
    expect(s.branch(null)).toEqual([]);
  });

  it("tree() nests children in time order and carries current labels", () => {
    const s = new Session("/w");
    const ids = richSession(s);
    const tree = s.tree();
    expect(tree).toHaveLength(1);
    const root = tree[0]!;
    expect(root.entry.id).toBe(ids.firstUser);
    const reply = root.children[0]!;
    expect(reply.entry.id).toBe(ids.firstReply);
    expect(reply.label).toBe("checkpoint");
    expect(reply.labelTimestamp).toBe(s.entries().find((e) => e.type === "label")!.timestamp);
    // The tool result (first branch) was appended before the alternative user message.
    expect(reply.children.map((c) => c.entry.type === "message" && c.entry.message.role)).toEqual(["toolResult", "user"]);
    expect(reply.children[1]!.entry.id).toBe(ids.altUser);
    expect(root.label).toBeUndefined();
    expect(Object.hasOwn(root, "label")).toBe(false);
    expectWireValid(s);
  });

  it("a later label replaces an earlier one, and a label without text clears it", () => {
    const s = new Session("/w");
    const a = say(s, user("a"));
    s.setLabel(a.id, "one");
    s.setLabel(a.id, "two");
    expect(s.label(a.id)).toBe("two");
    expect(s.tree()[0]!.label).toBe("two");
    const cleared = s.setLabel(a.id, undefined);
    expect(Object.hasOwn(cleared, "label")).toBe(false);
    expect(s.label(a.id)).toBeUndefined();
    expect(s.tree()[0]!.label).toBeUndefined();
    s.setLabel(a.id, "three");
    s.setLabel(a.id, "");
    expect(s.label(a.id)).toBeUndefined();
  });

  it("entriesSince() returns entries strictly after the cursor, and rejects unknown cursors", () => {
    const s = new Session("/w");
    expect(s.entriesSince()).toEqual([]);
    const a = say(s, user("a"));
    const b = say(s, assistant("b"));
    s.moveLeaf(a.id);
    const c = say(s, user("c"));
    expect(s.entriesSince()).toEqual([a, b, c]);
    expect(s.entriesSince(a.id)).toEqual([b, c]);
    expect(s.entriesSince(b.id)).toEqual([c]);
    expect(s.entriesSince(c.id)).toEqual([]);
    expect(() => s.entriesSince("deadbeef")).toThrow("Entry not found: deadbeef");
  });

  it("moveLeaf() navigates; null starts a new root; unknown ids throw", () => {
    const s = new Session("/w");
    const a = say(s, user("a"));
    say(s, assistant("b"));
    s.moveLeaf(a.id);
    expect(s.leafId).toBe(a.id);
    expect(s.buildContext()).toHaveLength(1);
    expect(() => s.moveLeaf("nope")).toThrow(/no such entry/);
    s.moveLeaf(null);
    expect(s.buildContext()).toEqual([]);
    const root2 = say(s, user("new root"));
    expect(root2.parentId).toBeNull();
    expect(s.tree()).toHaveLength(2);
  });

  it("branchWithSummary() moves the leaf and records what was left behind", () => {
    const s = new Session("/w");
    const a = say(s, user("a"));
    const b = say(s, assistant("b"));
    const summary = s.branchWithSummary(a.id, "we tried b", { details: { files: [] } });
    // fromId: the leaf left behind (the newest pi's; 0.73.1 recorded the target).
    expect(summary).toMatchObject({ type: "branch_summary", parentId: a.id, fromId: b.id, summary: "we tried b" });
    expect(s.leafId).toBe(summary.id);
    expect(s.buildContext().map((m) => m.role)).toEqual(["user", "branchSummary"]);
  });
});

// ---- fork / clone -----------------------------------------------------------------------

describe("fork and clone", () => {
  it("forks before a user message into a new file that names its parent, returning the text", () => {
    const dir = tempDir();
    const s = createSession({ cwd: "/w", sessionDir: dir, persist: true });
    const ids = richSession(s);
    const { session: fork, selectedText } = s.fork(ids.secondUser, "before");
    expect(selectedText).toBe("second question");
    expect(fork.id).not.toBe(s.id);
    expect(fork.header.parentSession).toBe(s.file);
    expect(path.dirname(fork.file!)).toBe(dir);
    expect(fork.file).not.toBe(s.file);
    // The path up to the user message's parent (the thinking level change), then the label.
    const upTo = s.branch(s.entry(ids.secondUser)!.parentId);
    const forked = fork.entries();
    expect(forked.slice(0, upTo.length)).toEqual(upTo);
    expect(forked.slice(upTo.length)).toMatchObject([{ type: "label", targetId: ids.firstReply, label: "checkpoint", parentId: upTo.at(-1)!.id }]);
    expect(fork.label(ids.firstReply)).toBe("checkpoint");
    expect(fork.leafId).toBe(forked.at(-1)!.id);
    expect(fork.buildContext()).toEqual(buildContextAt(s, upTo.at(-1)!.id));
    // It contains an assistant message, so it is on disk already.
    expect(fork.written).toBe(true);
    expect(openSession(fork.file!).entries()).toEqual(forked);
    // The source is untouched.
    expect(openSession(s.file!).entries()).toEqual(s.entries());
  });

  it("forks at any entry, including it", () => {
    const s = new Session("/w");
    const ids = richSession(s);
    const { session: fork, selectedText } = s.fork(ids.firstReply, "at");
    expect(selectedText).toBeUndefined();
    expect(fork.entries().filter((e) => e.type !== "label")).toEqual(s.branch(ids.firstReply));
    expect(fork.file).toBeUndefined(); // in-memory source, in-memory fork
    expect(fork.header.parentSession).toBeUndefined();
  });

  it("forking before the first user message gives an empty session; non-user entries are refused", () => {
    const dir = tempDir();
    const s = createSession({ cwd: "/w", sessionDir: dir, persist: true });
    const ids = richSession(s);
    const { session: empty, selectedText } = s.fork(ids.firstUser, "before");
    expect(selectedText).toBe("hello");
    expect(empty.entries()).toEqual([]);
    expect(empty.leafId).toBeNull();
    expect(empty.header.parentSession).toBe(s.file);
    expect(empty.written).toBe(false);
    expect(() => s.fork(ids.firstReply, "before")).toThrow(/assistant message, not a user message/);
    expect(() => s.fork("nope")).toThrow(/no such entry/);
  });

  it("clone() copies the active branch into a new session", () => {
    const dir = tempDir();
    const s = createSession({ cwd: "/w", sessionDir: dir, persist: true });
    richSession(s);
    const clone = s.clone();
    expect(clone.entries().filter((e) => e.type !== "label")).toEqual(s.branch().filter((e) => e.type !== "label"));
    expect(clone.buildContext()).toEqual(s.buildContext());
    expect(clone.header.parentSession).toBe(s.file);
    expect(clone.header.cwd).toBe("/w");
    expect(readdirSync(dir).filter((name) => !name.endsWith(".lock"))).toHaveLength(2);
    expect(() => new Session("/w").clone()).toThrow("Cannot clone session: no current entry selected");
  });

  it("userMessagesForForking() lists user messages of every branch with their text", () => {
    const s = new Session("/w");
    const ids = richSession(s);
    say(s, {
      role: "user",
      content: [
        { type: "text", text: "part one, " },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "text", text: "part two" },
      ],
      timestamp: 1,
    });
    say(s, { role: "user", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], timestamp: 1 });
    expect(s.userMessagesForForking()).toEqual([
      { entryId: ids.firstUser, text: "hello" },
      { entryId: ids.secondUser, text: "second question" },
      { entryId: ids.altUser, text: "alternative path" },
      { entryId: expect.any(String), text: "part one, part two" },
    ]);
  });
});

function buildContextAt(s: Session, leafId: string): AgentMessage[] {
  const leaf = s.leafId;
  s.moveLeaf(leafId);
  const context = s.buildContext();
  s.moveLeaf(leaf);
  return context;
}

// ---- context ----------------------------------------------------------------------------

describe("buildContext", () => {
  it("keeps messages, turns extension messages and branch summaries into messages, drops the rest", () => {
    const s = new Session("/w");
    richSession(s);
    const leafAfterCustoms = s.entries().find((e) => e.type === "custom_message")!.id;
    s.moveLeaf(leafAfterCustoms);
    const context = s.buildSessionContext();
    expect(context.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "user", "assistant", "custom"]);
    expect(context.messages.at(-1)).toEqual({
      role: "custom",
      customType: "ext-msg",
      content: "extension says hi",
      display: true,
      timestamp: Date.parse(s.entry(leafAfterCustoms)!.timestamp),
    });
    expect(context.thinkingLevel).toBe("high");
    expect(context.model).toEqual({ provider: "test", modelId: "test-model" });
  });

  it("honours the latest compaction: summary, kept entries from firstKeptEntryId, then what follows", () => {
    const s = new Session("/w");
    say(s, user("u1"));
    say(s, assistant("a1"));
    const u2 = say(s, user("u2"));
    say(s, assistant("a2"));
    const compaction = s.append({ type: "compaction", summary: "first summary", firstKeptEntryId: u2.id, tokensBefore: 1000 });
    say(s, user("u3"));
    expect(s.buildContext()).toEqual([
      { role: "compactionSummary", summary: "first summary", tokensBefore: 1000, timestamp: Date.parse(compaction.timestamp) },
      user("u2"),
      assistant("a2"),
      user("u3"),
    ]);
    // A second compaction supersedes the first; an id not on the path keeps nothing before it.
    const u4 = say(s, user("u4"));
    s.append({ type: "compaction", summary: "second", firstKeptEntryId: u4.id, tokensBefore: 2000 });
    say(s, assistant("a4"));
    expect(s.buildContext().map((m) => (m.role === "compactionSummary" ? `summary:${m.summary}` : m.role))).toEqual(["summary:second", "user", "assistant"]);
    s.append({ type: "compaction", summary: "third", firstKeptEntryId: "elsewhere", tokensBefore: 3000 });
    expect(s.buildContext().map((m) => m.role)).toEqual(["compactionSummary"]);
    // messages() is the whole branch, compactions shown where they happened.
    expect(s.messages().map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "compactionSummary",
      "user",
      "user",
      "compactionSummary",
      "assistant",
      "compactionSummary",
    ]);
  });

  it("uses retainedTail (newer pi) as the kept context", () => {
    const s = new Session("/w");
    say(s, user("u1"));
    say(s, assistant("a1"));
    s.append({ type: "compaction", summary: "sum", tokensBefore: 10, retainedTail: [user("kept"), assistant("kept reply")] });
    say(s, user("after"));
    expect(s.buildContext().map((m) => ("content" in m && typeof m.content === "string" ? m.content : m.role))).toEqual([
      "compactionSummary",
      "kept",
      "assistant",
      "after",
    ]);
    expectWireValid(s);
  });
});

// ---- stats ------------------------------------------------------------------------------

describe("stats", () => {
  it("counts the session's messages and sums every recorded usage, compacted history included (as the newest pi)", () => {
    const s = createSession({ cwd: "/w", persist: false });
    say(s, user("u1"));
    say(
      s,
      assistant("a1", {
        tools: [
          { id: "t1", name: "bash", arguments: {} },
          { id: "t2", name: "read", arguments: {} },
        ],
        usage: usage(100, 20, 0.5, 30, 7),
      }),
    );
    say(s, toolResult("t1", "r1"));
    say(s, { ...toolResult("t2", "r2"), usage: usage(5, 5, 0.25) });
    say(s, assistant("a2", { usage: usage(200, 40, 1) }));
    let stats = s.stats();
    expect(stats).toEqual({
      sessionId: s.id,
      userMessages: 1,
      assistantMessages: 2,
      toolCalls: 2,
      toolResults: 2,
      totalMessages: 5,
      tokens: { input: 305, output: 65, cacheRead: 30, cacheWrite: 7, total: 407 },
      cost: 1.75,
    });

    const kept = say(s, user("u2"));
    s.append({ type: "compaction", summary: "s", firstKeptEntryId: kept.id, tokensBefore: 500, usage: usage(50, 10, 0.1) });
    stats = s.stats();
    expect(stats.userMessages).toBe(2);
    expect(stats.assistantMessages).toBe(2);
    expect(stats.totalMessages).toBe(6);
    expect(stats.tokens.input).toBe(355);
    expect(stats.cost).toBeCloseTo(1.85);
    expect(statsValidator.Check(stats)).toBe(true);

    const persisted = createSession({ cwd: "/w", sessionDir: tempDir(), persist: true });
    expect(persisted.stats().sessionFile).toBe(persisted.file);
  });
});

// ---- pi compatibility ----------------------------------------------------------------------

describe("compatibility with pi 0.73.1's SessionManager", () => {
  type PiModule = typeof import("@mariozechner/pi-coding-agent");
  const loadPi = async (): Promise<PiModule> => import("@mariozechner/pi-coding-agent");

  it("loads a file pi wrote: same entries, leaf, tree, name and context", async () => {
    const { SessionManager } = await loadPi();
    const dir = tempDir();
    const pi = SessionManager.create("/pi/project", dir);
    // The helpers make pi-ai 1.6's messages; pi 0.73's SessionManager types its own (the same JSON).
    const append = (message: unknown) => pi.appendMessage(message as Parameters<typeof pi.appendMessage>[0]);
    const u1 = append(user("hello from pi"));
    const a1 = append(assistant("hi", { tools: [{ id: "c1", name: "bash", arguments: { command: "ls" } }] }));
    append(toolResult("c1", "out"));
    pi.appendModelChange("anthropic", "claude");
    pi.appendThinkingLevelChange("medium");
    pi.appendCustomEntry("ext", { x: 1 });
    pi.appendCustomMessageEntry("ext", [{ type: "text", text: "ctx" }], false, { d: 1 });
    pi.appendLabelChange(a1, "mark");
    pi.appendSessionInfo("pi named me");
    const u2 = append(user("second"));
    append(assistant("second reply"));
    pi.appendCompaction("compacted!", u2, 1234, { readFiles: [] });
    append(user("after compaction"));
    append(assistant("sure"));
    pi.branchWithSummary(u1, "left a branch");
    append(user("on the new branch"));
    append(assistant("ok"));
    pi.appendLabelChange(a1, undefined);

    const { warnings, onWarning } = collect();
    const s = openSession(pi.getSessionFile()!, { onWarning });
    expect(warnings).toEqual([]);
    expect(s.id).toBe(pi.getSessionId());
    expect(s.header).toEqual(pi.getHeader());
    expect(s.entries()).toEqual(pi.getEntries());
    expect(s.leafId).toBe(pi.getLeafId());
    expect(s.name).toBe(pi.getSessionName());
    expect(s.tree()).toEqual(pi.getTree());
    expect(s.label(a1)).toBeUndefined();
    expect(s.buildSessionContext()).toEqual(pi.buildSessionContext());
    for (const entry of pi.getEntries()) {
      pi.branch(entry.id);
      s.moveLeaf(entry.id);
      expect(s.buildSessionContext(), `context at ${entry.type} ${entry.id}`).toEqual(pi.buildSessionContext());
    }
    expectWireValid(s);
  });

  it("writes files pi loads: same entries, tree and context; forks pi can follow", async () => {
    const { SessionManager } = await loadPi();
    const dir = tempDir();
    const s = createSession({ cwd: "/parley/project", sessionDir: dir, persist: true });
    const ids = richSession(s);
    s.append({ type: "compaction", summary: "sum", firstKeptEntryId: ids.altUser, tokensBefore: 42 });
    say(s, user("later"));

    const pi = SessionManager.open(s.file!, dir);
    expect(pi.getEntries()).toEqual(s.entries());
    expect(pi.getLeafId()).toBe(s.leafId);
    expect(pi.getTree()).toEqual(s.tree());
    expect(pi.getSessionName()).toBe(s.name);
    expect(pi.buildSessionContext()).toEqual(s.buildSessionContext());

    const { session: fork } = s.fork(ids.altUser, "before");
    const piFork = SessionManager.open(fork.file!, dir);
    expect(piFork.getHeader()?.parentSession).toBe(s.file);
    expect(piFork.getEntries()).toEqual(fork.entries());
    expect(piFork.buildSessionContext()).toEqual(fork.buildSessionContext());
  });
});
