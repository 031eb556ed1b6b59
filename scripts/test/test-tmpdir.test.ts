import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import privateTmpdir from "../test-tmpdir.js";

describe("the suite's private TMPDIR", () => {
  const outer = process.env["TMPDIR"];
  afterEach(() => {
    process.env["TMPDIR"] = outer;
  });

  it("every test runs with it", () => {
    expect(basename(tmpdir())).toMatch(/^parley-test-run-/);
  });

  it("a second project's setup reuses it and removes nothing", () => {
    const teardown = privateTmpdir();
    expect(tmpdir()).toBe(outer);
    teardown();
    expect(existsSync(tmpdir())).toBe(true);
  });

  it("is made under the machine's TMPDIR and removed at the end, unreadable folders included", () => {
    const machine = mkdtempSync(join(tmpdir(), "machine-"));
    process.env["TMPDIR"] = machine;
    const teardown = privateTmpdir();
    const run = tmpdir();
    expect(dirname(run)).toBe(machine);
    const locked = join(run, "left-behind", "locked");
    mkdirSync(locked, { recursive: true });
    writeFileSync(join(locked, "file"), "x");
    chmodSync(locked, 0o000);
    teardown();
    expect(process.env["TMPDIR"]).toBe(machine);
    expect(existsSync(run)).toBe(false);
  });
});
