/**
 * parley needs Node 22.19 or newer, as pi 1.6 does. An older Node gets one sentence naming the
 * version needed (no stack trace, nothing on stdout) from both entries, before anything loads.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./helpers/spawn.js";

const require = createRequire(import.meta.url);
const { nodeVersionProblem } = require(join(ROOT, "packages/agent/bin/node-version.js")) as {
  nodeVersionProblem: (version: string) => string | undefined;
};

const dir = mkdtempSync(join(tmpdir(), "parley-node-version-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs an entry on this Node, which reports itself as `version` (a preload rewrites process.versions). */
function runAs(version: string, entry: string, args: string[]) {
  const preload = join(dir, `as-${version}.cjs`);
  writeFileSync(preload, `Object.defineProperty(process.versions, "node", { value: ${JSON.stringify(version)} });\n`);
  return spawnSync(process.execPath, ["-r", preload, join(ROOT, entry), ...args], { encoding: "utf8", timeout: 60_000, input: "" });
}

describe("the Node version parley needs", () => {
  it("accepts 22.19 and every later version, refuses what is older", () => {
    for (const ok of ["22.19.0", "22.19.1", "22.20.0", "23.0.0", "24.22.3", "v26.1.0"]) expect(nodeVersionProblem(ok), ok).toBeUndefined();
    for (const old of ["22.18.9", "22.0.0", "20.20.2", "18.19.0"]) expect(nodeVersionProblem(old), old).toMatch(/needs Node\.js 22\.19 or newer/);
  });

  it("this suite runs on a Node parley supports", () => {
    expect(nodeVersionProblem(process.versions.node)).toBeUndefined();
  });

  for (const entry of ["packages/agent/bin/parley.js", "packages/agent/bin/rpc-entry.js"]) {
    it(`${entry} on Node 20 says which Node it needs in one line and exits 1, with nothing on stdout`, () => {
      const run = runAs("20.20.2", entry, ["--mode", "rpc", "--no-session"]);
      expect(run.status).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toBe("parley needs Node.js 22.19 or newer, and this is Node.js 20.20.2: install a newer Node.js and run parley again.\n");
    });
  }
});
