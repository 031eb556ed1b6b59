// Entry of the CLI's CommonJS bundle (dist/bundle/parley-cli.js, built by build-bundle.mjs and run
// by bin/parley.js). Besides the CLI it carries the two modules extensions import, so they get
// the CLI's own instance of every parley module. They are required on first use: a session
// without extensions never evaluates them (the compat module pulls in the tools and TypeBox).
const cli = require("../packages/agent/dist/cli/main.js");
const moduleLoader = require("../packages/agent/dist/module-loader.js");

module.exports = {
  main: cli.main,
  setModuleLoader: moduleLoader.setModuleLoader,
  get library() {
    return require("../packages/agent/dist/index.js");
  },
  get compat() {
    return require("../packages/agent/dist/extensions/compat/pi-coding-agent.js");
  },
};
