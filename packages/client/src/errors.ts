/**
 * Every way a request, a dialog or the connection can fail has its own class, so callers
 * can `instanceof` instead of parsing messages.
 */

/** Base class of every error this package produces. */
export class ParleyClientError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The agent answered a command with `success: false`. */
export class RpcError extends ParleyClientError {
  /** The `command` field of the response (the command's type, or "parse"). */
  readonly command: string;
  /** The agent's `error` text, verbatim. */
  readonly error: string;
  /** The id of the request this answers. */
  readonly requestId: string | undefined;

  constructor(command: string, error: string, requestId?: string) {
    super(`${command} failed: ${error}`);
    this.command = command;
    this.error = error;
    this.requestId = requestId;
  }

  /** true when the agent does not know the command (pi answers `get_ui_state` this way). */
  get isUnknownCommand(): boolean {
    return this.error.startsWith("Unknown command");
  }
}

/** A signal's name (`SIGTERM`, …): Node's signal names, written so that browsers need no Node types. */
export type SignalName = `SIG${string}`;

/** How a transport ended. */
export interface CloseInfo {
  /** local: close() was called; remote: the other side ended the stream or exited; error: I/O failed. */
  reason: "local" | "remote" | "error";
  /** Exit code of a spawned agent (null when it was killed by a signal). */
  exitCode?: number | null;
  /** Signal that ended a spawned agent. */
  signal?: SignalName | null;
  /** The last part of a spawned agent's stderr. */
  stderrTail?: string;
  /** The I/O or spawn error, for reason "error". */
  error?: Error;
}

function describeClose(info: CloseInfo): string {
  const parts: string[] = [];
  if (info.reason === "local") parts.push("closed by the client");
  else if (info.reason === "error") parts.push(`failed: ${info.error?.message ?? "I/O error"}`);
  else parts.push("closed by the agent");
  if (info.exitCode !== undefined && info.exitCode !== null) parts.push(`exit code ${info.exitCode}`);
  if (info.signal) parts.push(`signal ${info.signal}`);
  let text = `Connection ${parts.join(", ")}`;
  const tail = info.stderrTail?.trim();
  if (tail) text += `\nstderr (tail):\n${tail}`;
  return text;
}

/** The connection ended (close(), stream end, process exit, spawn failure) before an answer came. */
export class ConnectionClosedError extends ParleyClientError {
  readonly reason: CloseInfo["reason"];
  readonly exitCode: number | null | undefined;
  readonly signal: SignalName | null | undefined;
  readonly stderrTail: string | undefined;

  constructor(info: CloseInfo, message = describeClose(info)) {
    super(message, info.error === undefined ? undefined : { cause: info.error });
    this.reason = info.reason;
    this.exitCode = info.exitCode;
    this.signal = info.signal;
    this.stderrTail = info.stderrTail;
  }
}

/** The caller's `timeoutMs` passed before the response arrived. A later response is ignored. */
export class RequestTimeoutError extends ParleyClientError {
  readonly command: string;
  readonly requestId: string;
  readonly timeoutMs: number;

  constructor(command: string, requestId: string, timeoutMs: number) {
    super(`${command} (${requestId}) got no response within ${timeoutMs} ms`);
    this.command = command;
    this.requestId = requestId;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The caller's AbortSignal fired before the response arrived. A later response is ignored.
 * The agent is not told: use `abort()` / `abortBash()` to stop work on its side.
 */
export class RequestAbortedError extends ParleyClientError {
  readonly command: string;
  readonly requestId: string | undefined;

  constructor(command: string, requestId: string | undefined, reason: unknown) {
    super(`${command}${requestId === undefined ? "" : ` (${requestId})`} was aborted`, { cause: reason });
    this.command = command;
    this.requestId = requestId;
  }
}

/** The agent wrote something that is not a protocol record. The connection keeps going. */
export class ProtocolError extends ParleyClientError {
  /** The offending line (cut to 1,000 characters), when there was one. */
  readonly line: string | undefined;

  constructor(message: string, line?: string, options?: ErrorOptions) {
    super(message, options);
    this.line = line === undefined || line.length <= 1000 ? line : `${line.slice(0, 1000)}…`;
  }
}

/** A dialog handler threw or rejected; the dialog was answered `cancelled: true`. */
export class DialogHandlerError extends ParleyClientError {
  readonly dialogId: string;
  readonly method: string;

  constructor(dialogId: string, method: string, cause: unknown) {
    super(`the ${method} handler for dialog ${dialogId} failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.dialogId = dialogId;
    this.method = method;
  }
}

/** A listener registered with the client threw; reported so the stream keeps flowing. */
export class ListenerError extends ParleyClientError {
  constructor(cause: unknown) {
    super(`a listener threw: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Why a dialog ended without (or before) this client's answer: the reason of its AbortSignal. */
export type DialogEndReason =
  /** Its `timeout`, counted from when this client received it, passed. */
  | "timeout"
  /** parley announced with `extension_ui_dismissed` that it ended on the agent side. */
  | "dismissed"
  /** The connection closed. */
  | "closed"
  /** This client answered it (the signal fires then too, so UI can close). */
  | "answered";

/** The `reason` of a dialog's AbortSignal. */
export class DialogEndedError extends ParleyClientError {
  readonly dialogId: string;
  readonly reason: DialogEndReason;
  /** For "dismissed": the agent's reason (timeout, aborted, shutdown). */
  readonly dismissReason: string | undefined;

  constructor(dialogId: string, reason: DialogEndReason, dismissReason?: string) {
    super(`dialog ${dialogId} ended: ${reason}${dismissReason === undefined ? "" : ` (${dismissReason})`}`);
    this.dialogId = dialogId;
    this.reason = reason;
    this.dismissReason = dismissReason;
  }
}

/** Errors reported through `client.onError`: none of them stops the connection. */
export type ClientErrorEvent = ProtocolError | DialogHandlerError | ListenerError;
