import type { ErrorResponse, ResponseEnvelope, SuccessResponse } from "@parley/protocol";

/** A response as the protocol defines its envelope (the per-command `data` is typed by the handlers). */
export type ResponseRecord = ResponseEnvelope;

/** pi's clients expect `id` first, echoed when the command had one (an undefined id is not written). */
export function success(id: string | number | undefined, command: string, data?: unknown): SuccessResponse {
  return data === undefined ? { id, type: "response", command, success: true } : { id, type: "response", command, success: true, data };
}

export function failure(id: string | number | undefined, command: string, error: string): ErrorResponse {
  return { id, type: "response", command, success: false, error };
}

/** A command failed with a message meant for the client (not an internal error). */
export class CommandError extends Error {
  override readonly name = "CommandError";
}
