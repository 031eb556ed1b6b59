/**
 * Project trust as the newest pi decides it in RPC mode, before the project's `.pi/` resources
 * (settings, extensions, skills, prompts, SYSTEM.md, APPEND_SYSTEM.md) and `.agents/skills` load:
 *   1. `--approve` / `--no-approve` decide;
 *   2. a project without such resources is trusted (nothing to decide);
 *   3. else the `project_trust` handlers of the user's and -e extensions, already loaded (once: the
 *      project's extensions join the same runtime afterwards), are asked in load order with
 *      `{ type: "project_trust", cwd }` and a context that has no UI (RPC mode cannot prompt);
 *      the first answer other than "undecided" wins ("yes" trusts, anything else does not), and
 *      with `remember: true` it is saved to pi's trust.json (trust-store.ts);
 *   4. else pi's trust.json (the entry for the folder or its nearest ancestor);
 *   5. else the global `defaultProjectTrust` setting: "always" trusts, "never" and "ask" do not
 *      (there is no one to ask).
 */
import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { errorMessage } from "../error-text.js";
import type { ExtensionMode, ProjectTrustContext, ProjectTrustHandler } from "../extensions/types.js";
import { PROJECT_DIR_NAME } from "./agent-dir.js";
import { rememberTrust, storedTrust } from "./trust-store.js";

export { storedTrust } from "./trust-store.js";

/** What pi's `.pi/` holds that needs trust; parley's old `.parley/extensions` runs code too. */
const TRUST_REQUIRING = ["settings.json", "mcp.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md"];

function canonical(path: string): string {
  try {
    return realpathSync(resolve(path));
  } catch {
    return resolve(path);
  }
}

/** Whether the folder has project resources that need trust (pi's rule, plus parley's old project extensions). */
export function hasTrustRequiringResources(cwd: string, home: string = homedir()): boolean {
  const dir = canonical(cwd);
  if (TRUST_REQUIRING.some((entry) => existsSync(join(dir, PROJECT_DIR_NAME, entry)))) return true;
  if (existsSync(join(dir, ".parley", "extensions"))) return true;
  const userSkills = join(canonical(home), ".agents", "skills");
  for (let current = dir; ; current = dirname(current)) {
    const skills = join(current, ".agents", "skills");
    if (skills !== userSkills && existsSync(skills)) return true;
    if (dirname(current) === current) return false;
  }
}

/** Steps 1 and 2: the decision when no one needs to be asked, else undefined. */
export function trustWithoutAsking(override: boolean | undefined, cwd: string, home?: string): boolean | undefined {
  if (override !== undefined) return override;
  return hasTrustRequiringResources(cwd, home) ? undefined : true;
}

export interface AskTrustInput {
  cwd: string;
  agentDir: string;
  /** The global settings' defaultProjectTrust. */
  defaultProjectTrust: unknown;
  /** The loaded extensions' project_trust handlers, in load order. */
  handlers: { extensionPath: string; handler: ProjectTrustHandler }[];
  log: (message: string) => void;
  /** The run's mode (ctx.mode); default "rpc". */
  mode?: ExtensionMode | undefined;
}

/** The context pi gives project_trust handlers outside its terminal UI: no UI (prompts answer nothing), notices to stderr. */
function trustContext(cwd: string, log: (message: string) => void, mode: ExtensionMode): ProjectTrustContext {
  return {
    cwd,
    mode,
    hasUI: false,
    ui: {
      select: async () => undefined,
      confirm: async () => false,
      input: async () => undefined,
      notify: (message: string) => log(message),
    },
  };
}

/** Steps 3 to 5, for a project whose resources need trust. */
export async function askProjectTrust(input: AskTrustInput): Promise<boolean> {
  const event = { type: "project_trust" as const, cwd: input.cwd };
  const ctx = trustContext(input.cwd, input.log, input.mode ?? "rpc");
  for (const { extensionPath, handler } of input.handlers) {
    let trusted: unknown;
    let remember: unknown;
    try {
      // As in pi, a handler that returns nothing is an error of that handler.
      const result = await handler(event, ctx);
      trusted = result.trusted;
      remember = result.remember;
    } catch (error) {
      input.log(`Extension "${extensionPath}" project_trust error: ${errorMessage(error)}`);
      continue;
    }
    if (trusted === "undecided") continue;
    const decision = trusted === "yes";
    if (remember === true) {
      const warning = await rememberTrust(input.agentDir, input.cwd, decision);
      if (warning) input.log(warning);
    }
    return decision;
  }

  const stored = storedTrust(input.agentDir, input.cwd);
  if (stored.warning) input.log(stored.warning);
  if (stored.decision !== undefined) return stored.decision;
  // "ask" has no one to ask in RPC mode.
  return input.defaultProjectTrust === "always";
}
