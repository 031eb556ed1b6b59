/** The response envelope pi's clients expect: `id` first, echoed when the command had one. */
export interface ResponseRecord {
  id?: string | number;
  type: "response";
  command: string;
  success: boolean;
  data?: unknown;
  error?: string;
}

export function success(id: string | number | undefined, command: string, data?: unknown): ResponseRecord {
  return data === undefined ? { id, type: "response", command, success: true } : { id, type: "response", command, success: true, data };
}

export function failure(id: string | number | undefined, command: string, error: string): ResponseRecord {
  return { id, type: "response", command, success: false, error };
}

/** A command failed with a message meant for the client (not an internal error). */
export class CommandError extends Error {
  override readonly name = "CommandError";
}
