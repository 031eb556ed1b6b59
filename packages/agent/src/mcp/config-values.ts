/**
 * `env` and `headers` values of an MCP server as the newest pi reads them: `!command` (the whole
 * value) runs the command and takes its output; otherwise `$NAME` and `${NAME}` name environment
 * variables, `$$` is a `$` and `$!` a `!`. A value that cannot be resolved is an error naming what
 * is missing, so the server is reported instead of started with a half-made credential.
 */
import { interpolateConfigTemplate, runConfigCommand } from "../config/config-value.js";

/** Resolves one value; `what` names it in the error (`MCP server "docs" header "Authorization"`). */
export function resolveMcpValue(value: string, what: string, env: NodeJS.ProcessEnv = process.env): string {
  if (value.startsWith("!")) {
    const output = runConfigCommand(value.slice(1));
    if (output === undefined) throw new Error(`Failed to resolve ${what} from shell command: ${value.slice(1)}`);
    return output;
  }
  const result = interpolateConfigTemplate(value, env);
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
