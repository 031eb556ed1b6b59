/**
 * The newest pi's start-up tool selection (tool-selection.ts): `--tools` as an allowlist of names
 * and patterns or as +name/-name changes to the defaults, `--exclude-tools` patterns, settings'
 * `defaultTools` (the project's over the user's), `--no-tools` / `--no-builtin-tools`.
 */
import { describe, expect, it } from "vitest";
import { mergeDefaultTools, resolveDefaultTools, selectTools, toolListError } from "../src/agent/tool-selection.js";
import type { ToolPolicy } from "../src/agent/agent-config.js";

/** The selection's start, and which of these later-registered tools it activates. */
function start(policy: ToolPolicy, later: string[] = ["ext_tool", "grep"]): { initial: string[]; later: Record<string, boolean | "default"> } {
  const s = selectTools(policy);
  return {
    initial: s.initial,
    later: Object.fromEntries(later.map((n) => [n, s.excluded(n) ? false : s.allowed ? s.allowed(n) : s.initial.includes(n) ? true : "default"])),
  };
}

describe("tool selection at start-up", () => {
  it("defaults to read, bash, edit, write; extension tools activate as they register", () => {
    expect(start({})).toEqual({ initial: ["read", "bash", "edit", "write"], later: { ext_tool: "default", grep: "default" } });
  });

  it("--tools: names and patterns are an allowlist; +name/-name change the defaults", () => {
    expect(start({ allow: ["read", "gr*"] })).toEqual({ initial: ["read"], later: { ext_tool: false, grep: true } });
    expect(start({ allow: ["+grep", "-bash"] })).toEqual({ initial: ["read", "edit", "write", "grep"], later: { ext_tool: "default", grep: true } });
    // With --no-tools the modified list is all there is.
    expect(start({ allow: ["+grep"], none: "all" })).toEqual({ initial: ["grep"], later: { ext_tool: false, grep: true } });
    expect(start({ allow: ["+grep"], none: "builtin" })).toEqual({ initial: ["grep"], later: { ext_tool: "default", grep: true } });
  });

  it("--exclude-tools takes names and patterns, over everything else", () => {
    expect(start({ exclude: ["b*", "ext_tool"] })).toEqual({ initial: ["read", "edit", "write"], later: { ext_tool: false, grep: "default" } });
    expect(start({ allow: ["*"], exclude: ["write"] }).initial).toEqual([]);
    expect(selectTools({ allow: ["*"], exclude: ["write"] }).allowed?.("write")).toBe(true);
  });

  it("--no-tools: nothing starts active, nothing activates on registration", () => {
    expect(start({ none: "all" })).toEqual({ initial: [], later: { ext_tool: false, grep: false } });
  });

  it("settings' defaultTools replace the defaults (plain names) or change them (+name/-name)", () => {
    expect(start({ defaults: resolveDefaultTools(["read", "grep"]) }).initial).toEqual(["read", "grep"]);
    expect(start({ defaults: resolveDefaultTools(["+ls", "-edit"]) }).initial).toEqual(["read", "bash", "write", "ls"]);
    expect(start({ defaults: resolveDefaultTools([]) }).initial).toEqual([]);
    // --tools modifiers apply to settings' defaults.
    expect(start({ defaults: ["read"], allow: ["+find"] }).initial).toEqual(["read", "find"]);
  });

  it("the project's defaultTools replace the user's, or add to them when they are only modifiers", () => {
    expect(mergeDefaultTools(["read"], ["+grep"])).toEqual(["read", "+grep"]);
    expect(mergeDefaultTools(["read"], ["bash"])).toEqual(["bash"]);
    expect(mergeDefaultTools(undefined, ["+grep"])).toEqual(["+grep"]);
    expect(mergeDefaultTools(["read"], undefined)).toEqual(["read"]);
    expect(resolveDefaultTools(["read", "+grep"])).toEqual(["read", "grep"]);
  });

  it("--tools refuses names mixed with modifiers, and patterns in modifiers, in pi's words", () => {
    expect(toolListError(["read", "+grep"])).toBe("tool names cannot be mixed with +name or -name entries");
    expect(toolListError(["+gr*"])).toBe("+name and -name entries take exact tool names, not patterns: +gr*");
    expect(toolListError(["read", "gr*"])).toBeUndefined();
    expect(toolListError(["+grep", "-bash"])).toBeUndefined();
  });
});
