/**
 * The one reducer for extension UI state. The agent folds its own fire-and-forget
 * requests with it to answer `get_ui_state`; clients fold the records they receive.
 */
import type { FireAndForgetRequest, NotifyType } from "./schema/extension-ui.js";
import type { UiState, WidgetState, NotificationState } from "./schema/additions.js";

/** Notifications are transient; keep only the most recent ones so state stays bounded. */
export const MAX_NOTIFICATIONS = 50;

export function emptyUiState(): UiState {
  return { statuses: dictionary(), widgets: dictionary(), notifications: [] };
}

/** Returns a new state; `state` is not modified. Unknown methods leave the state as it is. */
export function reduceUiState(state: UiState, record: FireAndForgetRequest): UiState {
  const next = copyUiState(state);
  return applyUiRecord(next, record) ? next : state;
}

/**
 * Folds one record into `state` in place (for an owner that keeps the only copy, like the agent:
 * a flood of setStatus calls then costs no copying). Returns whether the state changed.
 * A key set again moves to the end, so iteration order is the order of the latest updates.
 */
export function applyUiRecord(state: UiState, record: FireAndForgetRequest): boolean {
  switch (record.method) {
    case "setStatus":
      delete state.statuses[record.statusKey];
      if (record.statusText !== undefined) state.statuses[record.statusKey] = record.statusText;
      return true;
    case "setWidget":
      delete state.widgets[record.widgetKey];
      if (record.widgetLines !== undefined) {
        const widget: WidgetState = { lines: [...record.widgetLines], placement: record.widgetPlacement ?? "aboveEditor" };
        state.widgets[record.widgetKey] = widget;
      }
      return true;
    case "setTitle":
      state.title = record.title;
      return true;
    case "set_editor_text":
      state.editorText = record.text;
      return true;
    case "notify": {
      const note: NotificationState = { message: record.message, notifyType: record.notifyType ?? ("info" satisfies NotifyType) };
      state.notifications.push(note);
      if (state.notifications.length > MAX_NOTIFICATIONS) state.notifications.splice(0, state.notifications.length - MAX_NOTIFICATIONS);
      return true;
    }
    default:
      return false;
  }
}

/** A copy whose collections are the caller's own (to hand out while the original keeps changing). */
export function copyUiState(state: UiState): UiState {
  return { ...state, statuses: copy(state.statuses), widgets: copy(state.widgets), notifications: [...state.notifications] };
}

// Null-prototype objects: keys come from extensions and may be "__proto__".
function dictionary<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function copy<T>(record: Record<string, T>): Record<string, T> {
  return Object.assign(dictionary<T>(), record);
}
