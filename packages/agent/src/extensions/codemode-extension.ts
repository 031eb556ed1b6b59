/**
 * pi 1.6's `builtin:codemode`: the `codemode` tool, registered inactive. `--tools +codemode`,
 * settings' `defaultTools: ["+codemode"]`, `pi.setActiveTools()` or the MCP support (for servers
 * whose tools only scripts reach) activate it. Its description and the notes on the declared
 * tools come from `prepareLoadout` (codemode-loadout.ts); a script runs in pi-codemode's sandbox
 * (codemode-run.ts, loaded on the first script). Settings: `codemode.mode` (`on`/`only`) and
 * `codemode.inlineBudget`.
 */
import { CODEMODE_SOURCE_GRAMMAR } from "@earendil-works/pi-codemode/source";
import type { TSchema } from "typebox";
import { jsonSchemaParameters } from "../mcp/json-schema.js";
import type { ToolDefinition } from "../tools/types.js";
import {
  CODEMODE_GUIDELINE,
  CODEMODE_SNIPPET,
  CODEMODE_TOOL_NAME,
  type CodemodeMode,
  codemodeDescription,
  DEFAULT_INLINE_BUDGET,
  prepareCodemodeLoadout,
} from "./codemode-loadout.js";
import type { CodemodeDetails } from "./codemode-run.js";
import type { ExtensionAPI, ExtensionFactory, ExtensionToolContext } from "./types.js";

const PARAMETERS = jsonSchemaParameters({
  type: "object",
  properties: { code: { type: "string", description: "Raw JavaScript source." } },
  required: ["code"],
});

/** Words of the script, or every tool when it looks tools up: which MCP servers a call may need. */
function scriptReach(code: unknown): "all" | readonly string[] {
  if (typeof code !== "string") return [];
  return /\b(searchTools|describeNamespace|describeTool|ALL_TOOLS)\b/.test(code) ? "all" : (code.match(/\w+/g) ?? []);
}

function settingsOf(pi: Pick<ExtensionAPI, "getSettings">): Record<string, unknown> {
  const codemode = pi.getSettings()["codemode"];
  return typeof codemode === "object" && codemode !== null ? (codemode as Record<string, unknown>) : {};
}

const modeOf = (pi: Pick<ExtensionAPI, "getSettings">): CodemodeMode => (settingsOf(pi)["mode"] === "only" ? "only" : "on");

function inlineBudgetOf(pi: Pick<ExtensionAPI, "getSettings">): number {
  const budget = settingsOf(pi)["inlineBudget"];
  return typeof budget === "number" && Number.isFinite(budget) && budget >= 0 ? budget : DEFAULT_INLINE_BUDGET;
}

/** What pi's `createCodemodeExtension(options)` takes. */
export interface CodemodeOptions {
  mode?: CodemodeMode;
  inlineBudget?: number;
  /** Scripts get the `models` global (the catalogue, classifiers, image models). Default true, as in pi. */
  models?: boolean;
}

export function codemodeDefinition(
  pi: Pick<ExtensionAPI, "getSettings" | "getAllTools" | "appendEntry">,
  options: CodemodeOptions = {},
): ToolDefinition<TSchema, CodemodeDetails, unknown, ExtensionToolContext> {
  // As pi: only `true` turns it on, so an option of another type leaves scripts without it.
  const models = (options.models ?? true) === true;
  return {
    name: CODEMODE_TOOL_NAME,
    label: CODEMODE_TOOL_NAME,
    description: codemodeDescription([], undefined, models),
    promptSnippet: CODEMODE_SNIPPET,
    promptGuidelines: [CODEMODE_GUIDELINE],
    parameters: PARAMETERS,
    // A script must not start another script.
    exposure: "model-only",
    defaultActive: false,
    prepareLoadout: (loadout) =>
      prepareCodemodeLoadout(loadout, {
        mode: () => options.mode ?? modeOf(pi),
        inlineBudget: () => options.inlineBudget ?? inlineBudgetOf(pi),
        models,
      }),
    reachesTools: (input) => scriptReach(input["code"]),
    // Models that can write the script as raw text rather than a JSON-escaped string do so.
    constrainedSampling: { type: "grammar", variants: { openai_lark: CODEMODE_SOURCE_GRAMMAR } },
    async execute(toolCallId, params, signal, onUpdate, ctx) {
      const { code } = params as { code?: unknown };
      if (typeof code !== "string") throw new Error("code must be a string");
      const { runCodemode } = await import("./codemode-run.js");
      return runCodemode(toolCallId, { code }, signal, onUpdate, ctx, {
        appendEntry: (customType, data) => pi.appendEntry(customType, data),
        guidelines: () => new Map(pi.getAllTools().map((tool) => [tool.name, tool.promptGuidelines ?? []])),
        namespaceOf: (name) => pi.getAllTools().find((tool) => tool.name === name)?.namespace,
        models,
      });
    },
  };
}

/** pi's `createCodemodeExtension()`: the factory with fixed options instead of the settings' ones. */
export function createCodemodeExtension(options: CodemodeOptions = {}): ExtensionFactory {
  return (pi) => {
    pi.registerTool({ ...codemodeDefinition(pi, options) });
  };
}

export const codemodeExtension: ExtensionFactory = createCodemodeExtension();
