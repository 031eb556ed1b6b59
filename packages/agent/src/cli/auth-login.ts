/**
 * `parley auth login <provider> [--api-key] [--no-browser]` and `parley auth logout <provider>`,
 * as the newest pi runs them: pi-ai 1.6's login flows for its built-in providers, in a terminal
 * (the sign-in URL or device code printed, codes and keys asked on stdin), the credential saved
 * to pi's auth.json under pi's lock. No browser is opened: the URL is printed for the user.
 */
import { createInterface } from "node:readline/promises";
import type { AuthEvent, AuthInteraction, AuthPrompt, Models, Provider } from "@earendil-works/pi-ai";
import { type AuthCliOptions, authModels } from "./auth-models.js";

const LOGIN_USAGE = "parley auth login <provider> [--api-key] [--no-browser]";

/** pi's provider reference: an id or a display name, case and surrounding space ignored. */
function findProvider(models: Models, ref: string): Provider | undefined {
  const wanted = ref.trim().toLowerCase();
  if (!wanted) return undefined;
  return models.getProviders().find((p) => p.id.toLowerCase() === wanted || p.name.toLowerCase() === wanted);
}

/** Control characters in what the user typed are shown as U+FFFD, never sent to the terminal. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/gu, "\ufffd");
}

/** One line from the terminal; EOF or Ctrl+C cancels the login. */
async function question(message: string, signal: AbortSignal): Promise<string> {
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  const closed = new AbortController();
  const onClose = (): void => closed.abort();
  terminal.on("close", onClose);
  terminal.on("SIGINT", onClose);
  try {
    return await terminal.question(message, { signal: AbortSignal.any([signal, closed.signal]) });
  } catch {
    throw new Error("Login cancelled");
  } finally {
    terminal.off("close", onClose);
    terminal.close();
  }
}

/** A secret typed without echo. */
function secret(message: string, signal: AbortSignal): Promise<string> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    let value = "";
    const finish = (): void => {
      stdin.off("data", onData);
      signal.removeEventListener("abort", onAbort);
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
      process.stdout.write("\n");
    };
    const onAbort = (): void => {
      finish();
      reject(new Error("Login cancelled"));
    };
    const onData = (data: Buffer): void => {
      const chunk = data.toString("utf8");
      if (chunk.startsWith("\u001b")) return;
      for (const char of chunk) {
        if (char === "\r" || char === "\n") {
          finish();
          resolve(value);
          return;
        }
        if (char === "\u0003" || char === "\u0004") {
          onAbort();
          return;
        }
        if (char === "\u007f" || char === "\b") value = Array.from(value).slice(0, -1).join("");
        else if (char >= " ") value += char;
      }
    };
    if (signal.aborted) {
      reject(new Error("Login cancelled"));
      return;
    }
    process.stdout.write(message);
    if (stdin.isTTY) stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

async function select(message: string, choices: readonly { id: string; label: string; description?: string }[], out: (l: string) => void, signal: AbortSignal) {
  out(message);
  choices.forEach((c, i) => out(`  ${i + 1}. ${c.label}${c.description ? ` - ${c.description}` : ""}`));
  for (;;) {
    const answer = (await question(`Select 1-${choices.length}: `, signal)).trim();
    const chosen = /^\d+$/u.test(answer) ? choices[Number(answer) - 1] : undefined;
    if (chosen) return chosen.id;
    out(`Enter a number from 1 to ${choices.length}.`);
  }
}

function interaction(providerId: string, type: "oauth" | "api_key", browser: boolean, out: (l: string) => void, signal: AbortSignal): AuthInteraction {
  // Account sign-in takes the first (browser) method unless --no-browser; API key set-up asks.
  const choice = type === "api_key" ? "ask" : browser ? "browser" : "other";
  let skipped: string[] = [];
  return {
    signal,
    async prompt(prompt: AuthPrompt): Promise<string> {
      const promptSignal = prompt.signal ? AbortSignal.any([signal, prompt.signal]) : signal;
      if (prompt.type === "select") {
        const [first, ...others] = prompt.options;
        if (choice === "ask" || !first) return select(prompt.message, prompt.options, out, promptSignal);
        if (choice === "browser") {
          skipped = others.map((o) => o.label);
          return first.id;
        }
        const [only, ...more] = others;
        if (!only) return first.id;
        if (more.length > 0) return select(prompt.message, others, out, promptSignal);
        out(`${prompt.message} ${only.label}`);
        return only.id;
      }
      const message = `${prompt.message}${prompt.placeholder ? ` (${prompt.placeholder})` : ""}: `;
      return prompt.type === "secret" ? secret(message, promptSignal) : question(message, promptSignal);
    },
    notify(event: AuthEvent): void {
      if (event.type === "auth_url") {
        out(`Open this URL to sign in:\n  ${event.url}`);
        if (event.instructions) out(event.instructions);
        const rerun = `"parley auth login ${providerId} --no-browser"`;
        const [only, ...more] = skipped;
        if (only !== undefined && more.length === 0) out(`To use "${only}" instead, run ${rerun}`);
        else if (only !== undefined) out(`Other sign-in methods: ${skipped.map((l) => `"${l}"`).join(", ")}. Run ${rerun} to choose one.`);
      } else if (event.type === "device_code") {
        out(`Open ${event.verificationUri} and enter code: ${event.userCode}`);
        out("Waiting for authentication...");
      } else if (event.type === "info") {
        out(event.message);
        for (const link of event.links ?? []) out(`  ${link.label ? `${link.label}: ` : ""}${link.url}`);
      } else out(event.message);
    },
  };
}

export async function runAuthLogin(args: string[], options: AuthCliOptions): Promise<number> {
  let ref = "";
  let apiKey = false;
  let browser = true;
  for (const arg of args) {
    if (arg === "--api-key") apiKey = true;
    else if (arg === "--no-browser") browser = false;
    else if (arg.startsWith("-") || ref) {
      options.err(`Usage: ${LOGIN_USAGE}`);
      return 1;
    } else ref = arg;
  }
  if (!ref) {
    options.err(`Usage: ${LOGIN_USAGE}`);
    return 1;
  }
  if (apiKey && !browser) {
    options.err("--no-browser only applies to account sign-in; omit it with --api-key.");
    return 1;
  }
  const { models, file } = await authModels(options.agentDir);
  const provider = findProvider(models, ref);
  if (!provider) {
    const names = models
      .getProviders()
      .filter((p) => p.auth.oauth || p.auth.apiKey?.login)
      .map((p) => p.id)
      .sort();
    options.err(`Unknown provider "${printable(ref)}".`);
    options.err(`Providers: ${names.join(", ")}`);
    return 1;
  }
  if (!options.interactive) {
    options.err(`"${LOGIN_USAGE}" requires an interactive terminal`);
    return 1;
  }
  const hasKeyLogin = provider.auth.apiKey?.login !== undefined;
  let type: "oauth" | "api_key";
  if (!apiKey && provider.auth.oauth) type = "oauth";
  else if (hasKeyLogin) type = "api_key";
  else {
    options.err(
      apiKey && provider.auth.oauth
        ? `${provider.name} has no API key login. Omit --api-key to sign in.`
        : `${provider.name} is configured outside parley (${provider.auth.apiKey?.name ?? "ambient credentials"}).`,
    );
    return 1;
  }
  const controller = new AbortController();
  const interrupt = (): void => controller.abort();
  process.on("SIGINT", interrupt);
  try {
    await models.login(provider.id, type, interaction(provider.id, type, browser, options.out, controller.signal));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    options.err(controller.signal.aborted || message === "Login cancelled" ? "Login cancelled." : `Failed to log in to ${provider.name}: ${message}`);
    return 1;
  } finally {
    process.off("SIGINT", interrupt);
  }
  options.out(`${type === "oauth" ? `Logged in to ${provider.name}` : `Saved API key for ${provider.name}`}. Credentials saved to ${file}`);
  return 0;
}

export async function runAuthLogout(args: string[], options: AuthCliOptions): Promise<number> {
  const [ref, ...rest] = args;
  if (ref === undefined || ref.startsWith("-") || rest.length > 0) {
    options.err("Usage: parley auth logout <provider>");
    return 1;
  }
  const signal = AbortSignal.timeout(15_000);
  const { models, store } = await authModels(options.agentDir);
  let stored: readonly { providerId: string; type: string }[];
  try {
    stored = await store.list({ signal });
  } catch (error) {
    options.err(`Could not read stored credentials: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const provider = findProvider(models, ref);
  // Extension providers are not loaded: their stored credentials match by id alone.
  const credential = stored.find((c) => c.providerId === (provider?.id ?? ref));
  if (!provider && !credential) {
    options.err(`Unknown provider "${printable(ref)}".`);
    options.err(
      `Stored credentials: ${
        stored
          .map((c) => c.providerId)
          .sort()
          .join(", ") || "none"
      }`,
    );
    return 1;
  }
  const name = provider?.name ?? ref;
  if (!credential) {
    options.out(`No stored credentials for ${name}. Environment variables and models.json config are unchanged.`);
    return 0;
  }
  try {
    await store.delete(credential.providerId, { signal });
  } catch (error) {
    options.err(`Logout failed: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  options.out(
    credential.type === "oauth" ? `Logged out of ${name}.` : `Removed stored API key for ${name}. Environment variables and models.json config are unchanged.`,
  );
  return 0;
}
