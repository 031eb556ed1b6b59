/**
 * The one reducer for extension UI state. The agent folds its own fire-and-forget
 * requests with it to answer `get_ui_state`; clients fold the records they receive.
 */
import type { FireAndForgetRequest, NotifyType } from "./schema/extension-ui.js";
import type { UiState, WidgetState, NotificationState } from "./schema/additions.js";

/** Notifications are transient; keep only the most recent ones so state stays bounded. */
export const MAX_NOTIFICATIONS = 50;

export function emptyUiState(): UiState {
  return { statuses: {}, widgets: {}, notifications: [] };
}

/** Returns a new state; `state` is not modified. Unknown methods leave the state as it is. */
export function reduceUiState(state: UiState, record: FireAndForgetRequest): UiState {
  switch (record.method) {
    case "setStatus": {
      const statuses = withoutKey(state.statuses, record.statusKey);
      if (record.statusText !== undefined) statuses[record.statusKey] = record.statusText;
      return { ...state, statuses };
    }
    case "setWidget": {
      const widgets = withoutKey(state.widgets, record.widgetKey);
      if (record.widgetLines !== undefined) {
        const widget: WidgetState = {
          lines: [...record.widgetLines],
          placement: record.widgetPlacement ?? "aboveEditor",
        };
        widgets[record.widgetKey] = widget;
      }
      return { ...state, widgets };
    }
    case "setTitle":
      return { ...state, title: record.title };
    case "set_editor_text":
      return { ...state, editorText: record.text };
    case "notify": {
      const note: NotificationState = { message: record.message, notifyType: record.notifyType ?? ("info" satisfies NotifyType) };
      const notifications = [...state.notifications, note].slice(-MAX_NOTIFICATIONS);
      return { ...state, notifications };
    }
    default:
      return state;
  }
}

// Null-prototype copies: keys come from extensions and may be "__proto__".
function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  const copy: Record<string, T> = Object.create(null) as Record<string, T>;
  for (const k of Object.keys(record)) if (k !== key) copy[k] = record[k] as T;
  return copy;
}
