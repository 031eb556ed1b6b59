/**
 * Checks for the extension UI records the page acts on: a record that does not have the shape
 * its method promises is ignored rather than half-shown (the agent validates what it sends; this
 * keeps a buggy or foreign server from breaking the page).
 */
import type { DialogRequest, FireAndForgetRequest } from "@parley/protocol";
import type { WireRecord } from "./connection.js";

const isString = (value: unknown): value is string => typeof value === "string";
const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === "string";
const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const isOptionalNumber = (value: unknown): boolean => value === undefined || typeof value === "number";

export function isDialogRequest(record: WireRecord): record is WireRecord & DialogRequest {
  if (!isString(record["id"]) || !isString(record["title"]) || !isOptionalNumber(record["timeout"])) return false;
  switch (record["method"]) {
    case "select":
      return isStringArray(record["options"]);
    case "confirm":
      return isString(record["message"]);
    case "input":
      return isOptionalString(record["placeholder"]);
    case "editor":
      return isOptionalString(record["prefill"]);
    default:
      return false;
  }
}

export function isFireAndForget(record: WireRecord): record is WireRecord & FireAndForgetRequest {
  switch (record["method"]) {
    case "notify":
      return isString(record["message"]) && (record["notifyType"] === undefined || ["info", "warning", "error"].includes(String(record["notifyType"])));
    case "setStatus":
      return isString(record["statusKey"]) && isOptionalString(record["statusText"]);
    case "setWidget":
      return isString(record["widgetKey"]) && (record["widgetLines"] === undefined || isStringArray(record["widgetLines"]));
    case "setTitle":
      return isString(record["title"]);
    case "set_editor_text":
      return isString(record["text"]);
    default:
      return false;
  }
}
