/**
 * The codemode tool's loadout hook (extensions/codemode-loadout.ts) and its store
 * (extensions/codemode-run.ts), without a model: which tools the description lists, within the
 * inline budget and by namespace, what the declared tools' notes say, what mode "only" hides,
 * and how the branch's `codemode-store` entries make `load()`'s values.
 */
import { describe, expect, it } from "vitest";
import { codemodeDescription, prepareCodemodeLoadout } from "../src/extensions/codemode-loadout.js";
import { STORE_ENTRY_TYPE, storeOf } from "../src/extensions/codemode-run.js";
import type { SessionEntry } from "../src/session/session.js";
import type { LoadoutTool, ToolLoadout, ToolNamespace } from "../src/tools/types.js";

type Exposure = ReturnType<ToolLoadout["getExposure"]>;
const object = (properties: Record<string, unknown>) => ({ type: "object", properties, required: Object.keys(properties) });
const tool = (name: string, outputSchema?: object): LoadoutTool => ({
  name,
  description: `The ${name} tool.`,
  parameters: object({ path: { type: "string" } }),
  ...(outputSchema ? { outputSchema } : {}),
});

function loadout(
  declared: LoadoutTool[],
  callable: LoadoutTool[],
  exposure: Record<string, Exposure>,
  namespaces: Record<string, ToolNamespace> = {},
): ToolLoadout {
  return {
    declared,
    callable,
    registered: callable,
    getExposure: (name) => exposure[name] ?? "direct",
    getNamespace: (name) => namespaces[name],
    getPromptGuidelines: (name) => (name === "read" ? ["Read before you edit."] : []),
  };
}

const codemode: LoadoutTool = { name: "codemode", description: "", parameters: object({ code: { type: "string" } }) };
const bash = tool("bash", object({ output: { type: "string" }, exit_code: { type: "number" } }));
const read = tool("read");
const ns: ToolNamespace = { name: "mcp__docs", description: "Project docs" };
const search = tool("mcp__docs__search");
const fetchDoc = tool("mcp__docs__fetch");

describe("codemode's loadout", () => {
  it('mode "on": declared callable tools say what a script call resolves to; only non-direct, non-deferred tools are listed', () => {
    const changes = prepareCodemodeLoadout(
      loadout(
        [read, bash, codemode],
        [read, bash, search, fetchDoc],
        { codemode: "model-only", mcp__docs__search: "deferred", mcp__docs__fetch: "codemode" },
        {
          mcp__docs__search: ns,
          mcp__docs__fetch: ns,
        },
      ),
      { mode: () => "on", inlineBudget: () => 3000, models: true },
    );
    expect(changes.hiddenDeclarations).toEqual([]);
    expect(changes.descriptions?.["read"]).toBe("The read tool.\n\nFrom codemode: `tools.read(args)` resolves to a string.");
    expect(changes.descriptions?.["bash"]).toMatch(/resolves to `\{ output, exit_code \}`\.$/);
    const description = changes.descriptions?.["codemode"] ?? "";
    expect(description).toContain("Nested tools:");
    expect(description).toContain("## mcp__docs\nProject docs");
    expect(description).toContain("### `mcp__docs__fetch`");
    expect(description).not.toContain("mcp__docs__search");
    expect(description).not.toContain("### `read`");
  });

  it('mode "only": every callable tool is listed (with its guidelines) and the declared direct ones are hidden from requests', () => {
    const changes = prepareCodemodeLoadout(loadout([read, bash, codemode], [read, bash], { codemode: "model-only" }), {
      mode: () => "only",
      inlineBudget: () => 3000,
      models: false,
    });
    expect(changes.hiddenDeclarations).toEqual(["read", "bash"]);
    expect(changes.descriptions?.["read"]).toBeUndefined();
    const description = changes.descriptions?.["codemode"] ?? "";
    expect(description).toContain("### `read`");
    expect(description).toContain("- Read before you edit.");
    expect(description).toContain("### `bash`");
  });

  it("the inline budget: 0 lists only namespaces; a tight one shows some of a namespace; no listed tools leaves only the globals", () => {
    const input = (inlineBudget: number) => ({
      namespaces: new Map([
        ["mcp__docs__fetch", ns],
        ["mcp__docs__search", ns],
      ]),
      guidelines: new Map(),
      deferred: new Set<string>(),
      inlineBudget,
    });
    expect(codemodeDescription([fetchDoc, search], input(0))).toContain("## mcp__docs (tools not listed)");
    const one = codemodeDescription([fetchDoc, search], input(60));
    expect(one).toContain("## mcp__docs (some tools not listed)");
    expect(codemodeDescription([fetchDoc, search], input(100_000))).toMatch(/## mcp__docs\nProject docs\n/);
    expect(codemodeDescription([])).not.toContain("Nested tools:");
  });

  it("the store: the branch's codemode-store entries applied from the root, malformed ones skipped", () => {
    const entry = (data: unknown): SessionEntry =>
      ({ type: "custom", customType: STORE_ENTRY_TYPE, data, id: "x", parentId: null, timestamp: "" }) as SessionEntry;
    const branch = [entry({ set: { a: 1, b: { c: 2 } }, delete: [] }), entry({ set: "nope", delete: [] }), entry({ set: { a: 3 }, delete: ["b"] })];
    expect(storeOf(branch)).toEqual({ a: 3 });
    expect(storeOf([])).toEqual({});
  });
});
