/**
 * `mkdir -p` that always ends (src/make-dirs.ts). Node's own recursive mkdir spins for ever at
 * 100% CPU where mkdir answers ENOENT under a parent that exists (/proc): a `--session-dir`, an
 * export path or a write tool call there hung parley. The class: for any path, both versions
 * either create every missing folder or throw, and return.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { makeDirs, makeDirsSync } from "../src/make-dirs.js";

const base = mkdtempSync(join(tmpdir(), "parley-make-dirs-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const segment = fc.stringMatching(/^[a-z0-9._-]{1,8}$/).filter((s) => s !== "." && s !== "..");
const segments = fc.array(segment, { minLength: 1, maxLength: 6 });

let n = 0;
describe("makeDirs / makeDirsSync", () => {
  it("create every missing folder of any path, and accept one that exists", async () => {
    await fc.assert(
      fc.asyncProperty(segments, fc.boolean(), async (parts, sync) => {
        const dir = join(base, `t${++n}`, ...parts);
        if (sync) makeDirsSync(dir);
        else await makeDirs(dir);
        expect(statSync(dir).isDirectory()).toBe(true);
        // Again: nothing to do, no error.
        if (sync) makeDirsSync(dir);
        else await makeDirs(dir);
      }),
      { numRuns: 60 },
    );
  });

  it("end with mkdir's error under /proc (where Node's recursive mkdir never returns)", async () => {
    await fc.assert(
      fc.asyncProperty(segments, fc.constantFrom("/proc/self", "/proc", "/proc/self/fd"), async (parts, root) => {
        // A name /proc never has ("1" is init's folder, which exists): the path must be missing.
        const dir = join(root, `no-such-${parts[0]}`, ...parts.slice(1));
        expect(() => makeDirsSync(dir)).toThrow(/ENOENT|EACCES|EPERM|EEXIST|ENOTDIR/);
        await expect(makeDirs(dir)).rejects.toThrow(/ENOENT|EACCES|EPERM|EEXIST|ENOTDIR/);
      }),
      { numRuns: 40 },
    );
  });

  it("refuse a path through a regular file, and a regular file in the folder's place", async () => {
    const file = join(base, "a-file");
    writeFileSync(file, "keep\n");
    expect(() => makeDirsSync(join(file, "sub"))).toThrow(/ENOTDIR/);
    await expect(makeDirs(join(file, "sub", "deeper"))).rejects.toThrow(/ENOTDIR/);
    expect(() => makeDirsSync(file)).toThrow(/EEXIST/);
    await expect(makeDirs(file)).rejects.toThrow(/EEXIST/);
  });
});
