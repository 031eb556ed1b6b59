/**
 * pi and parley side by side on the same offline model, for the tests that drive both through a
 * third-party client (pi's RpcClient, pi-acp): each CLI's entry file (run with `node`), the
 * offline provider extension both load with `-e`, and a private world per run (a HOME with its
 * own agent dir, a project folder) so neither reads the user's settings, sessions or extensions.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./spawn.js";

/** The offline model both agents run (fixtures/offline-provider.ts). */
export const OFFLINE_PROVIDER = join(ROOT, "packages/agent/test/fixtures/offline-provider.ts");

/** Each agent's CLI entry, run with `node`. */
export const CLI = {
  pi: join(ROOT, "node_modules/@mariozechner/pi-coding-agent/dist/cli.js"),
  parley: join(ROOT, "packages/agent/bin/parley.js"),
} as const;
export type AgentName = keyof typeof CLI;
export const AGENTS: AgentName[] = ["pi", "parley"];

export interface AgentWorld {
  /** The temp folder everything is in (remove it when done). */
  base: string;
  home: string;
  /** `$PI_CODING_AGENT_DIR`: `<home>/.pi/agent`, created. */
  agentDir: string;
  /** The project the agent runs in: `<base>/proj`, created. */
  cwd: string;
  /** HOME and PI_CODING_AGENT_DIR for the agent's environment. */
  env: { HOME: string; PI_CODING_AGENT_DIR: string };
}

/** A fresh private world under a temp folder named `prefix…`. */
export function agentWorld(prefix: string): AgentWorld {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const home = join(base, "home");
  const agentDir = join(home, ".pi", "agent");
  const cwd = join(base, "proj");
  for (const dir of [agentDir, cwd]) mkdirSync(dir, { recursive: true });
  return { base, home, agentDir, cwd, env: { HOME: home, PI_CODING_AGENT_DIR: agentDir } };
}
