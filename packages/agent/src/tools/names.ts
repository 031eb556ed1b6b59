/** The built-in tools' names, importable without loading their schemas (TypeBox). */
import type { ToolName } from "./types.js";

export const allToolNames: ReadonlySet<ToolName> = new Set<ToolName>(["read", "bash", "edit", "write", "grep", "find", "ls"]);
/** The tools a session starts with, as in pi. */
export const codingToolNames: readonly ToolName[] = ["read", "bash", "edit", "write"];
/** Tools that cannot change anything: read, grep, find, ls. */
export const readOnlyToolNames: readonly ToolName[] = ["read", "grep", "find", "ls"];
