import type { ErrorResponse, ResponseEnvelope, SuccessResponse } from "@parley/protocol";

/** The response envelope, as the protocol defines it: `id` first, echoed when the command had one. */
export type ResponseRecord = ResponseEnvelope;

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
