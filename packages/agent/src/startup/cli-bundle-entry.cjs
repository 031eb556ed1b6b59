// Entry of the CLI's CommonJS bundle (dist/bundle/parley-cli.js, built by build-bundle.mjs and run
// by bin/parley.js). Besides the CLI it carries the modules extensions import, so they get
// the CLI's own instance of every parley module, and the way to the libraries pi extensions
// import (TypeBox, pi-ai, pi-agent-core, pi-tui), which live in a second code-cached bundle
// (dist/bundle/parley-libraries.js). Everything is required on first use: a session without
// extensions never evaluates them.
const cli = require("../../dist/cli/main.js");
const moduleLoader = require("../../dist/startup/module-loader.js");

// The built-in tools' module, synchronously: the same lazy initialiser the bundle's import() of it
// runs, so an extension's pi.getAllTools() creates their definitions when it first asks. And
// whether TypeBox's bundle is loaded (its schemas need it): __parley_library's own check.
require("../../dist/tools/tools-require.js").setToolsRequire(
  () => require("../../dist/tools/index.js"),
  () => require.cache[require("node:path").join(__dirname, __parley_library_files.typebox)] !== undefined,
);

// pi-ai synchronously, from its library bundle: an extension's synchronous ctx.modelRegistry calls
// load the model catalogue when they first need it (models/pi-ai.ts).
moduleLoader.setPiAiRequire(() => __parley_library("@earendil-works/pi-ai/compat"));

// jiti from its code-cached copy (dist/bundle/lib-jiti.js): its own entry file holds an import(),
// which code run from a code cache cannot use, so parley gives it the launcher's import() and
// loads jiti's Babel transform (for files not in jiti's cache) from jiti's own folder.
moduleLoader.setJitiFactory(() => {
  const core = __parley_library("jiti/dist/jiti.cjs");
  const { createRequire } = require("node:module");
  let transform;
  const babel = (...args) => {
    transform ??= require(require("node:path").join(require("node:path").dirname(require.resolve("jiti/package.json")), "dist", "babel.cjs"));
    return transform(...args);
  };
  return (id, options = {}) =>
    core(
      id,
      { transform: babel, ...options },
      {
        onError: (error) => {
          throw error;
        },
        // CommonJS files (parley's re-export modules among them) are required: importing them would
        // start Node's ES module loader for them.
        nativeImport: (specifier) => {
          const path = String(specifier).startsWith("file:") ? require("node:url").fileURLToPath(String(specifier)) : String(specifier);
          return path.endsWith(".cjs") && require("node:path").isAbsolute(path)
            ? Promise.resolve().then(() => require(path))
            : moduleLoader.importModule(specifier);
        },
        createRequire,
      },
    );
});

module.exports = {
  main: cli.main,
  setModuleLoader: moduleLoader.setModuleLoader,
  get library() {
    return require("../../dist/index.js");
  },
  get compat() {
    return require("../../dist/extensions/compat/pi-coding-agent.js");
  },
  get compatNewest() {
    return require("../../dist/extensions/compat/pi-coding-agent-newest.js");
  },
  get piAiView() {
    return require("../../dist/extensions/compat/pi-ai-view.js");
  },
  // A bundled library's module by specifier ("typebox", "@earendil-works/pi-ai/compat"): the re-export
  // modules extensions import (dist/bundle/libraries/) use it. __parley_library is the bundle's
  // own loader of the library bundle (startup/build-bundle.mjs).
  libraryModule: (specifier) => __parley_library(specifier),
};
