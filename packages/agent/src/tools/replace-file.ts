/**
 * How the write and edit tools put a file's new content in place: written to a temporary file
 * beside it, flushed to disk, given the old file's mode (and owner, where allowed), then renamed
 * over it; a symlink is written through to its target. A kill at any moment leaves the old
 * content or the new, never a torn file (at worst a stray `<name>.<number>` temporary beside it).
 */
import { constants } from "node:fs";
import { access, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type writeFileAtomicModule from "write-file-atomic";
import { errorCode } from "./util.js";

// Required on the first write: it loads node:crypto and node:worker_threads, which a start-up needs not.
let writeFileAtomicLoaded: typeof writeFileAtomicModule | undefined;
const writeFileAtomic = (): typeof writeFileAtomicModule =>
  (writeFileAtomicLoaded ??= createRequire(import.meta.url)("write-file-atomic") as typeof writeFileAtomicModule);

export async function replaceFile(path: string, content: string): Promise<void> {
  // A rename would replace a file the user may not write (its folder allows it): refuse as a
  // write in place would.
  try {
    await access(path, constants.W_OK);
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error;
  }
  try {
    await writeFileAtomic()(path, content, { encoding: "utf8" });
  } catch (error) {
    // A folder the user may not create files in, holding a file they may write: only an
    // in-place write can do what was asked (not atomic, as pi's always is).
    const code = errorCode(error);
    if (code !== "EACCES" && code !== "EPERM") throw error;
    await writeFile(path, content, "utf8");
  }
}
