/**
 * parley's model layer: the local models (`--model-script`, offline demo), their registration with
 * pi-ai's API registry, and start-up model resolution from CLI flags and the environment.
 *
 * Ids: provider "parley"; models "script" (api "parley-script") and "offline" (api "parley-offline").
 * Only `import type` reaches pi-ai from here; its runtime is loaded piece by piece by
 * `resolveModels()`, `registerParleyProviders()` or `loadPiAi()` (see pi-ai.ts for the cost).
 */
export {
  createOfflineModel,
  findPathsIn,
  helpText as offlineHelpText,
  OFFLINE_API,
  OFFLINE_MODEL_ID,
  type OfflineModelOptions,
  type PathTarget,
  planOfflineReply,
  streamOfflineModel,
} from "./offline-model.js";
export { loadPiAi, loadPiAiCatalog, loadPiAiCore, type PiAi, type PiAiCore, piAiCatalogLoaded, piAiIfLoaded } from "./pi-ai.js";
export { PARLEY_SOURCE_ID, registerParleyProviders, registerParleyProvidersWith } from "./register.js";
export {
  chunkText,
  type PlannedReply,
  type PlannedToolCall,
  type ReplyStreamSettings,
  streamPlannedReply,
} from "./reply-stream.js";
export { DEFAULT_MODEL_PER_PROVIDER, type ExtraModels, ModelResolutionError } from "./catalog.js";
export { type ModelMatch, THINKING_LEVEL_NAMES, type ThinkingLevel } from "./model-patterns.js";
export { DEFAULT_THINKING_LEVEL, type ModelCliOptions, type ModelResolution, type ModelSource, type ResolveEnvironment, resolveModels } from "./resolve.js";
export {
  createScriptModel,
  loadModelScript,
  ModelScript,
  ModelScriptError,
  PARLEY_PROVIDER,
  parseModelScript,
  SCRIPT_API,
  SCRIPT_EXHAUSTED_TEXT,
  SCRIPT_MODEL_ID,
  type ScriptToolCall,
  type ScriptTurn,
  streamScriptModel,
  validateModelScript,
} from "./script-model.js";
export { withExtensionProviders, type ExtensionProviders, type ProviderConfig, type ProviderModelConfig } from "./extension-providers.js";
