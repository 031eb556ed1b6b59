/**
 * A pi user's world in temporary folders, for tests that give the spawned CLI pi's files: a HOME
 * with its agent directory (`~/.pi/agent`) and a project folder inside it, and an environment
 * with every provider credential blanked so the machine's own keys never leak in.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, expect } from "vitest";
import { AGENT_CEILING_MS, deadline } from "./deadline.js";
import { type AgentProcess, PARLEY_BIN, PI_NEWEST_CLI, type Rec } from "./spawn.js";

/** The ceiling for one request or event in these tests (scaled like every other). */
export const MINUTE = deadline(AGENT_CEILING_MS);

/** Provider credentials of this machine, blanked. */
export const NO_KEYS: NodeJS.ProcessEnv = Object.fromEntries(
  Object.keys(process.env)
    .filter((k) => /_API_KEY$|_TOKEN$|^AWS_|^AZURE_|^GOOGLE_|^CLOUDFLARE_/.test(k))
    .map((k) => [k, ""]),
);

export interface Place {
  home: string;
  agentDir: string;
  cwd: string;
}

export function place(prefix: string): Place {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const agentDir = join(home, ".pi", "agent");
  const cwd = join(home, "work", "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { home, agentDir, cwd };
}

/** Writes a file (JSON unless it is text), creating its folder. */
export function write(path: string, content: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
}

/**
 * The agents a test file spawns: push each one here. After every test each is closed (its stdin
 * ends) and awaited, and killed if it has not exited 30 s later, so none outlives its test.
 */
export function closedAfterEach(): AgentProcess[] {
  const running: AgentProcess[] = [];
  afterEach(async () => {
    for (const agent of running.splice(0)) {
      agent.closeInput();
      const timer = setTimeout(() => agent.kill(), 30_000);
      await agent.exited;
      clearTimeout(timer);
    }
  });
  return running;
}

/** Sends a command and expects success; the failure message carries the response and stderr. */
export async function ok(agent: AgentProcess, command: object): Promise<Rec> {
  const r = await agent.request(command, MINUTE);
  expect(r["success"], `${JSON.stringify(r)}\n${agent.stderr()}`).toBe(true);
  return r;
}

/** Prompts and waits for the run's end. */
export async function prompted(agent: AgentProcess, message: string): Promise<void> {
  const from = agent.records.length;
  const response = await agent.request({ type: "prompt", message }, MINUTE);
  expect(response["success"], JSON.stringify(response)).toBe(true);
  await agent.waitFor((r) => r.type === "agent_end", MINUTE, from);
}

/** Runs a scenario against pi 1.6.0 (`pi-newest`'s CLI), then parley: both must come to the same result, which is returned. */
export async function alike<T>(scenario: (bin: string) => Promise<T>): Promise<T> {
  const pi = await scenario(PI_NEWEST_CLI);
  expect(await scenario(PARLEY_BIN)).toEqual(pi);
  return pi;
}
