/**
 * A pi user's world in temporary folders, for tests that give the spawned CLI pi's files: a HOME
 * with its agent directory (`~/.pi/agent`) and a project folder inside it, and an environment
 * with every provider credential blanked so the machine's own keys never leak in.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AGENT_CEILING_MS, deadline } from "./deadline.js";

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
