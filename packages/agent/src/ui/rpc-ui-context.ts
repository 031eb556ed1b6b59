/**
 * ctx.ui in RPC mode: dialogs go through the dialog registry, fire-and-forget calls through the
 * UI channel, terminal-only methods follow the degraded table (with a one-time diagnostic).
 *
 * Extensions are plain JavaScript at run time, so any argument may be anything. What reaches the
 * wire always fits the protocol schemas: text becomes a string (String()), a value outside a
 * closed enum (notify type, widget placement) becomes the default, and each such repair is
 * reported once per extension and kind on stderr.
 */
import type { FireAndForgetRequest, NotifyType, WidgetPlacement } from "@parley/protocol";
import type { ExtensionUIContext } from "../extensions/types.js";
import { DEGRADED_METHODS, DEGRADED_METHOD_NAMES } from "./degraded.js";
import type { DialogAnswer, DialogOptions, DialogRegistry, DialogSpec } from "./dialog-registry.js";
import { plainTheme } from "./plain-theme.js";

type FireAndForgetSpec = FireAndForgetRequest extends infer R ? (R extends FireAndForgetRequest ? Omit<R, "type" | "id"> : never) : never;

export interface UiBridge {
  dialogs: DialogRegistry;
  /** Sends one fire-and-forget request (the bridge assigns its id and folds it into UI state). */
  fireAndForget(spec: FireAndForgetSpec): void;
  /** Reports, once per extension and method, that a degraded method was called. */
  diagnose(extensionPath: string, method: string, behaviour: string): void;
  /** Reports on stderr, once per extension and `key`, that an argument was repaired or dropped. */
  warnOnce(extensionPath: string, key: string, message: string): void;
}

const NOTIFY_TYPES: readonly NotifyType[] = ["info", "warning", "error"];
const PLACEMENTS: readonly WidgetPlacement[] = ["aboveEditor", "belowEditor"];

/** A short, safe description of a bad argument for a diagnostic. */
function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return `${typeof value} ${String(value)}`;
  return `a ${typeof value}`;
}

const valueOf = (answer: DialogAnswer): string | undefined => (answer.kind === "value" ? answer.value : undefined);
const isConfirmed = (answer: DialogAnswer): boolean => answer.kind === "confirmed" && answer.confirmed;

export function createRpcUiContext(bridge: UiBridge, extensionPath: string): ExtensionUIContext {
  const { dialogs } = bridge;
  // A bad argument (a title whose toString throws, options that are not an array) rejects the
  // returned promise: the dialog methods are async functions.

  /**
   * The options as the registry takes them. A timeout that is not a number would otherwise mean no
   * timeout at all, and the dialog would wait for ever where the extension meant it to end (pi hands
   * it to setTimeout, which reads "5000" as 5000): a numeric string is read as its number, anything
   * else is dropped; either repair is reported once. Options that are not an object (null from
   * `opts ?? null`) are no options, as pi reads them with `?.`.
   */
  function dialogOptions(method: string, opts: DialogOptions | undefined): DialogOptions | undefined {
    if (typeof opts !== "object" || opts === null) return undefined;
    const timeout: unknown = opts.timeout;
    if (timeout == null || typeof timeout === "number") return opts;
    const read = typeof timeout === "string" && timeout.trim() !== "" ? Number(timeout) : Number.NaN;
    const repair = Number.isNaN(read) ? "ignored (the dialog has no timeout)" : `read as ${read} ms`;
    bridge.warnOnce(extensionPath, `${method}:timeout`, `ctx.ui.${method}(): timeout is ${describe(timeout)}, not a number; ${repair}`);
    return { signal: opts.signal, timeout: Number.isNaN(read) ? undefined : read };
  }

  /** input and editor: a title and one optional text (the placeholder, the prefill). */
  async function textDialog(method: "input" | "editor", title: unknown, text: unknown, opts: DialogOptions | undefined): Promise<string | undefined> {
    const spec: DialogSpec =
      method === "input"
        ? { method, title: String(title), ...(text != null ? { placeholder: String(text) } : {}) }
        : { method, title: String(title), ...(text != null ? { prefill: String(text) } : {}) };
    return valueOf(await dialogs.open(spec, dialogOptions(method, opts)));
  }

  /** A string as is; anything else through String(), reported once per method and field. */
  function text(method: string, field: string, value: unknown): string {
    if (typeof value === "string") return value;
    bridge.warnOnce(extensionPath, `${method}:${field}`, `ctx.ui.${method}(): ${field} is ${describe(value)}, not a string; converted with String()`);
    return String(value);
  }

  /** Every element of an array as a string (holes included, which JSON would turn into null). */
  function lines(method: string, field: string, values: readonly unknown[]): string[] {
    return Array.from(values, (value) => text(method, `an element of ${field}`, value));
  }

  const ui: Omit<ExtensionUIContext, (typeof DEGRADED_METHOD_NAMES)[number]> = {
    async select(title, options, opts) {
      if (!Array.isArray(options)) throw new TypeError(`ctx.ui.select(): options must be an array of strings, not ${describe(options)}`);
      return valueOf(
        await dialogs.open({ method: "select", title: String(title), options: lines("select", "options", options) }, dialogOptions("select", opts)),
      );
    },
    async confirm(title, message, opts) {
      return isConfirmed(await dialogs.open({ method: "confirm", title: String(title), message: String(message ?? "") }, dialogOptions("confirm", opts)));
    },
    input: (title, placeholder, opts) => textDialog("input", title, placeholder, opts),
    editor: (title, prefill, opts) => textDialog("editor", title, prefill, opts),
    notify: (message, type) => {
      let notifyType: NotifyType | undefined;
      if (type !== undefined) {
        notifyType = NOTIFY_TYPES.find((known) => known === type);
        if (notifyType === undefined) {
          bridge.warnOnce(extensionPath, "notify:type", `ctx.ui.notify(): type ${describe(type)} is not one of "info", "warning", "error"; sent as "info"`);
          notifyType = "info";
        }
      }
      bridge.fireAndForget({ method: "notify", message: text("notify", "message", message), ...(notifyType !== undefined ? { notifyType } : {}) });
    },
    setStatus: (key, statusText) =>
      bridge.fireAndForget({
        method: "setStatus",
        statusKey: text("setStatus", "key", key),
        ...(statusText != null ? { statusText: text("setStatus", "text", statusText) } : {}),
      }),
    setWidget: (key, content, options) => {
      if (typeof content === "function") {
        bridge.diagnose(extensionPath, "setWidget", "ignores component factories (only string arrays reach RPC clients)");
        return;
      }
      if (content != null && !Array.isArray(content)) {
        // pi's RPC mode sends only arrays too; anything else is dropped.
        bridge.warnOnce(
          extensionPath,
          "setWidget:content",
          `ctx.ui.setWidget(): content is ${describe(content)}, not an array of strings; the call is ignored`,
        );
        return;
      }
      const placement: unknown = typeof options === "object" && options !== null ? options.placement : undefined;
      const widgetPlacement = PLACEMENTS.find((known) => known === placement);
      if (placement !== undefined && widgetPlacement === undefined) {
        bridge.warnOnce(
          extensionPath,
          "setWidget:placement",
          `ctx.ui.setWidget(): placement ${describe(placement)} is not "aboveEditor" or "belowEditor"; shown above the editor`,
        );
      }
      bridge.fireAndForget({
        method: "setWidget",
        widgetKey: text("setWidget", "key", key),
        ...(content != null ? { widgetLines: lines("setWidget", "lines", content) } : {}),
        ...(widgetPlacement !== undefined ? { widgetPlacement } : {}),
      });
    },
    setTitle: (title) => bridge.fireAndForget({ method: "setTitle", title: text("setTitle", "title", title) }),
    setEditorText: (value) => bridge.fireAndForget({ method: "set_editor_text", text: text("setEditorText", "text", value) }),
    pasteToEditor: (value) => {
      bridge.diagnose(extensionPath, "pasteToEditor", "sets the editor text (no paste handling)");
      bridge.fireAndForget({ method: "set_editor_text", text: text("pasteToEditor", "text", value) });
    },
    get theme() {
      return plainTheme;
    },
  };

  for (const name of DEGRADED_METHOD_NAMES) {
    const [result, behaviour] = DEGRADED_METHODS[name];
    Object.defineProperty(ui, name, {
      enumerable: true,
      value: () => {
        bridge.diagnose(extensionPath, name, behaviour);
        return result();
      },
    });
  }
  return ui as ExtensionUIContext;
}
