/** The newest pi's built-in extension names (`-e builtin:<name>`), and which of them parley has. */
export const BUILTIN_PREFIX = "builtin:";
/** The built-ins parley has (builtin-extensions.ts). */
export const PARLEY_BUILTINS = ["llama.cpp", "codemode", "mcp", "tool-search"] as const;
/** The newest pi's built-ins parley does not have (`-e builtin:<name>` is said and skipped): none today. */
export const MISSING_BUILTINS: readonly string[] = [];
export type BuiltinName = (typeof PARLEY_BUILTINS)[number];

export const isParleyBuiltin = (name: string): name is BuiltinName => (PARLEY_BUILTINS as readonly string[]).includes(name);
