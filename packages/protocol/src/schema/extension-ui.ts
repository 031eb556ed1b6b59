/**
 * The extension UI sub-protocol: `extension_ui_request` (agent → client) and
 * `extension_ui_response` (client → agent), as in pi's rpc-extension-ui.md.
 */
import { Type, type Static } from "typebox";

const Id = Type.String({ description: "Unique id of this request; a dialog's response echoes it." });
const Timeout = Type.Optional(
  Type.Number({
    description: "Milliseconds until the agent resolves the dialog itself with its default value. The client need not track it.",
  }),
);

export const NotifyType = Type.Union([Type.Literal("info"), Type.Literal("warning"), Type.Literal("error")]);
export type NotifyType = Static<typeof NotifyType>;

export const WidgetPlacement = Type.Union([Type.Literal("aboveEditor"), Type.Literal("belowEditor")]);
export type WidgetPlacement = Static<typeof WidgetPlacement>;

// ---- dialogs ---------------------------------------------------------------

export const SelectRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("select"),
    title: Type.String(),
    options: Type.Array(Type.String()),
    timeout: Timeout,
  },
  { description: "Choose one of `options`. Answer with `value` (one of the options) or `cancelled: true`." },
);
export type SelectRequest = Static<typeof SelectRequest>;

export const ConfirmRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("confirm"),
    title: Type.String(),
    message: Type.String(),
    timeout: Timeout,
  },
  { description: "Yes/no question. Answer with `confirmed: boolean` or `cancelled: true`." },
);
export type ConfirmRequest = Static<typeof ConfirmRequest>;

export const InputRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("input"),
    title: Type.String(),
    placeholder: Type.Optional(Type.String()),
    timeout: Timeout,
  },
  { description: "One line of free text. Answer with `value` (a string) or `cancelled: true`." },
);
export type InputRequest = Static<typeof InputRequest>;

export const EditorRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("editor"),
    title: Type.String(),
    prefill: Type.Optional(Type.String()),
    timeout: Timeout,
  },
  { description: "Multi-line text, optionally prefilled. Answer with `value` (a string) or `cancelled: true`." },
);
export type EditorRequest = Static<typeof EditorRequest>;

export const DialogRequest = Type.Union([SelectRequest, ConfirmRequest, InputRequest, EditorRequest]);
export type DialogRequest = Static<typeof DialogRequest>;
export type DialogMethod = DialogRequest["method"];

// ---- fire-and-forget ---------------------------------------------------------

export const NotifyRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("notify"),
    message: Type.String(),
    notifyType: Type.Optional(NotifyType),
  },
  { description: "Show a notification. `notifyType` defaults to info. No response." },
);
export type NotifyRequest = Static<typeof NotifyRequest>;

export const SetStatusRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("setStatus"),
    statusKey: Type.String(),
    statusText: Type.Optional(Type.String({ description: "Absent: clear the entry for statusKey." })),
  },
  { description: "Set or clear one status-bar entry. No response." },
);
export type SetStatusRequest = Static<typeof SetStatusRequest>;

export const SetWidgetRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("setWidget"),
    widgetKey: Type.String(),
    widgetLines: Type.Optional(Type.Array(Type.String(), { description: "Absent: clear the widget." })),
    widgetPlacement: Type.Optional(WidgetPlacement),
  },
  { description: "Set or clear a block of text lines shown above (default) or below the editor. No response." },
);
export type SetWidgetRequest = Static<typeof SetWidgetRequest>;

export const SetTitleRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("setTitle"),
    title: Type.String(),
  },
  { description: "Set the window/tab title. No response." },
);
export type SetTitleRequest = Static<typeof SetTitleRequest>;

export const SetEditorTextRequest = Type.Object(
  {
    type: Type.Literal("extension_ui_request"),
    id: Id,
    method: Type.Literal("set_editor_text"),
    text: Type.String(),
  },
  { description: "Replace the text of the client's input editor. No response." },
);
export type SetEditorTextRequest = Static<typeof SetEditorTextRequest>;

export const FireAndForgetRequest = Type.Union([NotifyRequest, SetStatusRequest, SetWidgetRequest, SetTitleRequest, SetEditorTextRequest]);
export type FireAndForgetRequest = Static<typeof FireAndForgetRequest>;

export const ExtensionUiRequest = Type.Union([DialogRequest, FireAndForgetRequest]);
export type ExtensionUiRequest = Static<typeof ExtensionUiRequest>;

// ---- responses (client → agent) --------------------------------------------

export const ValueResponse = Type.Object(
  { type: Type.Literal("extension_ui_response"), id: Type.String(), value: Type.String() },
  { description: "Answer to select, input or editor." },
);
export const ConfirmedResponse = Type.Object(
  { type: Type.Literal("extension_ui_response"), id: Type.String(), confirmed: Type.Boolean() },
  { description: "Answer to confirm." },
);
export const CancelledResponse = Type.Object(
  { type: Type.Literal("extension_ui_response"), id: Type.String(), cancelled: Type.Literal(true) },
  { description: "Dismisses any dialog: the extension receives undefined (false for confirm)." },
);
export const ExtensionUiResponse = Type.Union([ValueResponse, ConfirmedResponse, CancelledResponse]);
export type ValueResponse = Static<typeof ValueResponse>;
export type ConfirmedResponse = Static<typeof ConfirmedResponse>;
export type CancelledResponse = Static<typeof CancelledResponse>;
export type ExtensionUiResponse = Static<typeof ExtensionUiResponse>;
