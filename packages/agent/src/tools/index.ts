/**
 * parley's built-in tools: read, bash, edit, write, grep, find, ls.
 * Argument schemas, result shapes and factory names follow pi 0.73.1 so pi
 * extensions that wrap or replace built-in tools work unchanged.
 */
import { type BashToolOptions, createBashToolDefinition } from "./bash.js";
import { createEditToolDefinition, type EditToolOptions } from "./edit.js";
import { createFindToolDefinition, type FindToolOptions } from "./find.js";
import { createGrepToolDefinition, type GrepToolOptions } from "./grep.js";
import { createLsToolDefinition, type LsToolOptions } from "./ls.js";
import { createReadToolDefinition, type ReadToolOptions } from "./read.js";
import type { AgentTool, ToolDefinition, ToolName } from "./types.js";
import { createWriteToolDefinition, type WriteToolOptions } from "./write.js";
import { toAgentTool } from "./util.js";

export type {
  AgentTool,
  AgentToolResult,
  AgentToolUpdateCallback,
  ToolDefinition,
  ToolExecutionMode,
  ToolName,
  ToolRenderer,
} from "./types.js";
export {
  type BashOperations,
  type BashSpawnContext,
  type BashSpawnHook,
  type BashToolDetails,
  type BashToolInput,
  type BashToolOptions,
  createBashTool,
  createBashToolDefinition,
  createLocalBashOperations,
  getShellConfig,
  type ShellConfig,
} from "./bash.js";
export { generateDiffString } from "./diff.js";
export {
  applyEdits,
  createEditTool,
  createEditToolDefinition,
  type EditOperations,
  type EditToolDetails,
  type EditToolInput,
  type EditToolOptions,
  normalizeForFuzzyMatch,
} from "./edit.js";
export { withFileMutationQueue } from "./file-mutation-queue.js";
export {
  createFindTool,
  createFindToolDefinition,
  createLocalFindOperations,
  type FindOperations,
  type FindToolDetails,
  type FindToolInput,
  type FindToolOptions,
} from "./find.js";
export {
  createGrepTool,
  createGrepToolDefinition,
  type GrepOperations,
  type GrepToolDetails,
  type GrepToolInput,
  type GrepToolOptions,
} from "./grep.js";
export {
  createLsTool,
  createLsToolDefinition,
  type LsOperations,
  type LsToolDetails,
  type LsToolInput,
  type LsToolOptions,
} from "./ls.js";
export { expandPath, resolveReadPath, resolveToCwd } from "./path-utils.js";
export {
  createReadTool,
  createReadToolDefinition,
  type ReadOperations,
  type ReadToolDetails,
  type ReadToolInput,
  type ReadToolOptions,
} from "./read.js";
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  formatSize,
  GREP_MAX_LINE_LENGTH,
  type TruncationOptions,
  type TruncationResult,
  truncateHead,
  truncateLine,
  truncateTail,
} from "./truncate.js";
export { toAgentTool } from "./util.js";
export {
  createWriteTool,
  createWriteToolDefinition,
  type WriteOperations,
  type WriteToolInput,
  type WriteToolOptions,
} from "./write.js";

/** Per-tool options for the bulk factories. */
export interface ToolsOptions {
  read?: ReadToolOptions;
  bash?: BashToolOptions;
  write?: WriteToolOptions;
  edit?: EditToolOptions;
  grep?: GrepToolOptions;
  find?: FindToolOptions;
  ls?: LsToolOptions;
}

import { allToolNames, codingToolNames, readOnlyToolNames } from "./names.js";
export { allToolNames, codingToolNames, readOnlyToolNames };

type AnyToolDefinition = ToolDefinition<any, any>;
type AnyAgentTool = AgentTool<any, any>;

export function createToolDefinition(name: ToolName, cwd: string, options: ToolsOptions = {}): AnyToolDefinition {
  switch (name) {
    case "read":
      return createReadToolDefinition(cwd, options.read);
    case "bash":
      return createBashToolDefinition(cwd, options.bash);
    case "edit":
      return createEditToolDefinition(cwd, options.edit);
    case "write":
      return createWriteToolDefinition(cwd, options.write);
    case "grep":
      return createGrepToolDefinition(cwd, options.grep);
    case "find":
      return createFindToolDefinition(cwd, options.find);
    case "ls":
      return createLsToolDefinition(cwd, options.ls);
  }
}

/** Each built-in tool is its definition run through toAgentTool, so one switch serves both. */
export function createTool(name: ToolName, cwd: string, options: ToolsOptions = {}): AnyAgentTool {
  return toAgentTool(createToolDefinition(name, cwd, options));
}

export function createCodingToolDefinitions(cwd: string, options?: ToolsOptions): AnyToolDefinition[] {
  return codingToolNames.map((name) => createToolDefinition(name, cwd, options));
}

export function createReadOnlyToolDefinitions(cwd: string, options?: ToolsOptions): AnyToolDefinition[] {
  return readOnlyToolNames.map((name) => createToolDefinition(name, cwd, options));
}

export function createAllToolDefinitions(cwd: string, options?: ToolsOptions): Record<ToolName, AnyToolDefinition> {
  return Object.fromEntries([...allToolNames].map((name) => [name, createToolDefinition(name, cwd, options)])) as Record<ToolName, AnyToolDefinition>;
}

export function createCodingTools(cwd: string, options?: ToolsOptions): AnyAgentTool[] {
  return codingToolNames.map((name) => createTool(name, cwd, options));
}

export function createReadOnlyTools(cwd: string, options?: ToolsOptions): AnyAgentTool[] {
  return readOnlyToolNames.map((name) => createTool(name, cwd, options));
}

export function createAllTools(cwd: string, options?: ToolsOptions): Record<ToolName, AnyAgentTool> {
  return Object.fromEntries([...allToolNames].map((name) => [name, createTool(name, cwd, options)])) as Record<ToolName, AnyAgentTool>;
}
