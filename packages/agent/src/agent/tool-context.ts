/**
 * The context a tool's execute() gets (the newest pi's ExtensionToolContext): its extension's
 * context plus `tools` (what it may call) and `executeTool` (call one, as the model would).
 */
import type { AgentTool } from "@earendil-works/pi-agent-core";
import { errorMessage } from "../error-text.js";
import type { ExecuteToolOptions, ExtensionContext, ExtensionToolContext, ToolCallOutcome } from "../extensions/types.js";
import { errorResult } from "./run-tool-call.js";

export interface NestedCallRunner {
  callableTools(): readonly AgentTool<any, any>[];
  execute(callerId: string, name: string, args: unknown, options: ExecuteToolOptions): Promise<ToolCallOutcome>;
}

export function toolContext(base: ExtensionContext, callerId: string, signal: AbortSignal | undefined, runner: NestedCallRunner): ExtensionToolContext {
  return {
    ...base,
    get tools() {
      return runner.callableTools();
    },
    executeTool: async (name, args, options = {}) => {
      const callOptions: ExecuteToolOptions = { ...options };
      // The calling tool's signal, unless the caller gives its own: aborting the run stops nested calls too.
      const effective = options.signal ?? signal;
      if (effective !== undefined) callOptions.signal = effective;
      try {
        return await runner.execute(callerId, name, args, callOptions);
      } catch (error) {
        // The promise never rejects (pi's contract): a failure of parley's own is an error outcome too.
        return { toolCall: { type: "toolCall", id: `${callerId}/0`, name, arguments: {} }, result: errorResult(errorMessage(error)), isError: true };
      }
    },
  };
}
