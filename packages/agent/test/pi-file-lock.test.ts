/**
 * pi-file-lock: each scheme excludes pi's own lock on that file (taken here with proper-lockfile
 * exactly as pi 1.6 takes it), gives up as pi does, and the replace keeps the file's mode and
 * writes a symlinked file (even one whose target does not exist yet) at its target; the one
 * read-modify-write of pi's JSON files (withPiJsonFile) holds pi's lock through the change,
 * replaces the file whole, and writes nothing when the file does not parse.
 */
import { chmodSync, closeSync, lstatSync, mkdtempSync, openSync, readFileSync, readlinkSync, readSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import lockfile from "proper-lockfile";
import { describe, expect, it } from "vitest";
import { replacePiFile, SETTINGS_LOCK, TRUST_LOCK, withPiFileLock, withPiJsonFile } from "../src/config/pi-file-lock.js";

const folder = (): string => mkdtempSync(join(tmpdir(), "parley-pifilelock-"));

describe("pi-file-lock", () => {
  it("settings.json and trust.json: pi's lock (as pi takes it) holds parley off; parley gives up, then gets it once released", async () => {
    const dir = folder();
    for (const [scheme, file, piLock] of [
      [SETTINGS_LOCK, join(dir, "settings.json"), (f: string) => lockfile.lockSync(f, { realpath: false })],
      [TRUST_LOCK, join(dir, "trust.json"), (f: string) => lockfile.lockSync(dirname(f), { realpath: false, lockfilePath: `${f}.lock` })],
    ] as const) {
      const release = piLock(file);
      let ran = false;
      await expect(
        withPiFileLock(file, scheme, () => {
          ran = true;
        }),
      ).rejects.toMatchObject({ code: "ELOCKED" });
      expect(ran).toBe(false);
      release();
      expect(await withPiFileLock(file, scheme, () => "done")).toBe("done");
      // And parley's lock holds pi off.
      await withPiFileLock(file, scheme, () => expect(() => piLock(file)).toThrow(/already being held/));
    }
  });

  it("replacePiFile keeps the mode, and writes through a link (a dangling one too) leaving the link", async () => {
    const dir = folder();
    const file = join(dir, "a.json");
    writeFileSync(file, "old");
    chmodSync(file, 0o640);
    await replacePiFile(file, "new");
    expect(readFileSync(file, "utf8")).toBe("new");
    expect(statSync(file).mode & 0o777).toBe(0o640);
    const target = join(dir, "later.json");
    const link = join(dir, "link.json");
    symlinkSync(target, link);
    await replacePiFile(link, "made", 0o600);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(readFileSync(target, "utf8")).toBe("made");
    expect(statSync(target).mode & 0o777).toBe(0o600);
  });

  describe("withPiJsonFile", () => {
    const parse = (text: string): Record<string, number> => JSON.parse(text) as Record<string, number>;
    /** Whether pi (proper-lockfile on the real path, as pi takes auth.json's lock) could take the lock now. */
    const piCouldLock = (file: string): boolean => !lockfile.checkSync(file, { realpath: true });

    it("makes the file as pi does, holds pi's lock through the change, and releases it", async () => {
      const dir = join(folder(), "agent");
      const file = join(dir, "store.json");
      const result = await withPiJsonFile(file, parse, (data) => {
        expect(data).toEqual({});
        expect(piCouldLock(file)).toBe(false);
        expect(() => lockfile.lockSync(file, { realpath: true })).toThrow(/already being held/);
        return { result: "seen", next: { a: 1 } };
      });
      expect(result).toBe("seen");
      expect(piCouldLock(file)).toBe(true);
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ a: 1 });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
    });

    it("replaces the file whole by rename: a reader of the old file keeps it intact; the mode stays; no next, no write", async () => {
      const file = join(folder(), "store.json");
      writeFileSync(file, JSON.stringify({ a: 1 }));
      chmodSync(file, 0o640);
      const before = statSync(file);
      await withPiJsonFile(file, parse, () => ({ result: undefined }));
      expect(statSync(file).ino).toBe(before.ino);
      expect(statSync(file).mtimeMs).toBe(before.mtimeMs);

      const reader = openSync(file, "r");
      try {
        await withPiJsonFile(file, parse, (data) => ({ result: undefined, next: { ...data, b: 2 } }));
        const old = Buffer.alloc(64);
        expect(old.toString("utf8", 0, readSync(reader, old, 0, 64, 0))).toBe(JSON.stringify({ a: 1 }));
      } finally {
        closeSync(reader);
      }
      expect(statSync(file).ino).not.toBe(before.ino);
      expect(statSync(file).mode & 0o777).toBe(0o640);
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ a: 1, b: 2 });
    });

    it("a file that does not parse: the parse error is the rejection, the change never runs, nothing is written, the lock is let go", async () => {
      const file = join(folder(), "store.json");
      writeFileSync(file, "{ not json");
      const before = statSync(file);
      let ran = false;
      await expect(
        withPiJsonFile(file, parse, () => {
          ran = true;
          return { result: undefined, next: {} };
        }),
      ).rejects.toThrow(SyntaxError);
      expect(ran).toBe(false);
      expect(readFileSync(file, "utf8")).toBe("{ not json");
      expect(statSync(file).ino).toBe(before.ino);
      expect(piCouldLock(file)).toBe(true);
    });

    it("a change that throws writes nothing and lets the lock go", async () => {
      const file = join(folder(), "store.json");
      writeFileSync(file, JSON.stringify({ a: 1 }));
      await expect(
        withPiJsonFile(file, parse, () => {
          throw new Error("refused");
        }),
      ).rejects.toThrow("refused");
      expect(readFileSync(file, "utf8")).toBe(JSON.stringify({ a: 1 }));
      expect(piCouldLock(file)).toBe(true);
    });
  });
});
