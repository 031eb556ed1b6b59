/**
 * What the agent writes, as the client sees it before routing: one JSON object with a string
 * `type`. Records are not validated against the schemas (pi 0.73 writes fields parley's schemas
 * exclude, and newer agents may add record types); only what routing relies on is checked.
 */
import type {
  DialogRequest,
  ExtensionUiDismissed,
  ExtensionUiError,
  ExtensionUiRequest,
  FireAndForgetRequest,
  ResponseEnvelope,
  RpcEvent,
} from "@parley/protocol";
import { isDialogMethod, isFireAndForgetMethod } from "@parley/protocol/ui-methods";
import { ProtocolError } from "./errors.js";

/** Any record the agent wrote: a JSON object with a string `type`, passed through as written. */
export interface AgentRecord {
  readonly type: string;
  readonly [key: string]: unknown;
}

/**
 * A response record: the protocol's envelope (`data` is typed per command by the request that
 * sent it). Routing checks `command` and `success` only, so a failure's `error` is read defensively.
 */
export type ResponseRecord = ResponseEnvelope & AgentRecord;

/** Events by type, plus the extension UI records, for `client.on(type, listener)`. */
export type AgentEventMap = { [E in RpcEvent as E["type"]]: E } & {
  extension_ui_request: ExtensionUiRequest;
  extension_ui_dismissed: ExtensionUiDismissed;
  extension_ui_error: ExtensionUiError;
};
export type AgentEventType = keyof AgentEventMap;

/** Parses one line the agent wrote. Blank lines give undefined (framing noise, skipped). */
export function parseRecord(line: string): AgentRecord | ProtocolError | undefined {
  if (line.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return new ProtocolError(`The agent wrote a line that is not JSON: ${(error as Error).message}`, line, { cause: error });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return new ProtocolError("The agent wrote a JSON value that is not an object", line);
  }
  if (typeof (value as { type?: unknown }).type !== "string") {
    return new ProtocolError('The agent wrote an object without a string "type"', line);
  }
  return value as AgentRecord;
}

export function isResponse(record: AgentRecord): record is ResponseRecord {
  return record.type === "response" && typeof record["command"] === "string" && typeof record["success"] === "boolean";
}

/** A dialog request with the fields a handler relies on. */
export function asDialogRequest(record: AgentRecord): DialogRequest | undefined {
  if (record.type !== "extension_ui_request" || typeof record["id"] !== "string") return undefined;
  if (!isDialogMethod(record["method"])) return undefined;
  if (record["method"] === "select" && !Array.isArray(record["options"])) return undefined;
  return record as unknown as DialogRequest;
}

export function asFireAndForget(record: AgentRecord): FireAndForgetRequest | undefined {
  if (record.type !== "extension_ui_request") return undefined;
  return isFireAndForgetMethod(record["method"]) ? (record as unknown as FireAndForgetRequest) : undefined;
}

export function asDismissed(record: AgentRecord): ExtensionUiDismissed | undefined {
  return record.type === "extension_ui_dismissed" && typeof record["id"] === "string" ? (record as unknown as ExtensionUiDismissed) : undefined;
}
