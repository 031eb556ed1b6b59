/** Plain values the wire uses, importable without loading any schema (no TypeBox). */

/** Every thinking level, lowest first (the ThinkingLevel schema lists the same). */
export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
