/** Sessions: the entry tree, its JSONL persistence, context building, stats and HTML export. */
export * from "./session.js";
export * from "./store.js";
export * from "./format.js";
export { buildSessionContext, branchMessages, compactionSummaryMessage, branchSummaryMessage, customMessage, userText } from "./context.js";
export { computeStats } from "./stats.js";
export { exportHtml, renderSessionHtml, escapeHtml } from "./export-html.js";
