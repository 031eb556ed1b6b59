export * from "./schema/index.js";
export * from "./validate.js";
export * from "./ui-state.js";
export * from "./jsonl.js";
export * from "./quick-check.js";
export * from "./ui-methods.js";
export * from "./dialog-answers.js";
export * from "./disposable.js";
