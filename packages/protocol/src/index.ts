export * from "./schema/index.js";
export * from "./validate.js";
export * from "./ui-state.js";
export * from "./jsonl.js";
export * from "./quick-check.js";
