/**
 * ExtensionUIContext methods that need a real terminal, and what each does in RPC mode.
 * The one-time diagnostic is derived from this table: no method is degraded silently.
 */
import type { ExtensionUIContext } from "../extensions/types.js";

type DegradedName =
  | "custom"
  | "onTerminalInput"
  | "setWorkingMessage"
  | "setWorkingVisible"
  | "setWorkingIndicator"
  | "setHiddenThinkingLabel"
  | "setFooter"
  | "setHeader"
  | "addAutocompleteProvider"
  | "setEditorComponent"
  | "setToolsExpanded"
  | "getEditorText"
  | "getEditorComponent"
  | "getToolsExpanded"
  | "getAllThemes"
  | "getTheme"
  | "setTheme";

export const THEME_UNSUPPORTED = { success: false, error: "Theme switching not supported in RPC mode" } as const;

/** method → [what it returns in RPC mode, what the diagnostic says it does]. */
export const DEGRADED_METHODS: { [K in DegradedName]: [() => ReturnType<ExtensionUIContext[K]>, string] } = {
  custom: [() => Promise.resolve(undefined), "returns undefined (custom components need a terminal)"],
  onTerminalInput: [() => () => {}, "returns a no-op unsubscribe (no raw terminal input)"],
  setWorkingMessage: [() => undefined, "is a no-op"],
  setWorkingVisible: [() => undefined, "is a no-op"],
  setWorkingIndicator: [() => undefined, "is a no-op"],
  setHiddenThinkingLabel: [() => undefined, "is a no-op"],
  setFooter: [() => undefined, "is a no-op"],
  setHeader: [() => undefined, "is a no-op"],
  addAutocompleteProvider: [() => undefined, "is a no-op"],
  setEditorComponent: [() => undefined, "is a no-op"],
  setToolsExpanded: [() => undefined, "is a no-op"],
  getEditorText: [() => "", 'returns "" (the editor lives in the client; track it there)'],
  getEditorComponent: [() => undefined, "returns undefined"],
  getToolsExpanded: [() => false, "returns false"],
  getAllThemes: [() => [], "returns []"],
  getTheme: [() => undefined, "returns undefined"],
  setTheme: [() => ({ ...THEME_UNSUPPORTED }), "returns { success: false } (themes belong to the client)"],
};

export const DEGRADED_METHOD_NAMES = Object.keys(DEGRADED_METHODS) as DegradedName[];
