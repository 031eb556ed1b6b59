/**
 * `mkdir -p` that always ends. Node's `mkdir(…, {recursive: true})` loops for ever, at 100% CPU,
 * where mkdir answers ENOENT under a parent that exists (any path under /proc, e.g. a
 * `--session-dir /proc/self/sessions`): it creates the parent (EEXIST), retries the child, and
 * gets ENOENT again. Here each folder is tried at most twice: once on the way up, once on the
 * way down, so a refusal becomes an error.
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

const codeOf = (error: unknown): unknown => (error instanceof Error && "code" in error ? error.code : undefined);

/** Creates `dir` and its missing parents; an existing folder is fine. Throws what mkdir threw. */
export function makeDirsSync(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); ; ) {
    try {
      mkdirSync(at);
      break;
    } catch (error) {
      if (codeOf(error) === "EEXIST" && statSync(at).isDirectory()) break;
      const parent = dirname(at);
      if (codeOf(error) !== "ENOENT" || parent === at) throw error;
      missing.push(at);
      at = parent;
    }
  }
  for (const at of missing.reverse()) {
    try {
      mkdirSync(at);
    } catch (error) {
      if (!(codeOf(error) === "EEXIST" && statSync(at).isDirectory())) throw error;
    }
  }
}

/**
 * The same for async callers (the write tool's operations). A few mkdir calls block for
 * microseconds, so this is the sync walk rather than a second copy of it.
 */
export async function makeDirs(dir: string): Promise<void> {
  makeDirsSync(dir);
}
