/**
 * The CLI launcher's code cache (src/startup/launch-bundle.ts), on a small wrapped CommonJS module in
 * a temp folder. Each load runs in a fresh Node process: the cache is written at exit.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const LAUNCHER = pathToFileURL(join(import.meta.dirname, "../dist/startup/launch-bundle.js")).href;

interface Load {
  cache: string;
  answer: number;
  sameInstance: boolean;
  cacheFiles: string[];
}

/** Loads `file` in a fresh `node` with the given flags (none by default, and no NODE_OPTIONS). */
function run(file: string, flags: string[] = []): { status: number | null; stdout: string; stderr: string } {
  const dir = join(file, "..");
  const driver = join(dir, "driver.mjs");
  writeFileSync(
    driver,
    `import { createRequire } from "node:module";
    import { loadBundle } from ${JSON.stringify(LAUNCHER)};
    const loaded = loadBundle(${JSON.stringify(file)});
    const again = createRequire(import.meta.url)(${JSON.stringify(file)});
    process.stdout.write(JSON.stringify({ cache: loaded.cache, answer: loaded.exports.answer(), sameInstance: again === loaded.exports && again.loads === 1 }));`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env["NODE_OPTIONS"];
  return spawnSync(process.execPath, [...flags, driver], { encoding: "utf8", env });
}

function load(file: string, flags: string[] = []): Load {
  const result = run(file, flags);
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return { ...(JSON.parse(result.stdout) as Omit<Load, "cacheFiles">), cacheFiles: cacheFiles(file) };
}

const cacheFiles = (file: string): string[] =>
  readdirSync(join(file, ".."))
    .filter((f) => f.endsWith(".cache"))
    .sort();

/** A bundle file as the build writes it: the module's source inside its CommonJS wrapper. */
const wrap = (source: string): string => `// a comment before the wrapper is fine\n(function (exports, require, module, __filename, __dirname) {${source}\n})`;

function bundle(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-launch-"));
  const file = join(dir, "bundle.js");
  writeFileSync(file, text);
  return file;
}

const SOURCE = `globalThis.__loads = (globalThis.__loads ?? 0) + 1;
exports.loads = globalThis.__loads;
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
exports.answer = () => fib(10) + require("node:path").basename(__filename).length;`;

describe("loadBundle", () => {
  it("compiles without a cache on the first run and writes one at exit; the next run uses it", () => {
    const file = bundle(wrap(SOURCE));
    const first = load(file);
    expect(first).toEqual({
      cache: "missing",
      answer: 55 + "bundle.js".length,
      sameInstance: true,
      cacheFiles: [expect.stringMatching(/^bundle\.js\.[^/]+\d\.cache$/)],
    });
    const second = load(file);
    expect(second).toEqual({ ...first, cache: "used" });
  });

  it("a cache V8 refuses is not used, and is replaced at exit", () => {
    const file = bundle(wrap(SOURCE));
    const [cacheName] = load(file).cacheFiles;
    const cacheFile = join(file, "..", cacheName as string);
    writeFileSync(cacheFile, Buffer.alloc(4096, 7));
    expect(load(file).cache).toBe("rejected");
    expect(readFileSync(cacheFile).equals(Buffer.alloc(4096, 7))).toBe(false);
    expect(load(file).cache).toBe("used");
  });

  it("a rebuilt bundle never runs from the old bundle's cache, even at the same length", () => {
    const file = bundle(wrap(SOURCE));
    load(file);
    // Same length, different code: V8 alone would accept the old cache (it checks the length).
    writeFileSync(file, wrap(SOURCE.replace("fib(10)", "fib(11)")));
    const rebuilt = load(file);
    expect(rebuilt.cache).toBe("missing");
    expect(rebuilt.answer).toBe(89 + "bundle.js".length);
  });

  it("the module is registered under its path: require() of it returns the same instance, evaluated once", () => {
    expect(load(bundle(wrap(SOURCE))).sameInstance).toBe(true);
  });

  it("runs with Node or V8 flags keep their own cache file, so they never make plain runs compile again", () => {
    const file = bundle(wrap(SOURCE));
    const [plainCache] = load(file).cacheFiles;
    const plainBytes = readFileSync(join(file, "..", plainCache as string));
    // --stack-size is a V8 flag that makes V8 refuse a cache written without it.
    const flagged = load(file, ["--stack-size=2000"]);
    expect(flagged.cache).toBe("missing");
    expect(flagged.cacheFiles).toEqual([plainCache, (plainCache as string).replace(/\.cache$/, ".flags.cache")]);
    expect(readFileSync(join(file, "..", plainCache as string)).equals(plainBytes)).toBe(true);
    expect(load(file).cache).toBe("used");
    expect(load(file, ["--stack-size=2000"]).cache).toBe("used");
    // Another flag set shares the flagged slot: V8 refuses it, it is rewritten, no third file.
    expect(load(file, ["--max-old-space-size=300"]).cache).toBe("rejected");
    expect(cacheFiles(file)).toHaveLength(2);
    expect(load(file).cache).toBe("used");
  });

  it("a file that is not a wrapped module is refused with a message that says to rebuild", () => {
    const result = run(bundle(`"use strict";\nconst answer = 42;\nanswer;`));
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/must hold one wrapped CommonJS module.*rebuild it with npm run build/);
  });
});

describe("pauseOptimizer", () => {
  /**
   * In a fresh unflagged node: a function made hot while the optimizer is paused stays unoptimized,
   * and is optimized once it is resumed; a bundle loaded while paused writes a cache that plain
   * runs accept, and reads one they wrote. V8's optimization status is read with a natives
   * syntax flag turned on at run time (a command-line flag would make the launcher leave the
   * optimizer alone).
   */
  function pausedRun(file: string): { cache: string; whilePaused: boolean; afterResume: boolean } {
    const driver = join(file, "..", "paused.mjs");
    writeFileSync(
      driver,
      `import { setFlagsFromString } from "node:v8";
      import { loadBundle, pauseOptimizer } from ${JSON.stringify(LAUNCHER)};
      const resume = pauseOptimizer();
      const loaded = loadBundle(${JSON.stringify(file)});
      // The flags are part of a code cache's check: this one is off again before the cache is written at exit.
      setFlagsFromString("--allow-natives-syntax");
      const status = new Function("f", "return %GetOptimizationStatus(f)");
      const optimized = (f) => (status(f) & 16) !== 0; // V8's OptimizationStatus::kOptimized
      const hot = (n) => { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; };
      for (let i = 0; i < 2000; i++) hot(1000);
      await new Promise((r) => setTimeout(r, 200));
      const whilePaused = optimized(hot);
      resume();
      for (let round = 0; round < 500 && !optimized(hot); round++) {
        for (let i = 0; i < 2000; i++) hot(1000);
        await new Promise((r) => setTimeout(r, 20));
      }
      process.stdout.write(JSON.stringify({ cache: loaded.cache, whilePaused, afterResume: optimized(hot) }));
      setFlagsFromString("--no-allow-natives-syntax");`,
    );
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env["NODE_OPTIONS"];
    const result = spawnSync(process.execPath, [driver], { encoding: "utf8", env });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    return JSON.parse(result.stdout) as { cache: string; whilePaused: boolean; afterResume: boolean };
  }

  it("keeps hot code unoptimized while paused and optimizes it once resumed; code caches stay valid across both", () => {
    const file = bundle(wrap(SOURCE));
    expect(pausedRun(file)).toEqual({ cache: "missing", whilePaused: false, afterResume: true });
    // The cache written at the paused run's exit serves a plain run, and the plain run's serves a paused one.
    expect(load(file).cache).toBe("used");
    expect(pausedRun(file).cache).toBe("used");
  });
});

describe("holdYoungGeneration", () => {
  /** In a fresh unflagged node: the young generation's size after a burst of long-lived objects, held or not, and the bundle's cache use. */
  function burst(file: string, hold: boolean): { cache: string; young: number } {
    const driver = join(file, "..", "held.mjs");
    writeFileSync(
      driver,
      `import { getHeapSpaceStatistics } from "node:v8";
      import { holdYoungGeneration, loadBundle } from ${JSON.stringify(LAUNCHER)};
      const release = ${hold} ? holdYoungGeneration() : () => {};
      const loaded = loadBundle(${JSON.stringify(file)});
      const kept = [];
      for (let i = 0; i < 60000; i++) kept.push({ i, text: "x".repeat(1000) + i });
      const young = getHeapSpaceStatistics().find((s) => s.space_name === "new_space").physical_space_size;
      release();
      process.stdout.write(JSON.stringify({ cache: loaded.cache, young, kept: kept.length > 0 }));`,
    );
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env["NODE_OPTIONS"];
    const result = spawnSync(process.execPath, [driver], { encoding: "utf8", env });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    return JSON.parse(result.stdout) as { cache: string; young: number };
  }

  it("keeps the young generation at its size while held; code caches stay valid across holds", () => {
    const file = bundle(wrap(SOURCE));
    const held = burst(file, true);
    expect(held.cache).toBe("missing");
    const free = burst(file, false);
    // The cache written at the held run's exit serves a plain run, and the plain run's serves a held one.
    expect(free.cache).toBe("used");
    expect(burst(file, true).cache).toBe("used");
    expect(held.young).toBeLessThan(8 * 2 ** 20);
    expect(free.young).toBeGreaterThan(2 * held.young);
  });
});

describe("the launcher's module loader", () => {
  // The CommonJS copy bin/parley.js runs, and the ES module it is built from: both must import
  // and resolve packages as ES modules do (pi-ai exports only an "import" condition).
  const copies = {
    "dist/bundle/launch.cjs": `const { launcherModuleLoader } = (await import("node:module")).createRequire(import.meta.url)(${JSON.stringify(join(import.meta.dirname, "../dist/bundle/launch.cjs"))});`,
    "dist/startup/launch-bundle.js": `const { launcherModuleLoader } = await import(${JSON.stringify(LAUNCHER)});`,
  };
  it.each(Object.entries(copies))("%s resolves and imports an ES-only package", (_copy, load) => {
    const script = `${load}
      const loader = launcherModuleLoader();
      const url = await loader.resolve("@mariozechner/pi-ai");
      const mod = await loader.import(url);
      process.stdout.write(JSON.stringify({ url, getEnvApiKey: typeof mod.getEnvApiKey }));`;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", cwd: import.meta.dirname });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({ url: expect.stringMatching(/^file:.*\/@mariozechner\/pi-ai\/dist\/index\.js$/), getEnvApiKey: "function" });
  });
});
