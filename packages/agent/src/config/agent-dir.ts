/**
 * pi's files: the agent directory (`PI_CODING_AGENT_DIR`, default `~/.pi/agent`) and the project's
 * `.pi/`, plus `~/.parley`, where earlier parley versions kept sessions and extensions (still read).
 */
import { homedir } from "node:os";
import { join } from "node:path";

export const ENV_AGENT_DIR = "PI_CODING_AGENT_DIR";
export const ENV_SESSION_DIR = "PI_CODING_AGENT_SESSION_DIR";
/** The project folder pi reads (settings.json, extensions/, SYSTEM.md, …). */
export const PROJECT_DIR_NAME = ".pi";

type Env = Record<string, string | undefined>;

/** `~` and `~/…` as pi expands them. */
export function expandTilde(path: string, home: string = homedir()): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return path;
}

/** pi's agent directory. */
export function agentDir(env: Env = process.env, home: string = homedir()): string {
  const fromEnv = env[ENV_AGENT_DIR];
  return fromEnv ? expandTilde(fromEnv, home) : join(home, ".pi", "agent");
}

/** Where parley kept its data before it used pi's layout (sessions/, extensions/). */
export function legacyParleyDir(home: string = homedir()): string {
  return join(home, ".parley");
}
