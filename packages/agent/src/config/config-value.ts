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
