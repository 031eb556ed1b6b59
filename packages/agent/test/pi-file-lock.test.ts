/**
 * pi-file-lock: each scheme excludes pi's own lock on that file (taken here with proper-lockfile
 * exactly as pi 1.6 takes it), gives up as pi does, and the replace keeps the file's mode and
 * writes a symlinked file (even one whose target does not exist yet) at its target.
 */
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import lockfile from "proper-lockfile";
import { describe, expect, it } from "vitest";
import { replacePiFile, SETTINGS_LOCK, TRUST_LOCK, withPiFileLock } from "../src/config/pi-file-lock.js";

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
});
