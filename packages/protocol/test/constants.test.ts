import { describe, expect, it } from "vitest";
import { isThinkingLevel, THINKING_LEVELS } from "../src/constants.js";
import { ThinkingLevel } from "../src/schema/commands.js";

describe("thinking levels (light subpath, no TypeBox)", () => {
  it("THINKING_LEVELS names exactly the ThinkingLevel schema's literals, lowest first", () => {
    expect(THINKING_LEVELS).toEqual(ThinkingLevel.anyOf.map((member: { const: string }) => member.const));
  });

  it("isThinkingLevel accepts each level and nothing else", () => {
    for (const level of THINKING_LEVELS) expect(isThinkingLevel(level)).toBe(true);
    for (const other of ["maximum", "OFF", "", undefined, null, 3, ["off"]]) expect(isThinkingLevel(other)).toBe(false);
  });
});
