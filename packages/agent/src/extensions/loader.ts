/**
 * Loads extension files (.ts or .js default-exporting `(pi) => void`) with jiti, resolving the
 * packages pi extensions import to parley's own copies so they need no install of their own.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtensionFactory } from "./types.js";
import { errorMessage } from "../error-text.js";
import { loadCreateJiti, whileOptimizerPaused } from "../startup/module-loader.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The folder that holds parley's entry modules (`index.js`, `extensions/compat/…`): `dist/` when
 * running the compiled files, `dist/bundle/` when running the bundle (whose entry modules
 * re-export the bundle's own instance), `src/` under a TypeScript loader.
 */
const entryRoot = ((): string => {
  for (let dir = here, i = 0; i < 3; dir = dirname(dir), i++) {
    for (const ext of ["cjs", "js", "ts"]) {
      if (existsSync(join(dir, "extensions", "compat", `pi-coding-agent.${ext}`))) return dir;
    }
  }
  return dirname(here);
})();
const entry = (relative: string): string => {
  for (const ext of ["cjs", "js"]) {
    const file = join(entryRoot, `${relative}.${ext}`);
    if (existsSync(file)) return file;
  }
  return join(entryRoot, `${relative}.ts`);
};

/** The folder of an installed package, found the way Node would from parley's own files. */
function packageDir(name: string): string | undefined {
  for (let dir = here; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Specifier → file for every entry point a package exports, so `typebox/compile` resolves as
 * well as `typebox`. Import conditions are preferred: extensions are ES modules.
 */
function exportAliases(name: string): Record<string, string> {
  const dir = packageDir(name);
  if (!dir) return {};
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { exports?: unknown; main?: string; module?: string };
  const out: Record<string, string> = {};
  const pick = (target: unknown): string | undefined => {
    if (typeof target === "string") return target;
    if (target && typeof target === "object") {
      const t = target as Record<string, unknown>;
      for (const key of ["import", "node", "default", "require"]) {
        const found = pick(t[key]);
        if (found) return found;
      }
    }
    return undefined;
  };
  const exportsField = pkg.exports;
  const entries: [string, unknown][] =
    typeof exportsField === "string" || (exportsField && typeof exportsField === "object" && !Object.keys(exportsField).some((k) => k.startsWith(".")))
      ? [[".", exportsField]]
      : Object.entries((exportsField ?? {}) as Record<string, unknown>);
  for (const [subpath, target] of entries) {
    const file = pick(target);
    // A folder of modules ("./utils/*" → "./dist/utils/*.js"): the folder, where jiti finds each file.
    const folder = /^\.\/([\w-]+)\/\*$/.exec(subpath);
    const files = file === undefined ? undefined : /^(\.\/[\w/-]+\/)\*\.js$/.exec(file);
    if (folder?.[1] && files?.[1]) {
      out[`${name}/${folder[1]}/`] = `${join(dir, files[1])}/`;
      continue;
    }
    if (!file || subpath.includes("*") || subpath.endsWith(".json")) continue;
    out[subpath === "." ? name : `${name}/${subpath.replace(/^\.\//, "")}`] = join(dir, file);
  }
  if (!out[name]) out[name] = join(dir, pkg.module ?? pkg.main ?? "index.js");
  return out;
}

/**
 * Specifier → module for the libraries the CLI bundle compiles in (dist/bundle/libraries/, written by
 * the build): an extension gets the running CLI's instance, loaded from its code cache. Empty when
 * running the compiled files unbundled.
 */
function bundledLibraries(): Record<string, string> {
  const dir = join(entryRoot, "libraries");
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const match = /^(_earendil-works_)?(.+)\.cjs$/.exec(name);
    if (!match?.[2]) continue;
    const specifier = (match[1] ? "@earendil-works/" : "") + match[2].replace(/_/g, "/");
    out[specifier] = join(dir, name);
  }
  // Folder exports' modules (pi-ai's providers/*, api/*, utils/*), one file each in a folder tree:
  // one alias per folder, where jiti finds each file (it tries `.cjs`).
  const scope = join(dir, "@earendil-works");
  if (existsSync(scope)) {
    for (const pkg of readdirSync(scope)) {
      for (const folder of readdirSync(join(scope, pkg))) out[`@earendil-works/${pkg}/${folder}/`] = `${join(scope, pkg, folder)}/`;
    }
  }
  return out;
}

/** The same entry points under another package name (`@mariozechner/pi-tui` → pi-tui). */
function renamed(from: string, to: string, table: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [specifier, file] of Object.entries(table))
    if (specifier === from || specifier.startsWith(`${from}/`)) out[to + specifier.slice(from.length)] = file;
  return out;
}

let unbundled: Record<string, string> | undefined;
function unbundledLibraries(): Record<string, string> {
  unbundled ??= {
    ...exportAliases("@earendil-works/pi-ai"),
    ...exportAliases("@earendil-works/pi-tui"),
    ...exportAliases("@earendil-works/pi-agent-core"),
    ...exportAliases("typebox"),
  };
  return unbundled;
}

/**
 * Package name → what an extension gets when it imports it, as pi 1.6 maps them: both scopes,
 * `@earendil-works/*` and `@mariozechner/*`, reach the same modules; pi-ai's root and `/compat` are
 * its extension view (pi-ai-view.ts), its other entry points are its own; `@sinclair/typebox` is
 * TypeBox. Running from the bundle, the libraries are the bundle's own instances
 * (bundledLibraries()). jiti matches an alias as a path prefix, so any other
 * `@earendil-works/pi-ai/…` path fails to resolve rather than reach a copy in node_modules.
 */
function aliases(): Record<string, string> {
  const bundled = bundledLibraries();
  const libraries = Object.keys(bundled).length > 0 ? bundled : { ...unbundledLibraries() };
  const view = entry("extensions/compat/pi-ai-view");
  const shared = {
    ...libraries,
    "@earendil-works/pi-ai": view,
    "@earendil-works/pi-ai/compat": view,
  };
  return {
    ...shared,
    ...renamed("@earendil-works", "@mariozechner", shared),
    "@mariozechner/pi-coding-agent": entry("extensions/compat/pi-coding-agent"),
    // The same module but for VERSION: the newest pi's under its package name.
    "@earendil-works/pi-coding-agent": entry("extensions/compat/pi-coding-agent-newest"),
    ...renamed("typebox", "@sinclair/typebox", libraries),
    "@parley/agent": entry("index"),
  };
}

/**
 * The alias table as jiti would normalise it, marked so: jiti (pathe's `normalizeAliases`) compares
 * every alias with every other, which grows with the square of their number. Already normal:
 * no value (an absolute path) starts with a key (a package specifier); left is jiti's order, the
 * most specific (most "/") first, which its prefix matching relies on.
 */
function normalized(table: Record<string, string>): Record<string, string> {
  // A folder alias ("pi-ai/") after the files below it ("pi-ai/anthropic"), before its package's.
  const depth = (specifier: string) => specifier.split("/").filter(Boolean).length + (specifier.endsWith("/") ? 0.5 : 0);
  const out = Object.fromEntries(Object.entries(table).sort(([a], [b]) => depth(b) - depth(a)));
  Object.defineProperty(out, Symbol.for("pathe:normalizedAlias"), { value: true });
  return out;
}

export type LoadResult = { path: string; factory: ExtensionFactory } | { path: string; error: string };

type Jiti = {
  import(id: string, options?: { default?: boolean }): Promise<unknown>;
  evalModule(source: string, options: { id: string; filename: string; async: boolean; forceTranspile: boolean }): unknown;
};
let jiti: Jiti | undefined;

function getJiti(): Jiti {
  if (!jiti) {
    // Loaded on first use: a session without extensions never pays for the TS loader.
    const createJiti = loadCreateJiti();
    jiti = createJiti(import.meta.url, { alias: normalized(aliases()), interopDefault: true, moduleCache: false }) as unknown as Jiti;
  }
  return jiti;
}

/**
 * An extension module's exports. jiti imports a JavaScript ES module (`.mjs`, or `.js` under a
 * package.json with `"type": "module"`) natively, so its imports would resolve from its own
 * folder, not to the packages parley provides (or to a second copy of them): such files are
 * transpiled like TypeScript ones, which applies the aliases.
 */
async function importExtension(absolute: string): Promise<unknown> {
  const jiti = getJiti();
  if (!/\.m?js$/.test(absolute)) return jiti.import(absolute, { default: true });
  const exports = await jiti.evalModule(readFileSync(absolute, "utf8"), { id: absolute, filename: absolute, async: true, forceTranspile: true });
  const record = exports !== null && typeof exports === "object" ? (exports as { default?: unknown }) : undefined;
  return record?.default ?? exports;
}

export async function loadExtension(path: string): Promise<LoadResult> {
  const absolute = resolve(path);
  if (!existsSync(absolute)) return { path: absolute, error: `Extension file not found: ${absolute}` };
  try {
    const loaded = await whileOptimizerPaused(() => importExtension(absolute));
    const factory = typeof loaded === "function" ? loaded : (loaded as { default?: unknown } | undefined)?.default;
    if (typeof factory !== "function") {
      return { path: absolute, error: `Extension ${absolute} must default-export a function (pi) => void; it exports ${typeof factory}` };
    }
    return { path: absolute, factory: factory as ExtensionFactory };
  } catch (error) {
    return { path: absolute, error: `Failed to load extension ${absolute}: ${errorMessage(error)}` };
  }
}

/**
 * Extension files pi discovers, `<agent dir>/extensions` (user) and `./.pi/extensions` (project),
 * plus parley's earlier places, `~/.parley/extensions` and `./.parley/extensions`: each
 * `.ts`/`.js` file, and each folder holding an `index.ts`/`index.js`. Sorted by name per folder.
 * `project: false` (pi's --no-approve) leaves the project's folders out.
 */
export function discoverExtensions(
  cwd: string,
  places: { agentDir?: string; home?: string; project?: boolean } = {},
): { path: string; scope: "user" | "project" }[] {
  const home = places.home ?? homedir();
  const found: { path: string; scope: "user" | "project" }[] = [];
  const dirs = new Map<string, "user" | "project">();
  // The same folder twice (cwd is home) counts once, as the user's.
  const add = (dir: string, scope: "user" | "project"): void => {
    if (!dirs.has(resolve(dir))) dirs.set(resolve(dir), scope);
  };
  if (places.agentDir !== undefined) add(join(places.agentDir, "extensions"), "user");
  add(join(home, ".parley", "extensions"), "user");
  if (places.project !== false) {
    add(join(cwd, ".pi", "extensions"), "project");
    add(join(cwd, ".parley", "extensions"), "project");
  }
  for (const [dir, scope] of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      let isDir = false;
      try {
        isDir = statSync(full).isDirectory();
      } catch {
        continue;
      }
      if (isDir) {
        const index = ["index.ts", "index.js"].map((f) => join(full, f)).find((f) => existsSync(f));
        if (index) found.push({ path: index, scope });
      } else if (/\.(ts|js|mjs|mts)$/.test(name) && !name.endsWith(".d.ts")) {
        found.push({ path: full, scope });
      }
    }
  }
  return found;
}
