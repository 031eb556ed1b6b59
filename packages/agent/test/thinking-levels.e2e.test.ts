/**
 * Thinking levels against the newest pi (README, Compatibility with pi: `--thinking max`). A
 * model's levels come from its catalogue entry (`thinkingLevelMap`); pi-ai 0.73.1's level names
 * differ from pi-ai 1.6.0's on some models. These tests pin
 * the difference with the installed packages: on Claude Opus 4.6 pi-ai 1.6.0 names its top level
 * `max`, 0.73.1 names it `xhigh`, and both send the provider's "max" effort for it; parley runs
 * 1.6.0's catalogue, so through the spawned CLI the levels are 1.6.0's.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PARLEY_BIN, ROOT, spawnAgent } from "./helpers/spawn.js";

interface CatalogueModel {
  id: string;
  reasoning: boolean;
  thinkingLevelMap?: Record<string, string | null>;
}
interface LevelApi {
  getSupportedThinkingLevels(model: CatalogueModel): string[];
  clampThinkingLevel(model: CatalogueModel, level: string): string;
}

const newestAi = (await import(join(ROOT, "node_modules/@earendil-works/pi-ai/dist/index.js"))) as LevelApi;
const { ANTHROPIC_MODELS } = (await import(join(ROOT, "node_modules/@earendil-works/pi-ai/dist/providers/anthropic.models.js"))) as {
  ANTHROPIC_MODELS: Record<string, CatalogueModel>;
};
const oldAi = (await import("@mariozechner/pi-ai")) as unknown as LevelApi & { getModel(provider: string, id: string): CatalogueModel };

const newestModel = (id: string): CatalogueModel => {
  const model = ANTHROPIC_MODELS[id];
  if (model === undefined) throw new Error(`pi-ai 1.6.0 has no anthropic/${id}`);
  return model;
};

describe("thinking levels: pi-ai 0.73.1's catalogue (parley) against pi-ai 1.6.0's (the newest pi)", () => {
  it('Claude Opus 4.6: the top level is xhigh in 0.73.1 and max in 1.6.0, the provider\'s "max" effort in both', () => {
    const newest = newestModel("claude-opus-4-6");
    const old = oldAi.getModel("anthropic", "claude-opus-4-6");
    expect(newestAi.getSupportedThinkingLevels(newest)).toEqual(["off", "minimal", "low", "medium", "high", "max"]);
    expect(oldAi.getSupportedThinkingLevels(old)).toEqual(["off", "minimal", "low", "medium", "high", "xhigh"]);
    expect(newest.thinkingLevelMap?.["max"]).toBe("max");
    expect(old.thinkingLevelMap?.["xhigh"]).toBe("max");
    // pi 1.6.0 clamps an asked xhigh up to max on this model.
    expect(newestAi.clampThinkingLevel(newest, "xhigh")).toBe("max");
  });

  it("Claude Opus 4.7: 1.6.0 adds max above xhigh, which 0.73.1's catalogue does not have", () => {
    const newest = newestModel("claude-opus-4-7");
    const old = oldAi.getModel("anthropic", "claude-opus-4-7");
    expect(newestAi.getSupportedThinkingLevels(newest).slice(-2)).toEqual(["xhigh", "max"]);
    expect(oldAi.getSupportedThinkingLevels(old).at(-1)).toBe("xhigh");
    expect(old.thinkingLevelMap?.["max"]).toBeUndefined();
  });

  it("through the CLI, parley runs pi-ai 1.6.0's catalogue: max is the model's own level, xhigh is clamped to it, the levels listed are 1.6.0's", async () => {
    const agent = spawnAgent(PARLEY_BIN, ["--mode", "rpc", "--no-session", "--model", "anthropic/claude-opus-4-6", "--thinking", "max"], {
      env: { ANTHROPIC_API_KEY: "sk-ant-test-not-a-real-key" },
    });
    const state = async () => (await agent.request({ type: "get_state" }, 60_000))["data"] as { thinkingLevel: string; model: { id: string } };
    expect(await state()).toMatchObject({ thinkingLevel: "max", model: { id: "claude-opus-4-6" } });
    const levels = (await agent.request({ type: "get_available_thinking_levels" }))["data"] as { levels: string[] };
    expect(levels.levels).toEqual(newestAi.getSupportedThinkingLevels(newestModel("claude-opus-4-6")));
    expect((await agent.request({ type: "set_thinking_level", level: "low" }))["success"]).toBe(true);
    expect((await agent.request({ type: "set_thinking_level", level: "xhigh" }))["success"]).toBe(true);
    expect((await state()).thinkingLevel).toBe("max");
    agent.closeInput();
    expect((await agent.exited).code).toBe(0);
  }, 120_000);
});
