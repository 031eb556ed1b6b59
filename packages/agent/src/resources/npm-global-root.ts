/**
 * The global node_modules of the package manager settings.json `npmCommand` names (`["pnpm"]`,
 * `["bun"]`, `["npm", "--prefix", …]`), asked as pi asks it: `<command…> root -g`, or for bun
 * `bun pm bin -g` (its global packages are in `install/global/node_modules` beside that folder).
 * Asked only when a user package is not in the agent directory's npm folder, once per command and
 * run: no shell, a timeout, output bounded, and the child tracked so that it ends with parley.
 */
import { dirname, isAbsolute, join } from "node:path";
import { trackChild } from "../child-processes.js";
import { nodeChildProcess } from "../lazy-node.js";

export type GlobalRootAnswer = { root: string } | { error: string };

/** How long the package manager may take to answer (pi's own network timeout for npm is 10 s). */
export const NPM_ROOT_TIMEOUT_MS = 10_000;
const MAX_OUTPUT = 64 * 1024;

const asked = new Map<string, Promise<GlobalRootAnswer>>();

/** The answer for this command, asked once per run (pi caches it per command too). */
export function askNpmGlobalRoot(
  npmCommand: readonly string[],
  cwd: string,
  onFirstAsk: () => void = () => {},
  timeoutMs = NPM_ROOT_TIMEOUT_MS,
): Promise<GlobalRootAnswer> {
  const key = npmCommand.join("\0");
  let answer = asked.get(key);
  if (!answer) {
    onFirstAsk();
    answer = ask(npmCommand, cwd, timeoutMs);
    asked.set(key, answer);
  }
  return answer;
}

async function ask(npmCommand: readonly string[], cwd: string, timeoutMs: number): Promise<GlobalRootAnswer> {
  const [command, ...args] = npmCommand;
  if (!command) return { error: "the first entry must be a command" };
  const bun = command === "bun" || command.endsWith("/bun");
  const run = await runCommand(command, [...args, ...(bun ? ["pm", "bin", "-g"] : ["root", "-g"])], cwd, timeoutMs);
  if ("error" in run) return run;
  const line = run.stdout.trim().split(/\r?\n/).pop()?.trim() ?? "";
  if (!isAbsolute(line)) return { error: `\`${npmCommand.join(" ")}\` answered ${JSON.stringify(line.slice(0, 200))}, not a folder` };
  return { root: bun ? join(dirname(line), "install", "global", "node_modules") : line };
}

function runCommand(command: string, args: string[], cwd: string, timeoutMs: number): Promise<{ stdout: string } | { error: string }> {
  const shown = [command, ...args].join(" ");
  return new Promise((resolve) => {
    const child = nodeChildProcess().spawn(command, args, { cwd, stdio: ["ignore", "pipe", "pipe"], shell: false });
    // Tracked: parley's exit (a signal at start-up included, core/process-lifetime.ts) ends it.
    const tracked = trackChild(child.pid, { group: false });
    let stdout = "";
    let stderr = "";
    let settled = false;
    const finish = (result: { stdout: string } | { error: string }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      finish({ error: `\`${shown}\` did not answer within ${Math.round(timeoutMs / 1000)} s` });
    }, timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      if (stdout.length < MAX_OUTPUT) stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      if (stderr.length < MAX_OUTPUT) stderr += d;
    });
    child.on("error", (error) => {
      tracked.dispose();
      finish({ error: `\`${shown}\` could not run: ${error.message}` });
    });
    child.on("close", (code, signal) => {
      tracked.dispose();
      if (code === 0) finish({ stdout });
      else finish({ error: `\`${shown}\` failed (${signal ?? `exit ${code}`})${stderr.trim() ? `: ${stderr.trim().slice(0, 500)}` : ""}` });
    });
  });
}
