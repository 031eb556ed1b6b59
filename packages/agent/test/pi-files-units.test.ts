/**
 * The pieces behind pi's files, in-process: the model scope's patterns, models.json's adjustments
 * of built-in models, and where project trust looks (resources that need it, trust.json).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Api, Model } from "@earendil-works/pi-ai/compat";
import { describe, expect, it } from "vitest";
import { adjustBuiltIn, loadModelsFile, providerKey } from "../src/config/models-file.js";
import { hasTrustRequiringResources, storedTrust } from "../src/config/project-trust.js";
import { rememberTrust } from "../src/config/trust-store.js";
import { resolveModelScope } from "../src/models/model-scope.js";

const model = (provider: string, id: string, extra: Partial<Model<Api>> = {}): Model<Api> => ({
  id,
  name: id,
  api: "openai-completions" as Api,
  provider,
  baseUrl: "https://example.invalid",
  reasoning: false,
  input: ["text"],
  cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1000,
  maxTokens: 100,
  ...extra,
});

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

describe("the model scope (--models, enabledModels)", () => {
  const all = [model("a", "m-1"), model("a", "m-2"), model("b", "x-1"), model("c", "m-3")];
  const models = {
    availableModels: () => all,
    // c has no credentials: never in the scope.
    hasAuth: (m: Model<Api>) => m.provider !== "c",
    matchModel: (pattern: string) => {
      const [ref, level] = pattern.split(":");
      const found = all.find((m) => `${m.provider}/${m.id}` === ref || m.id === ref);
      if (!found) throw new Error("not found");
      return { model: found, ...(level ? { thinkingLevel: level as "high" } : {}) };
    },
  };

  it("globs select every usable match (provider/id or id), once; other patterns one model; misses are warned", () => {
    const scope = resolveModelScope(["m-*:high", "a/m-1", "b/x-1", "nothing-here", "[ab]/?-9"], models);
    expect(scope.models.map((s) => `${s.model.provider}/${s.model.id}:${s.thinkingLevel ?? ""}`)).toEqual(["a/m-1:high", "a/m-2:high", "b/x-1:"]);
    expect(scope.warnings).toEqual(['No models match pattern "nothing-here"', 'No models match pattern "[ab]/?-9"']);
  });
});

describe("models.json and built-in models", () => {
  it("a provider entry without models adjusts the built-ins: baseUrl, headers, compat, key, per-model overrides", () => {
    const dir = mkdtempSync(join(tmpdir(), "models-json-"));
    write(
      join(dir, "models.json"),
      JSON.stringify({
        providers: {
          a: {
            baseUrl: "http://proxy.invalid",
            apiKey: "literal-key",
            headers: { "x-a": "1" },
            compat: { supportsStore: false },
            modelOverrides: { "m-1": { name: "Renamed", cost: { input: 9 }, headers: { "x-m": "2" } } },
          },
        },
      }),
    );
    const file = loadModelsFile(dir);
    expect(file.warnings).toEqual([]);
    expect(file.providers).toEqual([]);
    expect(providerKey(file, "a")).toBe("literal-key");
    const m1 = adjustBuiltIn(file, model("a", "m-1", { headers: { own: "0" } }));
    expect(m1).toMatchObject({
      name: "Renamed",
      baseUrl: "http://proxy.invalid",
      cost: { input: 9, output: 2 },
      headers: { own: "0", "x-a": "1", "x-m": "2" },
    });
    expect((m1 as { compat?: unknown }).compat).toEqual({ supportsStore: false });
    expect(adjustBuiltIn(file, model("a", "m-2")).name).toBe("m-2");
    const other = model("b", "x-1");
    expect(adjustBuiltIn(file, other)).toBe(other);
  });
});

describe("project trust: where pi looks", () => {
  it("resources that need trust: .pi/ entries, .agents/skills in the folder or an ancestor (not ~/.agents/skills)", () => {
    const base = mkdtempSync(join(tmpdir(), "trust-"));
    const home = join(base, "home");
    const cwd = join(base, "a", "b");
    mkdirSync(cwd, { recursive: true });
    mkdirSync(join(home, ".agents", "skills"), { recursive: true });
    expect(hasTrustRequiringResources(cwd, home)).toBe(false);
    mkdirSync(join(cwd, ".pi"), { recursive: true });
    write(join(cwd, ".pi", "notes.txt"), "not a resource");
    expect(hasTrustRequiringResources(cwd, home)).toBe(false);
    mkdirSync(join(base, "a", ".agents", "skills"), { recursive: true });
    expect(hasTrustRequiringResources(cwd, home)).toBe(true);
    expect(hasTrustRequiringResources(home, home)).toBe(false);
  });

  it("trust.json: the folder's entry, else the nearest ancestor's; a broken file is reported", () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "trust-store-")));
    const cwd = join(base, "x", "y");
    mkdirSync(cwd, { recursive: true });
    expect(storedTrust(base, cwd)).toEqual({ decision: undefined });
    write(join(base, "trust.json"), JSON.stringify({ [join(base, "x")]: true }));
    expect(storedTrust(base, cwd)).toEqual({ decision: true });
    write(join(base, "trust.json"), JSON.stringify({ [join(base, "x")]: true, [cwd]: false }));
    expect(storedTrust(base, cwd)).toEqual({ decision: false });
    write(join(base, "trust.json"), "{oops");
    expect(storedTrust(base, cwd).warning).toContain("trust.json");
  });

  it("trust.json: decisions saved at the same time each read-merge-write under the lock, so none is lost", async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "trust-store-")));
    write(join(base, "trust.json"), JSON.stringify({ "/kept": null }));
    const folders = ["a", "b", "c", "d", "e"].map((name) => join(base, name));
    const warnings = await Promise.all(folders.map((folder, i) => rememberTrust(base, folder, i % 2 === 0)));
    expect(warnings).toEqual(folders.map(() => undefined));
    expect(JSON.parse(readFileSync(join(base, "trust.json"), "utf8"))).toEqual({
      "/kept": null,
      ...Object.fromEntries(folders.map((folder, i) => [folder, i % 2 === 0])),
    });
    expect(readdirSync(base)).toEqual(["trust.json"]);
  });
});
