/**
 * ctx.ui in RPC mode: dialogs go through the dialog registry, fire-and-forget calls through the
 * UI channel, terminal-only methods follow the degraded table (with a one-time diagnostic).
 */
import type { FireAndForgetRequest } from "@parley/protocol";
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
}

const valueOf = (answer: DialogAnswer): string | undefined => (answer.kind === "value" ? answer.value : undefined);
const isConfirmed = (answer: DialogAnswer): boolean => answer.kind === "confirmed" && answer.confirmed;

export function createRpcUiContext(bridge: UiBridge, extensionPath: string): ExtensionUIContext {
  const { dialogs } = bridge;
  // A bad argument (a title whose toString throws, options that are not an array) rejects the
  // returned promise, as it would from an async function. Written out with try/catch rather than
  // through a wrapper: no closure or options copy per call on the dialog hot path.

  /** input and editor: a title and one optional text (the placeholder, the prefill). */
  function textDialog(
    method: "input" | "editor",
    title: unknown,
    key: "placeholder" | "prefill",
    text: unknown,
    opts: DialogOptions | undefined,
  ): Promise<string | undefined> {
    try {
      const spec = text !== undefined ? { method, title: String(title), [key]: String(text) } : { method, title: String(title) };
      return dialogs.open(spec as DialogSpec, opts, valueOf);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  const ui: Omit<ExtensionUIContext, (typeof DEGRADED_METHOD_NAMES)[number]> = {
    select(title, options, opts) {
      try {
        return dialogs.open({ method: "select", title: String(title), options: options.map(String) }, opts, valueOf);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    confirm(title, message, opts) {
      try {
        return dialogs.open({ method: "confirm", title: String(title), message: String(message ?? "") }, opts, isConfirmed);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    input: (title, placeholder, opts) => textDialog("input", title, "placeholder", placeholder, opts),
    editor: (title, prefill, opts) => textDialog("editor", title, "prefill", prefill, opts),
    notify: (message, type) =>
      bridge.fireAndForget({ method: "notify", message: String(message), ...(type !== undefined ? { notifyType: type } : {}) }),
    setStatus: (key, text) =>
      bridge.fireAndForget({ method: "setStatus", statusKey: String(key), ...(text != null ? { statusText: String(text) } : {}) }),
    setWidget: (key, content, options) => {
      if (typeof content === "function") {
        bridge.diagnose(extensionPath, "setWidget", "ignores component factories (only string arrays reach RPC clients)");
        return;
      }
      bridge.fireAndForget({
        method: "setWidget",
        widgetKey: String(key),
        ...(content != null ? { widgetLines: content.map(String) } : {}),
        ...(options?.placement !== undefined ? { widgetPlacement: options.placement } : {}),
      });
    },
    setTitle: (title) => bridge.fireAndForget({ method: "setTitle", title: String(title) }),
    setEditorText: (text) => bridge.fireAndForget({ method: "set_editor_text", text: String(text) }),
    pasteToEditor: (text) => {
      bridge.diagnose(extensionPath, "pasteToEditor", "sets the editor text (no paste handling)");
      bridge.fireAndForget({ method: "set_editor_text", text: String(text) });
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
