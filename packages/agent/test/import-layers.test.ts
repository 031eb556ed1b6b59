/**
 * The import graph of all four packages' sources (type-only and lazy imports included): no circles
 * anywhere, packages depend one way, and at most three of the agent's imports run back up its
 * floors (ARCHITECTURE.md, "Floors of the agent").
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packages = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const PACKAGES = ["protocol", "client", "agent", "web"] as const;

/** Which other parley packages each package's source may import: one way, protocol at the bottom. */
const PACKAGE_DEPENDENCIES: Record<(typeof PACKAGES)[number], readonly string[]> = {
  protocol: [],
  client: ["protocol"],
  agent: ["protocol", "client"],
  web: ["protocol", "client"],
};

/**
 * The agent's floors, lowest first, after ARCHITECTURE.md's "Inside the agent": each folder (or
 * single-file module at the top of src/) on one floor. A module may import its own floor and any
 * floor below; an import of a higher floor "runs back up". A new folder must be given a floor.
 */
const FLOORS: readonly (readonly string[])[] = [
  // Leaves: start-up loading, children, small helpers.
  [
    "startup",
    "abort-grace.ts",
    "child-processes.ts",
    "child-watchdog.ts",
    "error-text.ts",
    "lazy-node.ts",
    "make-dirs.ts",
    "output-files.ts",
    "output-pressure.ts",
    "package-root.ts",
    "slow-notice.ts",
    "stuck-watchdog.ts",
    "timers.ts",
    "with-timeout.ts",
  ],
  // The tools the model calls.
  ["tools"],
  // Models and their credentials, pi's files, sessions, and what extends the agent.
  ["models", "config", "session", "resources", "extensions", "mcp", "packages", "workspace"],
  // The loop.
  ["agent"],
  // What every mode shares: the core (the agent with its extension host, the transport contract,
  // the process's lifetime), the stdio transports, ctx.ui and dialogs.
  ["core", "transport", "ui"],
  // The modes, one folder each under modes/ (rpc, web, acp, print); web serves modes/rpc's server.
  ["modes"],
  // The entry points.
  ["cli", "index.ts"],
];
const MAX_BACK_UPS = 3;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(path) && !path.endsWith(".d.ts") ? [path] : [];
  });
}

interface Graph {
  /** Module (path under packages/) → the modules of its own package it imports. */
  modules: Map<string, string[]>;
  /** Module → the parley packages it imports by name. */
  packageImports: Map<string, string[]>;
}

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

function importGraph(): Graph {
  const files = new Set(PACKAGES.flatMap((name) => sourceFiles(join(packages, name, "src"))));
  const target = (from: string, specifier: string): string | undefined => {
    const base = resolve(dirname(from), specifier);
    const stem = base.replace(/\.js$/, "");
    return [`${stem}.ts`, `${stem}.tsx`, join(base, "index.ts")].find((candidate) => files.has(candidate));
  };
  const modules = new Map<string, string[]>();
  const packageImports = new Map<string, string[]>();
  for (const file of files) {
    const specifiers = [...readFileSync(file, "utf8").matchAll(IMPORT)].map((m) => m[1] ?? "");
    const local = specifiers.filter((s) => s.startsWith(".")).flatMap((s) => target(file, s) ?? []);
    const named = specifiers.flatMap((s) => /^@parley\/([^/]+)/.exec(s)?.[1] ?? []);
    modules.set(relative(packages, file), [...new Set(local.map((t) => relative(packages, t)))]);
    packageImports.set(relative(packages, file), [...new Set(named)]);
  }
  return { modules, packageImports };
}

/** The circles of the graph: its strongly connected components of more than one module (or a self-import). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (module: string): void => {
    index.set(module, index.size);
    low.set(module, index.get(module) ?? 0);
    stack.push(module);
    onStack.add(module);
    for (const dep of graph.get(module) ?? []) {
      if (!index.has(dep)) {
        visit(dep);
        low.set(module, Math.min(low.get(module) ?? 0, low.get(dep) ?? 0));
      } else if (onStack.has(dep)) {
        low.set(module, Math.min(low.get(module) ?? 0, index.get(dep) ?? 0));
      }
    }
    if (low.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    if (component.length > 1 || (graph.get(module) ?? []).includes(module)) found.push(component.sort());
  };
  for (const module of graph.keys()) if (!index.has(module)) visit(module);
  return found;
}

/** The agent module's floor: that of its folder (or of itself, at the top of src/). */
function floorOf(module: string): number {
  const [, , room] = module.split("/");
  return FLOORS.findIndex((floor) => floor.includes(room ?? ""));
}

describe("the import graph", () => {
  const graph = importGraph();

  it("reads every package's source", () => {
    for (const name of PACKAGES) expect([...graph.modules.keys()].some((m) => m.startsWith(`${name}/src/`))).toBe(true);
    expect(existsSync(join(packages, "agent/src/cli/main.ts"))).toBe(true);
    expect(graph.modules.get("agent/src/mcp/tool-search.ts")).toContain("agent/src/mcp/names.ts");
  });

  it("has no import circle in any package, type-only and lazy imports included", () => {
    expect(circles(graph.modules)).toEqual([]);
  });

  it("finds a circle when there is one (the check itself)", () => {
    const looped = new Map(graph.modules);
    looped.set("agent/src/tools/names.ts", [...(looped.get("agent/src/tools/names.ts") ?? []), "agent/src/tools/index.ts"]);
    expect(circles(looped).some((c) => c.includes("agent/src/tools/names.ts") && c.includes("agent/src/tools/index.ts"))).toBe(true);
  });

  it("has packages that depend one way: protocol ← client ← web; protocol, client ← agent", () => {
    const wrong = [...graph.packageImports].flatMap(([module, names]) => {
      const own = module.split("/")[0] as (typeof PACKAGES)[number];
      return names.filter((name) => !PACKAGE_DEPENDENCIES[own].includes(name)).map((name) => `${module} → @parley/${name}`);
    });
    expect(wrong).toEqual([]);
  });

  it("gives every folder of the agent a floor", () => {
    const agentModules = [...graph.modules.keys()].filter((m) => m.startsWith("agent/src/"));
    expect(agentModules.filter((m) => floorOf(m) < 0)).toEqual([]);
  });

  it(`has at most ${MAX_BACK_UPS} agent imports that run back up its floors`, () => {
    const backUps = [...graph.modules].flatMap(([module, deps]) =>
      module.startsWith("agent/src/") ? deps.filter((dep) => floorOf(dep) > floorOf(module)).map((dep) => `${module} → ${dep}`) : [],
    );
    expect(backUps.length, `imports that run back up:\n${backUps.join("\n")}`).toBeLessThanOrEqual(MAX_BACK_UPS);
  });
});
