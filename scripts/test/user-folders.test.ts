import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { snapshotUserFolders, userFolderChanges } from "../test-user-folders.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fakeHome(): string {
  const home = mkdtempSync(join(tmpdir(), "user-folders-"));
  made.push(home);
  mkdirSync(join(home, ".pi", "agent"), { recursive: true });
  writeFileSync(join(home, ".pi", "agent", "settings.json"), "{}\n");
  return home;
}

describe("the guard over the user's own folders", () => {
  it("sees a file added, changed or removed under ~/.pi and ~/.parley, and nothing else", () => {
    const home = fakeHome();
    const before = snapshotUserFolders(home);
    expect(userFolderChanges(before, snapshotUserFolders(home))).toEqual([]);

    writeFileSync(join(home, "unrelated.txt"), "not pi's");
    expect(userFolderChanges(before, snapshotUserFolders(home))).toEqual([]);

    writeFileSync(join(home, ".pi", "agent", "models-store.json"), "{}");
    mkdirSync(join(home, ".parley"));
    writeFileSync(join(home, ".pi", "agent", "settings.json"), '{"theme":"x"}\n');
    const changes = userFolderChanges(before, snapshotUserFolders(home));
    expect(changes).toContain(`added ${join(home, ".pi", "agent", "models-store.json")}`);
    expect(changes).toContain(`added ${join(home, ".parley")}`);
    expect(changes).toContain(`changed ${join(home, ".pi", "agent", "settings.json")}`);

    rmSync(join(home, ".pi", "agent", "settings.json"));
    expect(userFolderChanges(before, snapshotUserFolders(home))).toContain(`removed ${join(home, ".pi", "agent", "settings.json")}`);
  });

  it("runs the suite with a HOME of its own, inside the run's temporary folder", () => {
    expect(homedir()).not.toBe(userInfo().homedir);
    expect(homedir().startsWith(tmpdir())).toBe(true);
    expect(process.env["PI_CODING_AGENT_DIR"]).toBeUndefined();
  });
});
