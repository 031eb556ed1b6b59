import type { TSchema } from "typebox";
import type { AgentTool, ToolDefinition } from "./types.js";

export const ABORTED_MESSAGE = "Operation aborted";

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error(ABORTED_MESSAGE);
}

/**
 * Run `fn`, but reject as soon as `signal` aborts. File operations cannot be
 * interrupted midway, so this stops the caller from waiting on them instead.
 */
export function abortable<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  if (!signal) return fn();
  throwIfAborted(signal);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error(ABORTED_MESSAGE));
    signal.addEventListener("abort", onAbort, { once: true });
    fn().then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

export function errorCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}

/** Turn raw Node fs errors into messages a model can act on; pass others through. */
export function describeFsError(error: unknown, path: string, action: "read" | "write" | "edit"): Error {
  switch (errorCode(error)) {
    case "ENOENT":
      return new Error(`File not found: ${path}`);
    case "EISDIR":
      return new Error(action === "read" ? `${path} is a directory, not a file. Use ls to list its contents.` : `${path} is a directory, not a file.`);
    case "ENOTDIR":
      return new Error(`A component of ${path} is a file, not a directory.`);
    case "EACCES":
    case "EPERM":
      return new Error(`Permission denied: ${path}`);
    default:
      return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Expose a definition as a runtime tool (no extension context), the way pi's
 * `createXTool` factories relate to `createXToolDefinition`.
 */
export function toAgentTool<TParams extends TSchema, TDetails>(definition: ToolDefinition<TParams, TDetails, any, unknown>): AgentTool<TParams, TDetails> {
  return {
    name: definition.name,
    label: definition.label,
    description: definition.description,
    parameters: definition.parameters,
    prepareArguments: definition.prepareArguments,
    executionMode: definition.executionMode,
    outputSchema: definition.outputSchema,
    constrainedSampling: definition.constrainedSampling,
    execute: (toolCallId, params, signal, onUpdate) => definition.execute(toolCallId, params, signal, onUpdate, undefined),
  };
}
