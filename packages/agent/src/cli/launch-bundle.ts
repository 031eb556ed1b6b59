/**
 * Runs the CLI from its CommonJS bundle (dist/bundle/parley.cjs) with a V8 code cache beside it,
 * so start-up deserialises compiled code instead of parsing ~400 KB of JavaScript (~10 ms).
 * Node 20 caches no ES modules (`module.enableCompileCache()` is Node 22), hence CommonJS and
 * `vm.Script` with `cachedData`.
 *
 * The bundle is registered in `require.cache` under its own path, so the modules extensions
 * import (dist/bundle/index.js and the compat module, which `require` the bundle) share this one
 * instance of every parley module with the CLI.
 */
import { readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire, Module } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Script } from "node:vm";
import type { ModuleLoader } from "../module-loader.js";

/** What happened to the code cache: consumed, refused by V8 (another Node version or flags), or absent. */
export type CodeCacheUse = "used" | "rejected" | "missing";

export interface LoadedBundle<T> {
  exports: T;
  cache: CodeCacheUse;
}

type CommonJsWrapper = (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;

/**
 * Loads a CommonJS file through `vm.Script` with a code cache. A missing or rejected cache is
 * written when the process exits, so it holds the functions this run compiled, not only the top
 * level. The cache file is named after V8's version and the bundle's size and mtime: V8 itself
 * checks only the source's length, and a stale cache for a rebuilt bundle must never be used.
 */
export function loadBundle<T>(file: string): LoadedBundle<T> {
  const path = realpathSync(file);
  const { size, mtimeMs } = statSync(path);
  const cacheFile = `${path}.${process.versions.v8}.${size}-${Math.trunc(mtimeMs)}.cache`;
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const source = readFileSync(path, "utf8");
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: path,
    ...(cachedData !== undefined ? { cachedData } : {}),
  });
  const cache: CodeCacheUse = cachedData === undefined ? "missing" : script.cachedDataRejected === true ? "rejected" : "used";

  const require = createRequire(path);
  const module = new Module(path);
  module.filename = path;
  require.cache[path] = module;
  try {
    (script.runInThisContext() as CommonJsWrapper)(module.exports, require, module, path, dirname(path));
  } catch (error) {
    delete require.cache[path];
    throw error;
  }
  module.loaded = true;
  if (cache !== "used") process.once("exit", () => writeCache(script, cacheFile));
  return { exports: module.exports as T, cache };
}

/** Best effort: an install directory may be read-only, and then every start just compiles. */
function writeCache(script: Script, cacheFile: string): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, script.createCachedData());
    // A rename is atomic: a parley starting meanwhile reads the old cache or the whole new one.
    renameSync(temporary, cacheFile);
  } catch {
    rmSync(temporary, { force: true });
  }
}

/** What the CLI bundle exports (scripts/cli-bundle-entry.cjs). */
export interface CliBundle {
  main(argv: string[]): Promise<void>;
  setModuleLoader(loader: ModuleLoader): void;
}

/** bin/parley.js: load the bundle, give it this module's import(), run the CLI. */
export function launchCli(argv: string[]): void {
  const { exports: cli } = loadBundle<CliBundle>(fileURLToPath(new URL("../bundle/parley.cjs", import.meta.url)));
  cli.setModuleLoader({ import: (specifier) => import(specifier), resolve: (specifier) => import.meta.resolve(specifier) });
  cli.main(argv).catch((error: unknown) => {
    process.stderr.write(`parley: fatal: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
