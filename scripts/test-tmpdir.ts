/**
 * vitest global setup: each run of the suite gets a temporary folder of its own, as TMPDIR, for
 * every temp folder a test (or an agent it spawns) makes, and removes it when the run ends. A test
 * that forgets to clean up leaves nothing in the machine's /tmp, and two runs at once do not meet.
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

const PREFIX = "parley-test-run-";

export default function privateTmpdir(): () => void {
  // Each vitest project runs the setup: the first one's folder serves them all.
  if (basename(tmpdir()).startsWith(PREFIX)) return () => {};
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  const previous = process.env["TMPDIR"];
  process.env["TMPDIR"] = dir;
  return () => {
    if (previous === undefined) delete process.env["TMPDIR"];
    else process.env["TMPDIR"] = previous;
    remove(dir);
  };
}

/** Removes the tree, making folders a test left unreadable (the read-only cases) removable first. */
function remove(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    openUp(dir);
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

function openUp(dir: string): void {
  try {
    chmodSync(dir, 0o700);
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) openUp(join(dir, entry.name));
  } catch {
    // gone, or not ours: rmSync reports what remains
  }
}
