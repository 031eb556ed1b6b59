// Bundles the agent's compiled output (packages/agent/dist, from `tsc -b`) into one CommonJS
// bundle, packages/agent/dist/bundle/parley-cli.js, which bin/parley.js runs with a V8 code cache
// (see launch-bundle.ts, beside this file). Why: start-up otherwise spends ~20 ms in Node's
// ES module loader and V8's parser. The file holds the bundle already inside its CommonJS
// wrapper, `(function (exports, require, module, __filename, __dirname) {…})`, exactly the text V8
// compiles: wrapping it at start-up would copy 400 KB into a second string. Lazy `import()`s of
// parley's own modules become lazy initialisers inside the file (the loop, the tools, TypeBox,
// the extension loader are evaluated when first needed, as before). Packages from node_modules
// stay external and are loaded from their own files by Node; `import()` of them goes through
// module-loader.ts, because a script run from a code cache cannot use `import()` in Node 20.
//
// bin/parley.js is CommonJS and loads a CommonJS copy of the launcher (dist/bundle/launch.cjs,
// from dist/startup/launch-bundle.js), and the bundle carries the one piece of pi-ai start-up needs
// (its API-key module, see src/models/pi-ai-env-keys.ts): so a plain start loads no ES module and
// never starts Node's ES module loader, ~13 ms of every start.
//
// The modules extensions import (the library index and the modules they get for
// "@mariozechner/pi-coding-agent" and "@earendil-works/pi-coding-agent") are small CommonJS modules here that re-export the bundle's own
// instance, so an extension and the agent share one instance of every parley module.
//
// Last, the CLI runs once through a first prompt (see writeCodeCache) to write the code caches.
import { build } from "esbuild";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Script } from "node:vm";

const root = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const agent = join(root, "packages/agent");
const dist = join(agent, "dist");
const outdir = join(dist, "bundle");
const bundleFile = join(outdir, "parley-cli.js");

// The libraries pi extensions import, each group in a code-cached bundle of its own beside
// parley's (dist/bundle/lib-*.js), loaded the first time one of its modules is imported: from the
// code cache they cost a few milliseconds instead of hundreds (Node's ES module loader resolving
// ~300 files). parley and every extension share these instances (dist/bundle/libraries/ re-exports
// them). A group's imports of another group's library go to that group's bundle.
const LIBRARY_GROUPS = {
  typebox: ["typebox"],
  "pi-tui": ["@earendil-works/pi-tui"],
  "pi-ai": ["@earendil-works/pi-ai", "@earendil-works/pi-agent-core"],
};
const BUNDLED_LIBRARIES = Object.values(LIBRARY_GROUPS).flat();
const groupOf = (specifier) =>
  Object.keys(LIBRARY_GROUPS).find((group) => LIBRARY_GROUPS[group].some((name) => specifier === name || specifier.startsWith(`${name}/`)));
const exportNames = new Map(); // specifier → its export names, from the installed package (libraryExportNames)
const groupFile = (group) => join(outdir, `lib-${group}.js`);
const bundledLibrary = new RegExp(`^(${BUNDLED_LIBRARIES.map((n) => n.replace(/[/]/g, "\\/")).join("|")})(\\/.*)?$`);
// pi-mcp is ES-module only (the bundle is CommonJS); minisearch and fastest-levenshtein are small: all compiled in.
const COMPILED_IN = new Set([
  ...BUNDLED_LIBRARIES,
  "chalk",
  "get-east-asian-width",
  "marked",
  "mime-types",
  "mime-db",
  "partial-json",
  "marked-cjk-friendly",
  "@earendil-works/pi-schema",
  "@earendil-works/pi-telemetry",
  "@earendil-works/pi-mcp",
  "minisearch",
  "fastest-levenshtein",
  // Only its small declaration and source modules are imported statically; the sandbox (a worker
  // file and the QuickJS wasm beside it) loads from its own files through module-loader.ts.
  "@earendil-works/pi-codemode",
]);

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const started = performance.now();
// The very file the compiled modules would load at run time: found by their own lookup.
const { piAiFile } = await import(pathToFileURL(join(dist, "models", "pi-ai-files.js")).href);
const piAiEnvKeysFile = fileURLToPath(await piAiFile("env-api-keys.js"));

// Specifier → the bundle file that holds it ("typebox/compile" → lib-typebox.js).
// The library specifiers that are a folder export's modules (subpathExports()).
const folderSpecifiers = new Set();
const librarySpecifiers = BUNDLED_LIBRARIES.flatMap((name) => [name, ...subpathExports(name)]);
const libraryFiles = { ...Object.fromEntries(librarySpecifiers.map((s) => [s, `lib-${groupOf(s)}.js`])), "jiti/dist/jiti.cjs": "lib-jiti.js" };
// Defined in every bundle: a library module by specifier, from its group's bundle, loaded once
// (through the launcher, with its code cache) and shared through require.cache.
const libraryLoader = [
  `var __parley_library_files = ${JSON.stringify(libraryFiles)};`,
  "var __parley_library = (specifier) => {",
  '  const file = require("node:path").join(__dirname, __parley_library_files[specifier]);',
  "  const loaded = require.cache[file];",
  '  return (loaded !== undefined ? loaded.exports : require(require("node:path").join(__dirname, "launch.cjs")).loadBundle(file).exports)[specifier];',
  "};",
];

// parley itself. The libraries are not in it: each import of one is a lookup in its bundle.
const text = await bundle({
  file: bundleFile,
  entryPoints: [join(dirname(fileURLToPath(import.meta.url)), "cli-bundle-entry.cjs")],
  plugins: [fromLibraryBundle(() => true), onlyCompiledInPackages(), piAiEnvKeysCompiledIn(), piAiImportsAsRequires()],
  banner: libraryLoader,
  // The only import() left must be module-loader.ts's default, which the launcher replaces.
  imports: 1,
});
// Each group: a getter per library and exported subpath, so that only what is imported is evaluated.
const librariesSize = {};
for (const group of Object.keys(LIBRARY_GROUPS)) {
  const mine = librarySpecifiers.filter((s) => groupOf(s) === group);
  const groupText = await bundle({
    file: groupFile(group),
    stdin: {
      // Each module once: esbuild's require() of an ES module copies its exports into a fresh
      // object at every call (~290 getters for TypeBox's root).
      contents: `const made = {};\nmodule.exports = {\n${mine.map((s) => `  get ${JSON.stringify(s)}() { return (made[${JSON.stringify(s)}] ??= require(${JSON.stringify(s)})); },`).join("\n")}\n};\n`,
      resolveDir: agent,
      loader: "js",
    },
    plugins: [fromLibraryBundle((specifier) => groupOf(specifier) !== group), onlyCompiledInPackages(), piAiImportsAsRequires(), librariesAsImports()],
    banner: libraryLoader,
    imports: 0,
  });
  librariesSize[group] = groupText.length;
}

// jiti's core (its own CommonJS build, which requires only Node's modules) as the module
// "jiti/dist/jiti.cjs" of a code-cached file: ~100 ms less per start with extensions.
//
// Its top level requires Node modules it uses only on rare paths: node:assert (checks in its
// resolver), node:fs/promises (removing the temp file of its ES module fallback), node:tty (whether
// its debug output gets colours) and node:perf_hooks (timing its debug messages). The first two
// are required when first used, the debug output has no colours and is timed with
// process.hrtime: ~1 MiB less start-up peak with extensions.
const jitiCore = readFileSync(join(packageDir("jiti"), "dist", "jiti.cjs"), "utf8");
// The extension loader hands jiti an alias table marked as normalised (extensions/loader.ts,
// normalized()): a jiti release that no longer honours the mark would spend ~10 ms per start on it.
if (!jitiCore.includes('Symbol.for("pathe:normalizedAlias")')) {
  throw new Error("build-bundle: jiti no longer marks normalised alias tables; review normalized() in extensions/loader.ts");
}
// A jiti release that stops requiring one of them is a sign to look at these again.
for (const specifier of ["node:assert", "node:fs/promises", "node:tty", "node:perf_hooks"]) {
  if (!jitiCore.includes(`require("${specifier}")`)) {
    throw new Error(`build-bundle: jiti no longer requires ${specifier}; review the lighter modules lib-jiti.js gives it`);
  }
}
writeWrapped(
  join(outdir, "lib-jiti.js"),
  [
    "const onFirstUse = (specifier) => {",
    "  let loaded;",
    "  const load = () => (loaded ??= require(specifier));",
    "  // A function target, so that a module that is itself a function (node:assert) can be called.",
    "  return new Proxy(function () {}, {",
    '    get: (_, key) => (key === "__esModule" ? undefined : load()[key]),',
    "    apply: (_, self, args) => Reflect.apply(load(), self, args),",
    "  });",
    "};",
    "const lighter = {",
    '  "node:assert": () => onFirstUse("node:assert"),',
    '  "node:fs/promises": () => onFirstUse("node:fs/promises"),',
    '  "node:tty": () => ({}),',
    '  "node:perf_hooks": () => ({ performance: { now: () => Number(process.hrtime.bigint()) / 1e6 } }),',
    "};",
    "const jitiRequire = (specifier) => (lighter[specifier] ?? require)(specifier);",
    "const core = { exports: {} };",
    `(function (exports, require, module, __filename, __dirname) {${asciiOnly(jitiCore)}\n})(core.exports, jitiRequire, core, __filename, __dirname);`,
    'module.exports = { "jiti/dist/jiti.cjs": core.exports };',
  ].join("\n"),
);

librariesSize.jiti = jitiCore.length;

await build({
  entryPoints: [join(dist, "startup/launch-bundle.js")],
  outfile: join(outdir, "launch.cjs"),
  format: "cjs",
  platform: "node",
  target: "node20",
  // The launcher must not use import.meta: CommonJS has none, and esbuild would leave {} there.
  logOverride: { "empty-import-meta": "error" },
  logLevel: "warning",
});

// The modules extensions get: CommonJS re-exports of the bundles' instances.
writeReexport(join(outdir, "index.cjs"), "library");
writeReexport(join(outdir, "extensions/compat/pi-coding-agent.cjs"), "compat");
writeReexport(join(outdir, "extensions/compat/pi-coding-agent-newest.cjs"), "compatNewest");
writeReexport(join(outdir, "extensions/compat/pi-ai-view.cjs"), "piAiView");
const evaluated = new Map(); // file → exports (evaluate)
const libraryExports = (specifier) => evaluate(groupFile(groupOf(specifier)))[specifier];
for (const specifier of librarySpecifiers) {
  const exports = libraryExports(specifier);
  if (exports === undefined) throw new Error(`build-bundle: ${groupFile(groupOf(specifier))} lacks ${specifier}`);
  // The bundles' stand-ins for this module export the installed package's names (libraryStandIn).
  const expected = await libraryExportNames(specifier);
  if (Object.keys(exports).sort().join() !== [...expected].sort().join()) {
    throw new Error(`build-bundle: ${specifier}'s exports in ${groupFile(groupOf(specifier))} differ from the installed package's`);
  }
  // A folder export's module ("@earendil-works/pi-ai/utils/uuid") goes in a folder tree (libraries/@earendil-works/pi-ai/utils/uuid.cjs),
  // which the loader aliases by folder; the others are one flat file each.
  const file = inFolderExport(specifier) ? join(outdir, "libraries", `${specifier}.cjs`) : join(outdir, "libraries", `${specifier.replace(/[@/]/g, "_")}.cjs`);
  writeReexport(file, `libraryModule(${JSON.stringify(specifier)})`, Object.keys(exports));
}

const cache = await writeCodeCache();
const kib = (n) => `${(n / 1024).toFixed(0)} KB`;
const described = (file, size) =>
  `${relative(outdir, file)} (${kib(size)}${cache[relative(outdir, file)] ? `, code cache ${kib(cache[relative(outdir, file)])}` : ""})`;
process.stderr.write(
  `build-bundle: in ${relative(root, outdir)}: ${[described(bundleFile, text.length), ...Object.keys(librariesSize).map((g) => described(groupFile(g), librariesSize[g]))].join(", ")} ` +
    `in ${(performance.now() - started).toFixed(0)} ms\n`,
);

/** Bundles one entry into a file that holds it already inside its CommonJS wrapper; returns the text. */
async function bundle({ file, entryPoints, stdin, plugins, banner, imports }) {
  const { outputFiles } = await build({
    ...(entryPoints ? { entryPoints } : { stdin }),
    outfile: file,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    // import.meta has no CommonJS counterpart: the file's own URL, and a resolver that is used only
    // if the bundle runs without its launcher (which supplies import.meta.resolve itself).
    define: { "import.meta.url": "__parley_import_meta_url", "import.meta.resolve": "__parley_import_meta_resolve" },
    banner: {
      js: [
        'var __parley_import_meta_url = require("node:url").pathToFileURL(__filename).href;',
        'var __parley_import_meta_resolve = (specifier) => require("node:url").pathToFileURL(require.resolve(specifier)).href;',
        "var __parley_require_async = (specifier) => Promise.resolve().then(() => require(specifier));",
        ...banner,
      ].join("\n"),
    },
    plugins,
    logLevel: "warning",
    write: false,
  });
  const text = asciiOnly(outputFiles[0].text);
  const found = text.match(/(?<![\w$.])import\(/g)?.length ?? 0;
  if (found !== imports) {
    throw new Error(
      `build-bundle: ${file} has ${found} import() expressions, expected ${imports}. ` +
        "Code run from a V8 code cache cannot use import() in Node 20: load packages with importModule() from module-loader.ts.",
    );
  }
  writeWrapped(file, text);
  return text;
}

/** Writes a module's text inside its CommonJS wrapper, the one expression launch.cjs compiles. */
function writeWrapped(file, text) {
  writeFileSync(
    file,
    [
      "// Generated by packages/agent/src/startup/build-bundle.mjs: one CommonJS module function, run by dist/bundle/launch.cjs",
      "// from a V8 code cache. Not a module itself: require() cannot load it.",
      `(function (exports, require, module, __filename, __dirname) {${text}`,
      "})",
    ].join("\n"),
  );
}

/** An installed package's folder, found upward from the agent package. */
function packageDir(name) {
  for (let dir = agent; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules", name, "package.json"))) return join(dir, "node_modules", name);
    if (dirname(dir) === dir) throw new Error(`build-bundle: ${name} is not installed`);
  }
}

/**
 * An import of a bundled library that `elsewhere` says lives in another bundle is a lookup there.
 * The stand-in is an ES module with one export per name of the library module, each a pure read
 * of the library's value: esbuild keeps only the names the bundle imports and binds them
 * directly. (A CommonJS stand-in, `module.exports = …`, made esbuild's `__toESM` copy every export
 * of the library into a fresh object of getters at each importing module: creating the built-in
 * tools' definitions, seven modules that import TypeBox's 288 names, took ~5 ms and ~1 MiB.)
 */
function fromLibraryBundle(elsewhere) {
  return {
    name: "from-library-bundle",
    setup(b) {
      b.onResolve({ filter: bundledLibrary }, (args) => (elsewhere(args.path) ? { path: args.path, namespace: "library" } : undefined));
      b.onLoad({ filter: /.*/, namespace: "library" }, async (args) => ({ contents: await libraryStandIn(args.path), loader: "js" }));
    },
  };
}

/** The stand-in module of a library specifier (see fromLibraryBundle). */
async function libraryStandIn(specifier) {
  const names = await libraryExportNames(specifier);
  return [
    `const library = __parley_library(${JSON.stringify(specifier)});`,
    "const pick = (name) => library[name];",
    ...names.map((name, i) => `const $${i} = /* @__PURE__ */ pick(${JSON.stringify(name)});\nexport { $${i} as ${name} };`),
  ].join("\n");
}

/**
 * A library module's export names, read from the installed package itself (the bundles that hold
 * it are built later; their exports are checked against these names once built).
 */
function libraryExportNames(specifier) {
  let names = exportNames.get(specifier);
  if (names === undefined) {
    names = import(specifier).then((module) => {
      const keys = Object.keys(module);
      const odd = keys.find((name) => !/^[A-Za-z_$][\w$]*$/.test(name));
      if (odd !== undefined) throw new Error(`build-bundle: ${specifier} exports ${JSON.stringify(odd)}, not an identifier; extend libraryStandIn()`);
      return keys;
    });
    exportNames.set(specifier, names);
  }
  return names;
}

/**
 * Compiles pi-ai's API-key module into the bundle in place of src/models/pi-ai-env-keys.ts, which
 * otherwise imports pi-ai's file at run time. The module loads node:fs/os/path with import(),
 * which code run from a V8 code cache cannot do (Node 20): those become require()s, which a
 * bundle has. A pi-ai release that changes that line fails the build here rather than at run time.
 */
function piAiEnvKeysCompiledIn() {
  const swapped = join(dist, "models", "pi-ai-env-keys.js");
  return {
    name: "pi-ai-env-keys-compiled-in",
    setup(b) {
      b.onLoad({ filter: /[\\/]pi-ai-env-keys\.js$/ }, (args) => {
        if (args.path !== swapped) return undefined;
        return {
          contents: [
            `import { findEnvKeys, getEnvApiKey } from ${JSON.stringify(piAiEnvKeysFile)};`,
            "export async function loadPiAiEnvKeys() {",
            "  return { findEnvKeys, getEnvApiKey };",
            "}",
          ].join("\n"),
          loader: "js",
          resolveDir: dirname(swapped),
        };
      });
    },
  };
}

/** A package's exported subpaths as specifiers ("typebox/compile"), from its package.json. */
function subpathExports(name) {
  const manifest = JSON.parse(readFileSync(join(packageDir(name), "package.json"), "utf8"));
  const entries = Object.entries(manifest.exports ?? {}).filter(([key]) => key.startsWith("./") && !key.endsWith(".json") && key !== "./package.json");
  const out = [];
  for (const [key, target] of entries) {
    if (!key.includes("*")) {
      out.push(`${name}/${key.slice(2)}`);
      continue;
    }
    // A folder of modules ("./utils/*" → "./dist/utils/*.js"): one specifier per file, as Node resolves them.
    const file = typeof target === "string" ? target : (target?.import ?? target?.default);
    const folder = /^\.\/([\w-]+)\/\*$/.exec(key)?.[1];
    const files = typeof file === "string" ? /^\.\/([\w/-]+)\/\*\.js$/.exec(file)?.[1] : undefined;
    if (folder === undefined || files === undefined)
      throw new Error(`build-bundle: ${name}'s export ${key} is not a folder of modules; extend subpathExports()`);
    // `*` may stand for a path ("providers/images/register-builtins").
    for (const entry of readdirSync(join(packageDir(name), files), { recursive: true }).sort()) {
      if (!entry.endsWith(".js")) continue;
      const specifier = `${name}/${folder}/${entry.slice(0, -3).split(sep).join("/")}`;
      folderSpecifiers.add(specifier);
      out.push(specifier);
    }
  }
  return out;
}

/** Whether a library specifier is one of a folder export's modules (written in a folder tree, see the loader's bundledLibraries()). */
function inFolderExport(specifier) {
  return folderSpecifiers.has(specifier);
}

/**
 * The bundled libraries export only an `import` condition, and the bundle's entry requires them
 * lazily (getters): resolve those require() calls as the imports they stand for.
 */
function librariesAsImports() {
  return {
    name: "libraries-as-imports",
    setup(b) {
      b.onResolve({ filter: bundledLibrary }, async (args) => {
        if (args.kind !== "require-call" || args.pluginData === "as-import") return undefined;
        const result = await b.resolve(args.path, { kind: "import-statement", resolveDir: args.resolveDir, pluginData: "as-import" });
        return result.errors.length > 0 ? { errors: result.errors } : { path: result.path };
      });
    },
  };
}

/** Bare specifiers stay external (a run-time require) unless their package is in COMPILED_IN. */
function onlyCompiledInPackages() {
  return {
    name: "only-compiled-in-packages",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith("node:") || args.path.startsWith("@parley/")) return undefined;
        const name = args.path.startsWith("@") ? args.path.split("/").slice(0, 2).join("/") : args.path.split("/")[0];
        return COMPILED_IN.has(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/**
 * Code run from a V8 code cache cannot use import() (Node 20), so pi-ai's import() of a package
 * or a computed specifier becomes a require() in a promise (Node 20.19+ requires ES modules).
 * Its import() of its own files stays: esbuild bundles those as lazy initialisers. The Bedrock
 * provider, imported through a helper that takes the specifier, gets a literal import() for that.
 */
function piAiImportsAsRequires() {
  const bedrock = 'importNodeOnlyProvider("./amazon-bedrock.js")';
  return {
    name: "pi-ai-imports-as-requires",
    setup(b) {
      b.onLoad({ filter: /[\\/]@earendil-works[\\/]pi-ai[\\/]dist[\\/].*\.js$/ }, (args) => {
        let text = readFileSync(args.path, "utf8");
        if (args.path.endsWith(join("providers", "register-builtins.js"))) {
          if (text.split(bedrock).length !== 2) {
            throw new Error(
              `build-bundle: ${args.path} no longer has exactly one \`${bedrock}\`; update piAiImportsAsRequires() in packages/agent/src/startup/build-bundle.mjs`,
            );
          }
          text = text.replace(bedrock, 'import("./amazon-bedrock.js")');
        }
        return { contents: text.replace(/(?<![\w$.])import\((?!["']\.)/g, "__parley_require_async("), loader: "js" };
      });
    },
  };
}

/**
 * A bundle's exports, evaluated in this process only to list their names, once per file. The
 * bundles' lookups of each other's libraries get these same instances, through a stand-in for the
 * launcher that writes no code cache: the launcher's own would write one when this process exits,
 * over the one the build's run of the CLI wrote (see writeCodeCache).
 */
function evaluate(file) {
  if (evaluated.has(file)) return evaluated.get(file);
  const module = { exports: {} };
  const realRequire = createRequire(file);
  const launcher = { loadBundle: (bundleFile) => ({ exports: evaluate(bundleFile) }) };
  const require = Object.assign((id) => (id === join(outdir, "launch.cjs") ? launcher : realRequire(id)), { cache: {}, resolve: realRequire.resolve });
  new Script(readFileSync(file, "utf8"), { filename: file }).runInThisContext()(module.exports, require, module, file, outdir);
  evaluated.set(file, module.exports);
  return module.exports;
}

/**
 * `names`: the module's export names, for a library: the module then exports a getter for each,
 * and the library loads when an extension first reads one, not when it imports it (an extension
 * that imports pi-tui for its renderers does not load it at start-up, ~3.5 MiB; jiti's
 * transpiled imports read a binding where it is used).
 */
function writeReexport(file, part, names, lighter = {}) {
  const fromShim = relative(dirname(file), bundleFile);
  const bundlePath = fromShim.startsWith(".") ? fromShim : `./${fromShim}`;
  // CommonJS, so loading it starts no ES module loader (an extension's imports of it are
  // transpiled by jiti into requires).
  const source = [
    "// Generated by packages/agent/src/startup/build-bundle.mjs: this module as the CLI bundle holds it, so an extension",
    "// shares every module instance with the agent running it. The launcher registers the bundle in",
    "// require.cache; the bundle file is not a module require() could load by itself.",
    `const bundle = require.cache[require.resolve(${JSON.stringify(bundlePath)})];`,
    "if (bundle === undefined) {",
    `  throw new Error("parley: ${relative(outdir, file)} re-exports the running CLI's modules and loads only inside bin/parley.js; import @parley/agent instead");`,
    "}",
    ...(names === undefined
      ? [`module.exports = bundle.exports.${part};`]
      : [
          "let loaded;",
          `const load = () => (loaded ??= bundle.exports.${part});`,
          ...(Object.keys(lighter).length > 0
            ? [
                "// These names are the same values as a lighter library module's: reading them loads only that one.",
                `const lighter = ${JSON.stringify(lighter)};`,
                "const from = (name) => (lighter[name] !== undefined ? bundle.exports.libraryModule(lighter[name]) : load());",
              ]
            : ["const from = load;"]),
          'Object.defineProperty(module.exports, "__esModule", { value: true });',
          `for (const name of ${JSON.stringify(names)}) Object.defineProperty(module.exports, name, { enumerable: true, get: () => from(name)[name] });`,
        ]),
    "",
  ].join("\n");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, source);
}

/**
 * Runs the CLI once so that its launcher writes every code cache at exit. V8's cache holds the
 * functions compiled by the time it is written, so the run goes through what users do first: an
 * extension that imports every library and registers a command, get_state, a prompt to a scripted
 * model that calls tools and replies, the command, get_messages, all into a session file. A first
 * prompt then runs from cached code instead of compiling pi-agent-core's loop, parley's event
 * path and the tools on the spot (~10 ms). A plain start deserialises the larger cache in about
 * the same time (measured in CPU time; see scripts/bench/README.md).
 */
async function writeCodeCache() {
  const warmDir = mkdtempSync(join(tmpdir(), "parley-build-"));
  try {
    const warm = join(warmDir, "warm.ts");
    writeFileSync(
      warm,
      [
        ...BUNDLED_LIBRARIES.map((name, i) => `import * as l${i} from ${JSON.stringify(name)};`),
        "export default function (pi: any) {",
        // Every export read: a library loads when one of its exports is first read.
        `  for (const l of [${BUNDLED_LIBRARIES.map((_, i) => `l${i}`).join(", ")}] as any[]) for (const k of Object.keys(l)) void l[k];`,
        // A provider of the extension's own, as custom-provider extensions register them: pi-ai's faux provider.
        `  const ai: any = l${BUNDLED_LIBRARIES.indexOf("@earendil-works/pi-ai")};`,
        '  const faux = ai.registerFauxProvider({ api: "warm-api", provider: "warm", models: [{ id: "warm-1" }] });',
        '  faux.setResponses([ai.fauxAssistantMessage("warm reply")]);',
        '  pi.registerProvider("warm", { baseUrl: "http://localhost:0", apiKey: "none", api: faux.api, streamSimple: ai.getApiProvider(faux.api).streamSimple,',
        '    models: [{ id: "warm-1", name: "warm", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 }] });',
        '  pi.registerCommand("warm", { description: "build", handler: async (_args: string, ctx: any) => ctx.ui.notify("warm", "info") });',
        '  pi.on("tool_call", () => undefined);',
        "}",
        "",
      ].join("\n"),
    );
    const script = join(warmDir, "script.json");
    writeFileSync(
      script,
      JSON.stringify([
        {
          text: "looking",
          toolCalls: [
            { name: "ls", arguments: {} },
            { name: "read", arguments: { path: "warm.ts" } },
          ],
        },
        "done",
      ]),
    );
    const commands = [
      { type: "get_state" },
      { type: "prompt", message: "warm up" },
      { type: "prompt", message: "/warm" },
      { type: "set_model", provider: "warm", modelId: "warm-1" },
      { type: "prompt", message: "warm up again" },
      { type: "get_messages" },
    ];
    const result = await driveCli(["--session", join(warmDir, "session.jsonl"), "--model-script", script, "-e", warm], warmDir, commands);
    const sizes = {};
    for (const name of readdirSync(outdir).filter((n) => n.endsWith(".cache"))) sizes[name.replace(/\.js\..*$/, ".js")] = statSync(join(outdir, name)).size;
    const missing = [bundleFile, ...[...Object.keys(LIBRARY_GROUPS), "jiti"].map(groupFile)]
      .map((f) => relative(outdir, f))
      .filter((f) => sizes[f] === undefined);
    if (result.status !== 0 || missing.length > 0) {
      process.stderr.write(
        `build-bundle: warning: no code cache for ${missing.join(", ") || "-"} (exit ${result.status}${result.error ? `, ${result.error}` : ""}); parley writes it on its first run.\n${result.stderr}\n`,
      );
    }
    return sizes;
  } finally {
    rmSync(warmDir, { recursive: true, force: true });
  }
}

/**
 * Runs parley in RPC mode in `cwd`, sends each command once the previous one is done (its
 * response, and for a prompt the agent's settling), then ends its input and waits for its exit.
 */
function driveCli(args, cwd, commands) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(agent, "bin/parley.js"), "--mode", "rpc", ...args], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    let error;
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      error = "timed out";
      child.kill("SIGKILL");
    }, 120_000);
    let next = 0;
    let waitingFor;
    const sendNext = () => {
      if (next === commands.length) {
        child.stdin.end();
        return;
      }
      const command = { ...commands[next], id: `build-${next}` };
      next++;
      // A prompt is done when the agent has settled; anything else with its response.
      waitingFor = command.type === "prompt" && !command.message.startsWith("/") ? "agent_settled" : command.id;
      child.stdin.write(`${JSON.stringify(command)}\n`);
    };
    let pending = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop();
      for (const line of lines) {
        const record = JSON.parse(line);
        if (record.type === "response" && record.success === false) error = `${record.command}: ${record.error}`;
        if ((record.type === "response" && record.id === waitingFor) || record.type === waitingFor) sendNext();
      }
    });
    child.on("close", (status) => {
      clearTimeout(timer);
      resolve({ status: error === undefined ? status : 1, error, stderr });
    });
    sendNext();
  });
}

/**
 * esbuild escapes non-ASCII characters in strings but leaves them in regular expressions and kept
 * comments. One such character makes Node decode the whole file into a two-byte string, which
 * V8 then scans more slowly (~2 ms of start-up). A \uXXXX escape means the same in a regular
 * expression, a string or a comment.
 */
function asciiOnly(source) {
  return source.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
