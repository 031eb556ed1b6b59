/**
 * vitest global setup: each run of the suite gets a temporary folder of its own, as TMPDIR, for
 * every temp folder a test (or an agent it spawns) makes, and removes it when the run ends. A test
 * that forgets to clean up leaves nothing in the machine's /tmp, and two runs at once do not meet.
 *
 * The run's HOME is a folder inside it too, so a test that spawns pi or parley without giving it a
 * private HOME cannot reach the user's `~/.pi`. A child started without HOME at all falls back to
 * the password database's home, which no variable can redirect: the run therefore compares the
 * real home's pi and parley folders before and after, and fails when they changed.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { snapshotUserFolders, userFolderChanges } from "./test-user-folders.js";

const PREFIX = "parley-test-run-";
/** Set to 1 to run the suite while you use pi or parley yourself (their writes would trip the guard). */
const ALLOW = "PARLEY_TEST_ALLOW_HOME_CHANGES";

export default function privateTmpdir(): () => void {
  // Each vitest project runs the setup: the first one's folder serves them all.
  if (basename(tmpdir()).startsWith(PREFIX)) return () => {};
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  const home = join(dir, "home");
  mkdirSync(home);
  const saved = { TMPDIR: process.env["TMPDIR"], HOME: process.env["HOME"], PI_CODING_AGENT_DIR: process.env["PI_CODING_AGENT_DIR"] };
  const before = snapshotUserFolders();
  process.env["TMPDIR"] = dir;
  process.env["HOME"] = home;
  // The user's own agent folder, if they point pi at one, is not the suite's either.
  delete process.env["PI_CODING_AGENT_DIR"];
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    remove(dir);
    const changes = userFolderChanges(before, snapshotUserFolders());
    if (changes.length > 0 && process.env[ALLOW] !== "1") {
      // A thrown error here is printed but leaves vitest's exit status 0: set it ourselves.
      console.error(
        `\nFAIL: the test run changed the user's own folders (a spawned pi or parley without a private HOME?):\n  ${changes.join("\n  ")}\n` +
          `(set ${ALLOW}=1 if you used pi or parley yourself during the run)\n`,
      );
      process.exitCode = 1;
    }
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
