/**
 * settings.json's `packages` written as pi writes it: its lock honoured, the file replaced whole,
 * other keys kept in their order with pi's migrations, a file that is not JSON left alone.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { entrySource, writePackages } from "../src/packages/package-settings.js";
import { compareVersions, noMatchMessage } from "../src/packages/package-manager.js";

const folder = (): string => mkdtempSync(join(tmpdir(), "parley-pkgsettings-"));

describe("writePackages", () => {
  it("keeps every other key in its order, applies pi's migrations and writes pi's text (two-space JSON, no final newline)", async () => {
    const dir = folder();
    const file = join(dir, "settings.json");
    writeFileSync(file, '{"queueMode":"all","zeta":{"x":[1]},"retry":{"maxDelayMs":5},"packages":["npm:a",{"source":"npm:b","skills":[]},7],"alpha":true}\n');
    const warning = await writePackages(file, (current) => [...current, "npm:c"]);
    expect(warning).toBeUndefined();
    const text = readFileSync(file, "utf8");
    expect(text).toBe(
      JSON.stringify(
        {
          zeta: { x: [1] },
          retry: { provider: { maxRetryDelayMs: 5 } },
          packages: ["npm:a", { source: "npm:b", skills: [] }, 7, "npm:c"],
          alpha: true,
          steeringMode: "all",
        },
        null,
        2,
      ),
    );
    // No lock and no temporary file left.
    expect(readdirSync(dir)).toEqual(["settings.json"]);
  });

  it("makes the file and its folder when absent; a change that returns undefined writes nothing", async () => {
    const dir = join(folder(), "a", "b");
    const file = join(dir, "settings.json");
    await writePackages(file, () => undefined);
    expect(existsSync(file)).toBe(false);
    await writePackages(file, () => ["./x"]);
    expect(readFileSync(file, "utf8")).toBe('{\n  "packages": [\n    "./x"\n  ]\n}');
  });

  it("waits while pi holds the lock (settings.json.lock), and writes once it is released", async () => {
    const dir = folder();
    const file = join(dir, "settings.json");
    writeFileSync(file, '{"packages":[]}');
    mkdirSync(`${file}.lock`);
    let done = false;
    const writing = writePackages(file, (current) => [...current, "npm:late"]).then((w) => {
      done = true;
      return w;
    });
    // Many turns of the event loop: still waiting, the file untouched.
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 5));
    expect(done).toBe(false);
    expect(readFileSync(file, "utf8")).toBe('{"packages":[]}');
    rmdirSync(`${file}.lock`);
    expect(await writing).toBeUndefined();
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ packages: ["npm:late"] });
  });

  it("a symlinked settings.json (a dotfiles repository's) is written at its target; the link stays a link", async () => {
    const dir = folder();
    mkdirSync(join(dir, "dotfiles"));
    const target = join(dir, "dotfiles", "settings.json");
    writeFileSync(target, '{"theme":"x"}');
    const link = join(dir, "agent", "settings.json");
    mkdirSync(join(dir, "agent"));
    symlinkSync(target, link);
    expect(await writePackages(link, () => ["npm:a"])).toBeUndefined();
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(target, "utf8"))).toEqual({ theme: "x", packages: ["npm:a"] });
    expect(readdirSync(join(dir, "dotfiles"))).toEqual(["settings.json"]);
  });

  it("leaves a file that is not JSON byte for byte, and says so", async () => {
    const dir = folder();
    const file = join(dir, "settings.json");
    writeFileSync(file, "{ not json");
    const warning = await writePackages(file, (current) => [...current, "npm:x"]);
    expect(warning).toContain("left as it is");
    expect(readFileSync(file, "utf8")).toBe("{ not json");
  });
});

describe("package entries", () => {
  it("a source is a string or an object's string source; anything else is no package", () => {
    expect([["npm:a"], { source: "./b", skills: [] }, 3, { source: 4 }, null].map(entrySource)).toEqual([undefined, "./b", undefined, undefined, undefined]);
    expect(entrySource("npm:a")).toBe("npm:a");
  });

  it("versions order as semver orders them (a pre-release before its release)", () => {
    const sorted = ["1.10.0", "1.2.0", "1.2.0-beta.10", "1.2.0-beta.2", "0.9.9", "2.0.0", "v2.0.1"].sort(compareVersions);
    expect(sorted).toEqual(["0.9.9", "1.2.0-beta.2", "1.2.0-beta.10", "1.2.0", "1.10.0", "2.0.0", "v2.0.1"]);
  });

  it("an update naming no listed package suggests the entry it probably meant, as pi does", () => {
    expect(noMatchMessage("foo", ["npm:foo@1.2.3"])).toBe("No matching package found for foo. Did you mean npm:foo@1.2.3?");
    expect(noMatchMessage("github.com/u/r", ["git:github.com/u/r@v1"])).toBe(
      "No matching package found for github.com/u/r. Did you mean git:github.com/u/r@v1?",
    );
    expect(noMatchMessage("bar", ["npm:foo"])).toBe("No matching package found for bar");
  });
});
