/**
 * pi's pattern entries (`!pattern`, `+path`, `-path`, globs) as resource-patterns.ts applies
 * them: examples from pi's docs, then properties over random file sets and pattern lists.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyPatterns, enabledByOverrides, isPattern, splitPatterns } from "../src/resources/resource-patterns.js";

const BASE = "/pkg";
const files = ["/pkg/extensions/a.ts", "/pkg/extensions/legacy.ts", "/pkg/skills/brave/SKILL.md", "/pkg/skills/notes.md", "/pkg/prompts/review.md"];

describe("pattern entries, by example", () => {
  it("splits plain paths from patterns", () => {
    expect(splitPatterns(["skills", "*.md", "!x", "+y", "-z", "a?b"])).toEqual({ plain: ["skills"], patterns: ["*.md", "!x", "+y", "-z", "a?b"] });
    expect(isPattern("./extensions")).toBe(false);
  });

  it("globs keep their matches, ! drops, + adds back, - drops whatever else said", () => {
    const on = (patterns: string[]) => [...applyPatterns(files, patterns, BASE)];
    expect(on([])).toEqual(files);
    expect(on(["extensions/*.ts", "!extensions/legacy.ts"])).toEqual(["/pkg/extensions/a.ts"]);
    expect(on(["extensions/*.ts", "!extensions/legacy.ts", "+extensions/legacy.ts"])).toEqual(["/pkg/extensions/a.ts", "/pkg/extensions/legacy.ts"]);
    expect(on(["+./extensions/legacy.ts", "-extensions/legacy.ts", "!*.ts"])).toEqual(files.filter((f) => !f.endsWith(".ts")));
    // A skill matches by its folder: relative, by name, or absolute.
    expect(on(["brave"])).toEqual(["/pkg/skills/brave/SKILL.md"]);
    expect(on(["!skills/brave"])).not.toContain("/pkg/skills/brave/SKILL.md");
    expect(on(["-/pkg/skills/brave"])).not.toContain("/pkg/skills/brave/SKILL.md");
    // By file name anywhere; `**` crosses folders.
    expect(on(["review.md"])).toEqual(["/pkg/prompts/review.md"]);
    expect(on(["**/*.md", "!skills/**"])).toEqual(["/pkg/prompts/review.md"]);
  });

  it("discovered files: only !, + and - apply", () => {
    expect(enabledByOverrides("/a/skills/x/SKILL.md", ["other-path", "*.md"], "/a")).toBe(true);
    expect(enabledByOverrides("/a/skills/x/SKILL.md", ["!skills/x"], "/a")).toBe(false);
    expect(enabledByOverrides("/a/skills/x/SKILL.md", ["!skills/*", "+skills/x"], "/a")).toBe(true);
    expect(enabledByOverrides("/a/skills/x/SKILL.md", ["+skills/x", "-skills/x"], "/a")).toBe(false);
  });
});

const segment = fc.constantFrom("a", "b", "c", "x.md", "y.ts", "SKILL.md");
const relPath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join("/"));
const fileSet = fc.uniqueArray(relPath, { maxLength: 8 }).map((rels) => rels.map((r) => `${BASE}/${r}`));
const entry = fc.oneof(
  relPath,
  relPath.map((p) => `!${p}`),
  relPath.map((p) => `+${p}`),
  relPath.map((p) => `-${p}`),
  fc.constantFrom("*.md", "**/*.ts", "!**/SKILL.md", "a/*", "!a/**", "?/x.md"),
);
const patternList = fc.array(entry, { maxLength: 6 });

describe("pattern entries, properties", () => {
  it("-path always wins: an exactly named file is never enabled", () => {
    fc.assert(
      fc.property(fileSet, patternList, fc.nat(), (all, patterns, pick) => {
        if (all.length === 0) return;
        const target = all[pick % all.length]!;
        const rel = target.slice(BASE.length + 1);
        expect(applyPatterns(all, [...patterns, `-${rel}`], BASE).has(target)).toBe(false);
        expect(applyPatterns(all, [`-${rel}`, ...patterns], BASE).has(target)).toBe(false);
        expect(enabledByOverrides(target, [...patterns, `-${rel}`], BASE)).toBe(false);
      }),
    );
  });

  it("+path enables a file unless a -path names it; the result never leaves the file set", () => {
    fc.assert(
      fc.property(fileSet, patternList, fc.nat(), (all, patterns, pick) => {
        const result = applyPatterns(all, patterns, BASE);
        for (const f of result) expect(all).toContain(f);
        if (all.length === 0) return;
        const target = all[pick % all.length]!;
        const rel = target.slice(BASE.length + 1);
        const forced = patterns.filter((p) => !p.startsWith("-"));
        expect(applyPatterns(all, [...forced, `+${rel}`], BASE).has(target)).toBe(true);
        expect(enabledByOverrides(target, [...forced, `+${rel}`], BASE)).toBe(true);
      }),
    );
  });

  it("with no overrides, discovery keeps everything; adding ! entries only removes", () => {
    fc.assert(
      fc.property(fileSet, fc.array(relPath, { maxLength: 4 }), (all, excluded) => {
        const plain = applyPatterns(all, [], BASE);
        expect([...plain]).toEqual(all);
        const fewer = applyPatterns(
          all,
          excluded.map((p) => `!${p}`),
          BASE,
        );
        for (const f of fewer) expect(plain.has(f)).toBe(true);
        for (const f of all) expect(enabledByOverrides(f, [], BASE)).toBe(true);
      }),
    );
  });
});
