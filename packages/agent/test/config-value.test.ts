/** pi 1.6's reading of configured values, shared by auth.json keys and MCP servers' env and headers. */
import { describe, expect, it } from "vitest";
import { resolveConfigTemplate } from "../src/config/config-value.js";
import { resolveMcpValue } from "../src/mcp/config-values.js";

const env = { KEY: "k-1", EMPTY: "" };

describe("configured values as the newest pi reads them", () => {
  it("$NAME and ${NAME} are variables, $$ and $! escapes, a bare name is literal, the rest stays as written", () => {
    const cases: [string, string][] = [
      ["$KEY", "k-1"],
      ["Bearer ${KEY}!", "Bearer k-1!"],
      ["$$KEY", "$KEY"],
      ["$!x", "!x"],
      ["KEY", "KEY"],
      ["${1bad} $1 ${open", "${1bad} $1 ${open"],
      ["cost $", "cost $"],
    ];
    for (const [value, expected] of cases) {
      expect(resolveConfigTemplate(value, env), value).toBe(expected);
      expect(resolveMcpValue(value, "test value", env), value).toBe(expected);
    }
  });

  it("an unset or empty variable makes the whole value unresolved (MCP names it)", () => {
    for (const value of ["$MISSING", "a ${EMPTY} b"]) expect(resolveConfigTemplate(value, env), value).toBeUndefined();
    expect(() => resolveMcpValue("$MISSING ${EMPTY}", "the value", env)).toThrow("Failed to resolve the value from environment variables: MISSING, EMPTY");
  });

  it("!command takes the command's trimmed output", () => {
    expect(resolveConfigTemplate("!printf ' tok '", env)).toBe("tok");
    expect(resolveMcpValue("!printf ' tok '", "v", env)).toBe("tok");
  });
});
