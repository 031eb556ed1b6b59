/**
 * A configured secret as pi reads it (auth.json keys, models.json apiKey and headers):
 * `!command` runs the command and takes its output; otherwise the name of a set environment
 * variable gives its value; otherwise the text itself is the value.
 */
import { execSync } from "node:child_process";
import { guardedEnv } from "../child-watchdog.js";

const commandResults = new Map<string, string | undefined>();

export function resolveConfigValue(value: string, env: Record<string, string | undefined> = process.env): string | undefined {
  if (value.startsWith("!")) {
    if (!commandResults.has(value)) {
      let output: string | undefined;
      try {
        output = execSync(value.slice(1), { encoding: "utf8", timeout: 10_000, env: guardedEnv(), stdio: ["ignore", "pipe", "ignore"] }).trim() || undefined;
      } catch {
        output = undefined;
      }
      commandResults.set(value, output);
    }
    return commandResults.get(value);
  }
  return env[value] || value;
}

/**
 * The newest pi's reading of a configured value (auth.json keys in pi 1.6): `!command` as above;
 * otherwise a template where `$NAME` and `${NAME}` are environment variables (undefined when one
 * is unset), `$$` is `$` and `$!` is `!`; a bare name is the text itself.
 */
export function resolveConfigTemplate(value: string, env: Record<string, string | undefined> = process.env): string | undefined {
  if (value.startsWith("!")) return resolveConfigValue(value, env);
  let out = "";
  for (let i = 0; i < value.length; ) {
    const at = value.indexOf("$", i);
    if (at < 0) {
      out += value.slice(i);
      break;
    }
    out += value.slice(i, at);
    const next = value[at + 1];
    if (next === "$" || next === "!") {
      out += next;
      i = at + 2;
      continue;
    }
    const braced = next === "{" ? /^\{([A-Za-z_][A-Za-z0-9_]*)\}/.exec(value.slice(at + 1)) : null;
    const bare = braced ? null : /^[A-Za-z_][A-Za-z0-9_]*/.exec(value.slice(at + 1));
    const name = braced?.[1] ?? bare?.[0];
    if (name === undefined) {
      // An unclosed or invalid `${…}` stays as written, as does a lone `$`.
      const close = next === "{" ? value.indexOf("}", at + 2) : -1;
      const literal = close >= 0 ? value.slice(at, close + 1) : "$";
      out += literal;
      i = at + literal.length;
      continue;
    }
    const resolved = env[name] || undefined;
    if (resolved === undefined) return undefined;
    out += resolved;
    i = at + 1 + (braced ? braced[0].length : name.length);
  }
  return out;
}
