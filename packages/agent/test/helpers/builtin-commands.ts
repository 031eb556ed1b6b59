/**
 * Commands without the built-in extensions' (`/mcp`, which parley has as the newest pi has it): pi
 * 0.73.1 has no built-in extensions, so comparisons with it leave them out on both sides.
 * mcp.e2e.test.ts tests `/mcp` itself.
 */
export function withoutBuiltins<T>(commands: readonly T[]): T[] {
  return commands.filter((command) => {
    const info = typeof command === "object" && command !== null ? (command as { sourceInfo?: { source?: unknown } }).sourceInfo : undefined;
    return info?.source !== "builtin";
  });
}
