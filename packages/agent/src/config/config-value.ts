/**
 * A configured secret as pi reads it (auth.json keys, models.json apiKey and headers):
 * `!command` runs the command and takes its output; otherwise the name of a set environment
 * variable gives its value; otherwise the text itself is the value.
 */
import { nodeChildProcess } from "../lazy-node.js";
import { guardedEnv } from "../child-watchdog.js";

const commandResults = new Map<string, string | undefined>();

export function resolveConfigValue(value: string, env: Record<string, string | undefined> = process.env): string | undefined {
  if (value.startsWith("!")) {
    if (!commandResults.has(value)) {
      commandResults.set(value, runConfigCommand(value.slice(1)));
    }
    return commandResults.get(value);
  }
  return env[value] || value;
}

/** A `!command` value's command run: its trimmed output, or undefined when it fails or prints nothing. */
export function runConfigCommand(command: string): string | undefined {
  try {
    return (
      nodeChildProcess()
        .execSync(command, { encoding: "utf8", timeout: 10_000, env: guardedEnv(), stdio: ["ignore", "pipe", "ignore"] })
        .trim() || undefined
    );
  } catch {
    return undefined;
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/**
 * The newest pi's template grammar (auth.json keys, MCP `env` and `headers`): `$NAME` and
 * `${NAME}` are environment variables, `$$` is `$` and `$!` is `!`; an invalid or unclosed
 * `${…}`, or a lone `$`, stays as written. The value, or the names of the unset variables it uses.
 */
export function interpolateConfigTemplate(value: string, env: Record<string, string | undefined>): { value: string } | { missing: string[] } {
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

/**
 * The newest pi's reading of a configured value (auth.json keys in pi 1.6): `!command` as above;
 * otherwise the template above, undefined when a variable it names is unset; a bare name is the
 * text itself.
 */
export function resolveConfigTemplate(value: string, env: Record<string, string | undefined> = process.env): string | undefined {
  if (value.startsWith("!")) return resolveConfigValue(value, env);
  const result = interpolateConfigTemplate(value, env);
  return "value" in result ? result.value : undefined;
}

/**
 * An auth.json API key as pi 1.6 reads it, in every mode and in `auth print-api-key`: the
 * template above (`$VAR`, `${VAR}`, `$$`, `$!`), or `!command`; a bare name is the key itself, not
 * an environment variable (pi 0.73's reading). A variable is looked up in the credential's own
 * `env` first, then the process's, an empty value counting as unset (as pi's `||`).
 */
export function resolveAuthKey(key: string, credentialEnv?: Record<string, unknown>): string | undefined {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [name, value] of Object.entries(credentialEnv ?? {})) if (typeof value === "string" && value) env[name] = value;
  return resolveConfigTemplate(key, env);
}
