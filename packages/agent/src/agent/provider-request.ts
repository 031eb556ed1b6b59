/**
 * What a model request carries besides its messages: settings' timeouts and retries, the
 * provider's resolved auth (models/request-auth.ts), a routed model's level, and the newest pi's provider hooks
 * (before_provider_request, before_provider_headers).
 */
import type { SimpleStreamOptions } from "@earendil-works/pi-ai";
import type { ThinkingLevel } from "@parley/protocol";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { ProviderRequestConfig } from "./agent-config.js";

/** The extension runtime as the provider hooks use it. */
export type ProviderHookRuntime = Pick<ExtensionRuntime, "hasHandlers" | "emit" | "emitChained">;

/** A routed request's options: the routed model's key and level in place of the virtual provider's. */
export function routedOptions(options: SimpleStreamOptions | undefined, level: ThinkingLevel): SimpleStreamOptions {
  const { reasoning: _level, ...common } = options ?? {};
  return { ...common, ...(level !== "off" ? { reasoning: level } : {}) };
}

/** The request's own options win; settings fill the rest (the SDKs' timeout and retries), as in pi. */
export function withProviderRequest(options: SimpleStreamOptions | undefined, request: ProviderRequestConfig): SimpleStreamOptions {
  const timeoutMs = options?.timeoutMs ?? request.timeoutMs;
  const maxRetries = options?.maxRetries ?? request.maxRetries;
  const maxRetryDelayMs = options?.maxRetryDelayMs ?? request.maxRetryDelayMs;
  return {
    ...options,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    ...(maxRetryDelayMs !== undefined ? { maxRetryDelayMs } : {}),
  };
}

/** before_provider_request: a handler may replace the request's payload (the newest pi's hook). */
export async function beforeProviderRequest(runtime: ProviderHookRuntime, payload: unknown): Promise<unknown> {
  if (!runtime.hasHandlers("before_provider_request")) return payload;
  const result = await runtime.emitChained({ type: "before_provider_request", payload }, (event, replacement) => ({
    event: { ...event, payload: replacement },
  }));
  return result.payload;
}

/** before_provider_headers: handlers edit the headers in place; a null value removes one. */
export async function beforeProviderHeaders(
  runtime: ProviderHookRuntime,
  modelHeaders: Record<string, string> | undefined,
  options: SimpleStreamOptions | undefined,
): Promise<SimpleStreamOptions | undefined> {
  if (!runtime.hasHandlers("before_provider_headers")) return options;
  const headers: Record<string, string | null> = { ...modelHeaders, ...options?.headers };
  await runtime.emit({ type: "before_provider_headers", headers });
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (typeof value === "string") kept[name] = value;
  return { ...options, headers: kept };
}
