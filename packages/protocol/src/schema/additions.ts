/**
 * Records parley adds to pi's protocol. All are backward compatible: a pi client
 * that ignores unknown record types and never sends `get_ui_state` still works. The commands
 * parley adds are declared with the others in `command-table.ts` (marked `parley`).
 */
import { Type, type Static } from "typebox";
import { DialogRequest, WidgetPlacement, NotifyType } from "./extension-ui.js";

export const DismissReason = Type.Union([Type.Literal("timeout"), Type.Literal("aborted"), Type.Literal("shutdown"), Type.Literal("answered")], {
  description:
    "timeout: the request's `timeout` elapsed; aborted: the extension's AbortSignal fired; shutdown: the agent is exiting (stdin EOF, signal, ctx.shutdown()); answered: another connection answered it first (web mode, sent to the connections that did not answer).",
});
export type DismissReason = Static<typeof DismissReason>;

/** A dialog ended on the agent side; the client should close it and must not answer it. */
export const ExtensionUiDismissed = Type.Object(
  {
    type: Type.Literal("extension_ui_dismissed"),
    id: Type.String({ description: "The id of the extension_ui_request that ended." }),
    method: Type.Union([Type.Literal("select"), Type.Literal("confirm"), Type.Literal("input"), Type.Literal("editor")]),
    reason: DismissReason,
  },
  { description: "parley: a pending dialog was resolved agent-side (timeout, abort or shutdown), or answered by another connection (web mode)." },
);
export type ExtensionUiDismissed = Static<typeof ExtensionUiDismissed>;

export const ExtensionUiErrorCode = Type.Union([Type.Literal("unknown_id"), Type.Literal("already_resolved"), Type.Literal("invalid_response")], {
  description:
    "unknown_id: no pending or recently ended dialog has this id (parley remembers the last 10,000 that ended), or it is not a dialog; already_resolved: the dialog was answered, timed out or aborted before; invalid_response: the shape or value does not fit the dialog (the dialog stays pending).",
});
export type ExtensionUiErrorCode = Static<typeof ExtensionUiErrorCode>;

/** An `extension_ui_response` was refused. */
export const ExtensionUiError = Type.Object(
  {
    type: Type.Literal("extension_ui_error"),
    id: Type.Optional(Type.String({ description: "The id the refused response carried, when it had a string id." })),
    code: ExtensionUiErrorCode,
    error: Type.String({ description: "What was wrong and what to send instead." }),
    pending: Type.Boolean({ description: "true when the dialog is still waiting for a valid answer." }),
  },
  { description: "parley: an extension_ui_response was refused; nothing reached the extension." },
);
export type ExtensionUiError = Static<typeof ExtensionUiError>;

export const WidgetState = Type.Object({
  lines: Type.Array(Type.String()),
  placement: WidgetPlacement,
});
export type WidgetState = Static<typeof WidgetState>;

export const NotificationState = Type.Object({
  message: Type.String(),
  notifyType: NotifyType,
});
export type NotificationState = Static<typeof NotificationState>;

export const PendingDialogState = Type.Object({
  request: DialogRequest,
  remainingMs: Type.Optional(Type.Number({ description: "Milliseconds until the dialog times out; absent when it has no timeout." })),
});
export type PendingDialogState = Static<typeof PendingDialogState>;

export const UiState = Type.Object(
  {
    statuses: Type.Record(Type.String(), Type.String(), { description: "statusKey → statusText" }),
    widgets: Type.Record(Type.String(), WidgetState, { description: "widgetKey → lines and placement" }),
    title: Type.Optional(Type.String()),
    editorText: Type.Optional(Type.String()),
    notifications: Type.Array(NotificationState, { description: "The most recent notifications, oldest first (bounded)." }),
  },
  { description: "The folded result of every fire-and-forget extension_ui_request so far." },
);
export type UiState = Static<typeof UiState>;

export const GetUiStateData = Type.Intersect([UiState, Type.Object({ pendingDialogs: Type.Array(PendingDialogState, { description: "Oldest first." }) })]);
export type GetUiStateData = Static<typeof GetUiStateData>;

// ---- data of the commands parley adds for any client (declared in command-table.ts) ------------

export const ListedSession = Type.Object({
  id: Type.String(),
  path: Type.String({ description: "The session file; switch_session takes it." }),
  cwd: Type.String({ description: "The folder the session was recorded in." }),
  name: Type.Optional(Type.String({ description: "The session's name (its latest session_info)." })),
  firstMessage: Type.Optional(Type.String({ description: "The start of the first user message (at most 200 characters)." })),
  updated: Type.String({ description: "When the file last changed (ISO 8601)." }),
  messageCount: Type.Number({ description: "Message entries in the file (every branch)." }),
});
export type ListedSession = Static<typeof ListedSession>;

export const ListSessionsData = Type.Object(
  {
    sessions: Type.Array(ListedSession, { description: "Newest first." }),
    truncated: Type.Optional(Type.Boolean({ description: "true when more sessions exist than were listed (at most 1,000)." })),
  },
  { description: "Data of list_sessions." },
);
export type ListSessionsData = Static<typeof ListSessionsData>;

export const ListFilesData = Type.Object(
  {
    files: Type.Array(Type.String(), { description: "Paths relative to cwd, '/'-separated; folders end with '/'." }),
    truncated: Type.Boolean({ description: "true when the walk stopped at its bound (entries visited) before seeing every file." }),
  },
  { description: "Data of list_files." },
);
export type ListFilesData = Static<typeof ListFilesData>;
