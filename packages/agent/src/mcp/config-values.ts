/**
 * `env` and `headers` values of an MCP server as the newest pi reads them: `!command` (the whole
 * value) runs the command and takes its output; otherwise `$NAME` and `${NAME}` name environment
 * variables, `$$` is a `$` and `$!` a `!`. A value that cannot be resolved is an error naming what
 * is missing, so the server is reported instead of started with a half-made credential.
 */
import { execSync } from "node:child_process";
import { guardedEnv } from "../child-watchdog.js";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** The value, or the names of the unset variables it uses. */
function interpolate(value: string, env: NodeJS.ProcessEnv): { value: string } | { missing: string[] } {
  let out = "";
  const missing: string[] = [];
  const variable = (name: string) => {
    const found = env[name];
    if (found) out += found;
    else if (!missing.includes(name)) missing.push(name);
  };
  for (let at = 0; at < value.length; ) {
    const dollar = value.indexOf("$", at);
    if (dollar < 0) {
      out += value.slice(at);
      break;
    }
    out += value.slice(at, dollar);
    const next = value[dollar + 1];
    if (next === "$" || next === "!") {
      out += next;
      at = dollar + 2;
    } else if (next === "{" && value.indexOf("}", dollar + 2) >= 0) {
      const end = value.indexOf("}", dollar + 2);
      const name = value.slice(dollar + 2, end);
      if (NAME.exec(name)?.[0] === name) variable(name);
      else out += value.slice(dollar, end + 1);
      at = end + 1;
    } else {
      const name = NAME.exec(value.slice(dollar + 1))?.[0];
      if (name) variable(name);
      else out += "$";
      at = dollar + 1 + (name?.length ?? 0);
    }
  }
  return missing.length > 0 ? { missing } : { value: out };
}

function runCommand(command: string): string | undefined {
  try {
    return execSync(command, { encoding: "utf8", timeout: 10_000, env: guardedEnv(), stdio: ["ignore", "pipe", "ignore"] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Resolves one value; `what` names it in the error (`MCP server "docs" header "Authorization"`). */
export function resolveMcpValue(value: string, what: string, env: NodeJS.ProcessEnv = process.env): string {
  if (value.startsWith("!")) {
    const output = runCommand(value.slice(1));
    if (output === undefined) throw new Error(`Failed to resolve ${what} from shell command: ${value.slice(1)}`);
    return output;
  }
  const result = interpolate(value, env);
  if ("value" in result) return result.value;
  const plural = result.missing.length > 1 ? "s" : "";
  throw new Error(`Failed to resolve ${what} from environment variable${plural}: ${result.missing.join(", ")}`);
}

/** Every value of a record resolved (env or headers). */
export function resolveMcpValues(values: Record<string, string> | undefined, what: (key: string) => string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values ?? {})) out[key] = resolveMcpValue(value, what(key));
  return out;
}
