/**
 * Usage figures that extension code hands back (a tool's result, a tool_result handler, a
 * session_before_tree summary): kept only when they have the wire's shape, so a malformed value
 * cannot make a record or a session entry break the published schema.
 */
import type { Usage } from "@earendil-works/pi-ai";

const COUNTS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const;
const COSTS = ["input", "output", "cacheRead", "cacheWrite", "total"] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function allNumbers(record: Record<string, unknown>, keys: readonly string[]): boolean {
  return keys.every((key) => typeof record[key] === "number" && Number.isFinite(record[key]));
}

/** The value when it is a complete Usage, else undefined. */
export function asUsage(value: unknown): Usage | undefined {
  if (!isRecord(value) || !allNumbers(value, COUNTS)) return undefined;
  const cost = value["cost"];
  if (!isRecord(cost) || !allNumbers(cost, COSTS)) return undefined;
  return {
    input: Number(value["input"]),
    output: Number(value["output"]),
    cacheRead: Number(value["cacheRead"]),
    cacheWrite: Number(value["cacheWrite"]),
    totalTokens: Number(value["totalTokens"]),
    cost: {
      input: Number(cost["input"]),
      output: Number(cost["output"]),
      cacheRead: Number(cost["cacheRead"]),
      cacheWrite: Number(cost["cacheWrite"]),
      total: Number(cost["total"]),
    },
  };
}

/**
 * Two usages summed field by field (a tool's own usage plus that of the tools it called, a split
 * turn's two summaries), as pi 1.6 sums them: the optional token splits kept when either reports
 * them, and a total provider-reported only when both are.
 */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    ...(a.cacheWrite1h !== undefined || b.cacheWrite1h !== undefined ? { cacheWrite1h: (a.cacheWrite1h ?? 0) + (b.cacheWrite1h ?? 0) } : {}),
    ...(a.reasoning !== undefined || b.reasoning !== undefined ? { reasoning: (a.reasoning ?? 0) + (b.reasoning ?? 0) } : {}),
    totalTokens: a.totalTokens + b.totalTokens,
    cost: {
      input: a.cost.input + b.cost.input,
      output: a.cost.output + b.cost.output,
      cacheRead: a.cost.cacheRead + b.cost.cacheRead,
      cacheWrite: a.cost.cacheWrite + b.cost.cacheWrite,
      total: a.cost.total + b.cost.total,
      totalFromProvider: a.cost.totalFromProvider === true && b.cost.totalFromProvider === true,
    },
  };
}
