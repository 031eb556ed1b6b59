export * from "./messages.js";
export * from "./commands.js";
export * from "./responses.js";
export * from "./events.js";
export * from "./extension-ui.js";
export * from "./additions.js";
