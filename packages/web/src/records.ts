/**
 * Checks for the extension UI records the page acts on. The client hands them on typed but as
 * written (it checks only what routing needs): a record that does not have the shape its method
 * promises is ignored rather than half-shown (the agent validates what it sends; this keeps a
 * buggy or foreign server from breaking the page).
 */
import type { DialogRequest, ExtensionUiRequest, FireAndForgetRequest } from "@parley/protocol";

const isString = (value: unknown): value is string => typeof value === "string";
const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === "string";
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isOptionalNumber = (value: unknown): boolean => value === undefined || typeof value === "number";
const isNotifyType = (value: unknown): boolean => value === undefined || value === "info" || value === "warning" || value === "error";
/** A field as received, whatever the type says. */
const field = (record: object, key: string): unknown => Reflect.get(record, key);

export function isDialogRequest(record: DialogRequest): boolean {
  if (!isString(record.id) || !isString(field(record, "title")) || !isOptionalNumber(field(record, "timeout"))) return false;
  switch (field(record, "method")) {
    case "select":
      return isStringArray(field(record, "options"));
    case "confirm":
      return isString(field(record, "message"));
    case "input":
      return isOptionalString(field(record, "placeholder"));
    case "editor":
      return isOptionalString(field(record, "prefill"));
    default:
      return false;
  }
}

export function isFireAndForget(record: ExtensionUiRequest): record is FireAndForgetRequest {
  switch (field(record, "method")) {
    case "notify":
      return isString(field(record, "message")) && isNotifyType(field(record, "notifyType"));
    case "setStatus":
      return isString(field(record, "statusKey")) && isOptionalString(field(record, "statusText"));
    case "setWidget":
      return isString(field(record, "widgetKey")) && (field(record, "widgetLines") === undefined || isStringArray(field(record, "widgetLines")));
    case "setTitle":
      return isString(field(record, "title"));
    case "set_editor_text":
      return isString(field(record, "text"));
    default:
      return false;
  }
}
