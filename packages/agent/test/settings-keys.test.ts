/**
 * settings.json as parley reads it (in-process): the keys that matter in pi's RPC mode, pi's
 * migrations of older keys, pi's timeout values, the global-only `httpProxy`, and warnings for
 * values of the wrong type. The effects on requests are covered by pi-settings-rpc.e2e.test.ts.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyHttpProxySetting, proxyInEnvironment } from "../src/config/http-dispatcher.js";
import { loadSettings } from "../src/config/settings.js";
import { place, write } from "./helpers/pi-home.js";

function settingsOf(global: object, project?: object) {
  const p = place("parley-settings-keys-");
  write(join(p.agentDir, "settings.json"), global);
  if (project) write(join(p.cwd, ".pi", "settings.json"), project);
  return loadSettings({ cwd: p.cwd, agentDir: p.agentDir, home: p.home });
}

describe("settings.json keys", () => {
  it("reads thinkingBudgets, transport, retry (maxAgentDelayMs, provider), httpIdleTimeoutMs, images and branchSummary", () => {
    const { settings, warnings } = settingsOf({
      thinkingBudgets: { minimal: 1000, high: 30000 },
      transport: "websocket",
      retry: { enabled: true, maxRetries: 5, maxAgentDelayMs: 30000, provider: { timeoutMs: 1234, maxRetries: 2, maxRetryDelayMs: 0 } },
      httpIdleTimeoutMs: "disabled",
      images: { autoResize: false, blockImages: true },
      branchSummary: { reserveTokens: 9000, skipPrompt: true },
      compaction: {
        reserveTokens: 20000,
        modelOverrides: { "anthropic/claude-opus-4-6": { reserveTokens: 400000 }, "openrouter/a/b": { keepRecentTokens: 5 } },
      },
      // Terminal-UI keys are not read (they do nothing in pi's RPC mode either).
      hideThinkingBlock: true,
      theme: "light",
    });
    expect(warnings).toEqual([]);
    expect(settings).toMatchObject({
      thinkingBudgets: { minimal: 1000, high: 30000 },
      transport: "websocket",
      retry: { enabled: true, maxRetries: 5, maxAgentDelayMs: 30000, provider: { timeoutMs: 1234, maxRetries: 2, maxRetryDelayMs: 0 } },
      httpIdleTimeoutMs: 0,
      images: { autoResize: false, blockImages: true },
      branchSummary: { reserveTokens: 9000, skipPrompt: true },
      compaction: {
        reserveTokens: 20000,
        modelOverrides: { "anthropic/claude-opus-4-6": { reserveTokens: 400000 }, "openrouter/a/b": { keepRecentTokens: 5 } },
      },
    });
    expect(settingsOf({ httpIdleTimeoutMs: " 45000 " }).settings.httpIdleTimeoutMs).toBe(45000);
  });

  it("applies pi's migrations: queueMode, websockets, retry.maxDelayMs", () => {
    expect(settingsOf({ queueMode: "all", websockets: true, retry: { maxDelayMs: 5000 } }).settings).toMatchObject({
      steeringMode: "all",
      transport: "websocket",
      retry: { provider: { maxRetryDelayMs: 5000 } },
    });
    // The newer key wins where both are present.
    expect(settingsOf({ queueMode: "all", steeringMode: "one-at-a-time", websockets: true, transport: "sse" }).settings).toMatchObject({
      steeringMode: "one-at-a-time",
      transport: "sse",
    });
  });

  it("merges the project's file at every depth, as the newest pi: retry.provider and compaction.modelOverrides entries merge field by field", () => {
    const { settings } = settingsOf(
      {
        retry: { maxRetries: 4, provider: { timeoutMs: 1000, maxRetries: 3 } },
        images: { blockImages: true },
        compaction: { keepRecentTokens: 100, modelOverrides: { "p/m": { reserveTokens: 7 } } },
      },
      {
        retry: { provider: { maxRetries: 1 } },
        images: { autoResize: false },
        compaction: { reserveTokens: 9, modelOverrides: { "p/m": { keepRecentTokens: 3 } } },
      },
    );
    expect(settings.retry).toEqual({ maxRetries: 4, provider: { timeoutMs: 1000, maxRetries: 1 } });
    expect(settings.images).toEqual({ blockImages: true, autoResize: false });
    // A global model-specific value beats a project-wide fallback: the project must override that model's entry.
    expect(settings.compaction).toEqual({ keepRecentTokens: 100, reserveTokens: 9, modelOverrides: { "p/m": { reserveTokens: 7, keepRecentTokens: 3 } } });
  });

  it("reads httpProxy from the global file only", () => {
    expect(settingsOf({ httpProxy: " http://proxy.example:8080 " }).settings.httpProxy).toBe("http://proxy.example:8080");
    expect(settingsOf({}, { httpProxy: "http://project.example:1" }).settings.httpProxy).toBeUndefined();
  });

  it("warns about values of the wrong type and ignores them", () => {
    const { settings, warnings } = settingsOf({
      transport: "carrier-pigeon",
      thinkingBudgets: { low: "lots" },
      retry: { provider: { timeoutMs: -1 } },
      httpIdleTimeoutMs: "soon",
      images: [],
      modelThinkingLevels: { "openai/gpt-5": 3 },
    });
    expect(settings.transport).toBeUndefined();
    expect(settings.modelThinkingLevels).toBeUndefined();
    expect(settings.httpIdleTimeoutMs).toBeUndefined();
    expect(settings.thinkingBudgets).toEqual({});
    expect(settings.retry).toEqual({ provider: {} });
    expect(settings.images).toBeUndefined();
    expect(warnings.join("\n")).toMatch(/"transport".*carrier-pigeon/);
    expect(warnings.join("\n")).toMatch(/"thinkingBudgets\.low"/);
    expect(warnings.join("\n")).toMatch(/"retry\.provider\.timeoutMs"/);
    expect(warnings.join("\n")).toMatch(/"httpIdleTimeoutMs"/);
    expect(warnings.join("\n")).toMatch(/"images" must be an object/);
    expect(warnings.join("\n")).toMatch(/"modelThinkingLevels"/);
  });

  it("reads the newest pi's modelThinkingLevels (levels keyed provider/modelId)", () => {
    const { settings, warnings } = settingsOf({ modelThinkingLevels: { "openai/gpt-5": "high", "anthropic/claude-opus-4-6": "max" } });
    expect(warnings).toEqual([]);
    expect(settings.modelThinkingLevels).toEqual({ "openai/gpt-5": "high", "anthropic/claude-opus-4-6": "max" });
  });

  it("httpProxy fills HTTP_PROXY/HTTPS_PROXY only where the environment has none, as pi", () => {
    const env: NodeJS.ProcessEnv = { HTTPS_PROXY: "http://mine:1" };
    expect(proxyInEnvironment({})).toBe(false);
    applyHttpProxySetting("http://from-settings:2", env);
    expect(env).toEqual({ HTTPS_PROXY: "http://mine:1", HTTP_PROXY: "http://from-settings:2" });
    expect(proxyInEnvironment(env)).toBe(true);
  });
});
