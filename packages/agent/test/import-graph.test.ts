/**
 * The agent's seams, checked on the sources: the modules that extend the agent, and the extension
 * host, take a narrow host interface and never reach agent-session.ts, not even through a type-only
 * or lazy import; the modes and command groups name views of it and never import it; and the
 * agent's folder has no import cycles.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = resolve(dirname(fileURLToPath(import.meta.url)), "../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Module → the parley modules it imports: static, `import type`, re-exports and `import()`. */
function importGraph(): Map<string, string[]> {
  const files = new Set(sourceFiles(src));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g)]
      .map((m) => resolve(dirname(file), (m[1] as string).replace(/\.js$/, ".ts")))
      .filter((target) => files.has(target));
    graph.set(relative(src, file), [...new Set(targets.map((t) => relative(src, t)))]);
  }
  return graph;
}

function reachable(graph: Map<string, string[]>, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const next = stack.pop() as string;
    for (const dep of graph.get(next) ?? []) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      stack.push(dep);
    }
  }
  return seen;
}

describe("the agent's seams", () => {
  const graph = importGraph();

  it.each([
    "agent/auto-retry.ts",
    "agent/user-bash.ts",
    "agent/compactor.ts",
    "agent/compaction-run.ts",
    "agent/compaction-cut.ts",
    "agent/branch-summary.ts",
    "agent/session-switching.ts",
    "agent/tree-navigation.ts",
    "agent/run-boundary.ts",
    "agent/system-context.ts",
    "agent/model-selection.ts",
    "agent/start-model.ts",
    "agent/prompt-intake.ts",
    "agent/agent-error.ts",
    "agent/message-queues.ts",
    "agent/provider-request.ts",
    "agent/context-usage.ts",
  ])("%s reaches the agent only through its host interface", (module) => {
    expect(graph.has(module)).toBe(true);
    expect([...reachable(graph, module)]).not.toContain("agent/agent-session.ts");
  });

  it("the RPC command handlers see a view of the agent: no group file imports agent-session.ts", () => {
    const groups = [...graph.keys()].filter((module) => module.startsWith("modes/rpc/commands/") && module !== "modes/rpc/commands/types.ts");
    expect(groups.length).toBeGreaterThan(3);
    // types.ts alone names the whole agent, to derive the views (handlersFor) from it.
    for (const group of groups) expect(graph.get(group), group).not.toContain("agent/agent-session.ts");
  });

  it("the modes see views of the agent: no mode file imports agent-session.ts", () => {
    const modes = [...graph.keys()].filter((module) => module.startsWith("modes/") && module !== "modes/rpc/commands/types.ts");
    const folders = new Set(modes.map((module) => module.split("/")[1]));
    expect([...folders]).toEqual(expect.arrayContaining(["acp", "print", "rpc", "web"]));
    // agent-core.ts makes the agent and derives the views (AgentView); commands/types.ts derives the handlers'.
    for (const module of modes) expect(graph.get(module), module).not.toContain("agent/agent-session.ts");
  });

  it("the extension host reaches the agent only through its view (HostAgent)", () => {
    expect(graph.has("core/extension-host.ts")).toBe(true);
    expect([...reachable(graph, "core/extension-host.ts")]).not.toContain("agent/agent-session.ts");
  });

  it("no module of agent/ takes part in an import cycle", () => {
    const cyclic = [...graph.keys()].filter((module) => module.startsWith("agent/") && reachable(graph, module).has(module));
    expect(cyclic).toEqual([]);
  });
});
