/** Plain values the wire uses, importable without loading any schema (no TypeBox). */

/** Every thinking level, lowest first (the ThinkingLevel schema lists the same). */
export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;

/** Whether `value` names a thinking level (input from flags, settings or another protocol). */
export function isThinkingLevel(value: unknown): value is (typeof THINKING_LEVELS)[number] {
  return (THINKING_LEVELS as readonly unknown[]).includes(value);
}
