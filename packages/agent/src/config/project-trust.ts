/**
 * Project trust as the newest pi decides it in RPC mode, before the project's `.pi/` resources
 * (settings, extensions, skills, prompts, SYSTEM.md, APPEND_SYSTEM.md) and `.agents/skills` load:
 *   1. `--approve` / `--no-approve` decide;
 *   2. a project without such resources is trusted (nothing to decide);
 *   3. else the `project_trust` handlers of the user's and `-e` extensions are asked in load order
 *      (`{ type: "project_trust", cwd }`, with a context that has no UI: RPC mode cannot prompt);
 *      the first "yes" or "no" wins, "undecided" asks the next;
 *   4. else pi's `trust.json` in the agent directory (the entry for the folder or its nearest
 *      ancestor);
 *   5. else the global `defaultProjectTrust` setting: "always" trusts, "never" and "ask" do not
 *      (there is no one to ask).
 * A handler's `remember: true` is not saved: pi would write trust.json, and parley never writes
 * over pi's files.
 *
 * The extensions' handlers are found by running their factories against an API that only records
 * `project_trust` handlers (every other call does nothing); the real load comes after the
 * decision, as in pi, which loads the project's own extensions only once it is trusted.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { errorMessage } from "../error-text.js";
import type { ExtensionFactory } from "../extensions/types.js";
import { PROJECT_DIR_NAME } from "./agent-dir.js";

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

/** pi's trust.json: `{ "<folder>": true | false | null }`; the folder's own entry or its nearest ancestor's. */
export function storedTrust(agentDir: string, cwd: string): { decision: boolean | undefined; warning?: string } {
  const file = join(agentDir, "trust.json");
  if (!existsSync(file)) return { decision: undefined };
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    return { decision: undefined, warning: `${file}: ${errorMessage(error)}; ignored` };
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) return { decision: undefined, warning: `${file}: expected an object; ignored` };
  const entries = data as Record<string, unknown>;
  for (let dir = canonical(cwd); ; dir = dirname(dir)) {
    const value = entries[dir];
    if (value === true || value === false) return { decision: value };
    if (dirname(dir) === dir) return { decision: undefined };
  }
}

export interface ProjectTrustInput {
  cwd: string;
  agentDir: string;
  home?: string;
  /** --approve (true) / --no-approve (false). */
  override: boolean | undefined;
  /** The global settings' defaultProjectTrust. */
  defaultProjectTrust: unknown;
  /** The user's and -e extensions, loaded (not the project's). */
  extensions: () => Promise<{ path: string; factory?: ExtensionFactory | undefined }[]>;
  log: (message: string) => void;
}

type TrustHandler = (event: { type: "project_trust"; cwd: string }, ctx: unknown) => unknown;

/**
 * An ExtensionAPI stand-in: `on("project_trust", h)` is recorded; any other member is a function
 * that does nothing and returns undefined, and has such members itself (`pi.events.on(…)`).
 */
function recordingApi(handlers: TrustHandler[]): unknown {
  // Never a thenable: awaiting a member must not wait forever.
  const member = (key: string | symbol): unknown => (key === "then" ? undefined : inert);
  const inert: unknown = new Proxy(() => undefined, { get: (_target, key) => member(key), apply: () => undefined });
  return new Proxy(
    {},
    {
      get: (_target, key) =>
        key === "then"
          ? undefined
          : key === "on"
            ? (event: unknown, handler: unknown) => {
                if (event === "project_trust" && typeof handler === "function") handlers.push(handler as TrustHandler);
              }
            : inert,
    },
  );
}

/** The context pi gives project_trust handlers in RPC mode: no UI (prompts answer nothing), notices to stderr. */
function trustContext(cwd: string, log: (message: string) => void): unknown {
  return {
    cwd,
    mode: "rpc",
    hasUI: false,
    ui: {
      select: async () => undefined,
      confirm: async () => false,
      input: async () => undefined,
      notify: (message: string) => log(message),
    },
  };
}

export async function decideProjectTrust(input: ProjectTrustInput): Promise<boolean> {
  if (input.override !== undefined) return input.override;
  if (!hasTrustRequiringResources(input.cwd, input.home)) return true;

  const event = { type: "project_trust" as const, cwd: input.cwd };
  const ctx = trustContext(input.cwd, input.log);
  for (const ext of await input.extensions()) {
    if (!ext.factory) continue;
    const handlers: TrustHandler[] = [];
    try {
      await ext.factory(recordingApi(handlers) as Parameters<ExtensionFactory>[0]);
    } catch {
      // Said when the extension really loads; here it only has no say.
    }
    for (const handler of handlers) {
      try {
        const result = (await handler(event, ctx)) as { trusted?: unknown } | undefined;
        if (result?.trusted === "yes") return true;
        if (result?.trusted === "no") return false;
      } catch (error) {
        input.log(`Extension "${ext.path}" project_trust error: ${errorMessage(error)}`);
      }
    }
  }

  const stored = storedTrust(input.agentDir, input.cwd);
  if (stored.warning) input.log(stored.warning);
  if (stored.decision !== undefined) return stored.decision;
  // "ask" has no one to ask in RPC mode.
  return input.defaultProjectTrust === "always";
}
