/**
 * A provider login's world, for the tests of OAuth credentials in a session: a temp HOME whose
 * auth.json holds the logins (mode 0600, as pi writes it), an agent of either side in RPC mode on
 * a provider extension, and a prompt's reply.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { type Side, startSide } from "./newest-pi.js";
import type { AgentProcess, Rec } from "./spawn.js";

export interface AuthDirs {
  home: string;
  /** `<home>/.pi/agent`. */
  agentDir: string;
  /** `<agentDir>/auth.json`. */
  authFile: string;
}

/** A temp HOME (`prefix…`) whose agent directory's auth.json holds `credentials`. */
export function authDirs(prefix: string, credentials: Record<string, object>): AuthDirs {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const agentDir = join(home, ".pi", "agent");
  mkdirSync(agentDir, { recursive: true });
  const authFile = join(agentDir, "auth.json");
  writeFileSync(authFile, JSON.stringify(credentials, null, 2), { mode: 0o600 });
  return { home, agentDir, authFile };
}

/** A side's agent in RPC mode, offline, in `dirs`, without a session file; `args` name the extension and model. */
export function startLoggedIn(side: Side, dirs: AuthDirs, args: string[], env: NodeJS.ProcessEnv = {}): AgentProcess {
  return startSide(side, ["--mode", "rpc", "--no-session", ...args], {
    cwd: dirs.home,
    env: { HOME: dirs.home, PI_CODING_AGENT_DIR: dirs.agentDir, PI_OFFLINE: "1", ...env },
  });
}

/** Prompts and waits for the run's end: the last assistant message's error, else its text. */
export async function replyTo(agent: AgentProcess, text: string): Promise<string> {
  const from = agent.records.length;
  const response = await agent.request({ type: "prompt", message: text });
  expect(response["success"], JSON.stringify(response)).toBe(true);
  const end = await agent.waitFor((r: Rec) => r.type === "agent_end", undefined, from);
  const messages = (end["messages"] as { role: string; errorMessage?: string; content: { type: string; text?: string }[] }[]).filter(
    (m) => m.role === "assistant",
  );
  const last = messages.at(-1);
  return last?.errorMessage ?? last?.content.map((c) => c.text ?? "").join("") ?? "";
}
