/**
 * The CLI launcher's code cache (src/cli/launch-bundle.ts), on a small CommonJS file in a temp
 * folder. Each load runs in a fresh Node process: the cache is written at exit.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const LAUNCHER = pathToFileURL(join(import.meta.dirname, "../dist/cli/launch-bundle.js")).href;

interface Load {
  cache: string;
  answer: number;
  sameInstance: boolean;
  cacheFiles: string[];
}

function load(file: string): Load {
  const script = `
    import { createRequire } from "node:module";
    import { loadBundle } from ${JSON.stringify(LAUNCHER)};
    const loaded = loadBundle(${JSON.stringify(file)});
    const again = createRequire(import.meta.url)(${JSON.stringify(file)});
    process.stdout.write(JSON.stringify({ cache: loaded.cache, answer: loaded.exports.answer(), sameInstance: again === loaded.exports && again.loads === 1 }));
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  const dir = join(file, "..");
  return { ...(JSON.parse(run.stdout) as Omit<Load, "cacheFiles">), cacheFiles: readdirSync(dir).filter((f) => f.endsWith(".cache")) };
}

function bundle(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-launch-"));
  const file = join(dir, "bundle.cjs");
  writeFileSync(file, body);
  return file;
}

const SOURCE = `globalThis.__loads = (globalThis.__loads ?? 0) + 1;
exports.loads = globalThis.__loads;
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
exports.answer = () => fib(10) + require("node:path").basename(__filename).length;`;

describe("loadBundle", () => {
  it("compiles without a cache on the first run and writes one at exit; the next run uses it", () => {
    const file = bundle(SOURCE);
    const first = load(file);
    expect(first).toEqual({ cache: "missing", answer: 55 + "bundle.cjs".length, sameInstance: true, cacheFiles: [expect.stringMatching(/^bundle\.cjs\..+\.cache$/)] });
    const second = load(file);
    expect(second).toEqual({ ...first, cache: "used" });
  });

  it("a cache V8 refuses is not used, and is replaced at exit", () => {
    const file = bundle(SOURCE);
    const { cacheFiles } = load(file);
    const cacheFile = join(file, "..", cacheFiles[0] as string);
    writeFileSync(cacheFile, Buffer.alloc(4096, 7));
    expect(load(file).cache).toBe("rejected");
    expect(readFileSync(cacheFile).equals(Buffer.alloc(4096, 7))).toBe(false);
    expect(load(file).cache).toBe("used");
  });

  it("a rebuilt bundle never runs from the old bundle's cache, even at the same length", () => {
    const file = bundle(SOURCE);
    load(file);
    // Same length, different code: V8 alone would accept the old cache (it checks the length).
    writeFileSync(file, SOURCE.replace("fib(10)", "fib(11)"));
    const rebuilt = load(file);
    expect(rebuilt.cache).toBe("missing");
    expect(rebuilt.answer).toBe(89 + "bundle.cjs".length);
  });

  it("the module is registered under its path: require() of it returns the same instance, evaluated once", () => {
    expect(load(bundle(SOURCE)).sameInstance).toBe(true);
  });
});
