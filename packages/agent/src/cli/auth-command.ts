/**
 * `parley auth …`, the newest pi's `pi auth …`: `check`, `print-api-key` and `print-bearer-token`
 * with pi's flags, output and exit codes; `login` and `logout` in auth-login.ts. Credentials are
 * pi-ai 1.6's built-in providers' (its `Models`: resolution, OAuth refresh) over pi's auth.json
 * (auth-store.ts: pi's lock, whole-file replace), so a token refreshed here is saved for pi too.
 * No extensions load, as in pi.
 */
import { join } from "node:path";
import type { AuthOperationOptions, AuthResult, CredentialStore, Models } from "@earendil-works/pi-ai";
import { AuthFileStore } from "../config/auth-store.js";
import { keyOfAuth } from "../config/oauth-tokens.js";
import { type AuthCliOptions, authModels } from "./auth-models.js";

export class AuthCommandError extends Error {}

type Kind = "check" | "api_key" | "bearer_token";

const USAGES: Record<Kind, string> = {
  check: "parley auth check --provider <provider> [--json] [--credentials] [--no-refresh]",
  api_key: "parley auth print-api-key --provider <provider> [--model <model>]",
  bearer_token: "parley auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]",
};
const NAMES: Record<Kind, string> = { check: "auth check", api_key: "auth print-api-key", bearer_token: "auth print-bearer-token" };
const KINDS: Record<string, Kind> = { check: "check", "print-api-key": "api_key", "print-bearer-token": "bearer_token" };
/** print-bearer-token's default: the token must stay valid this long after it is printed. */
const DEFAULT_MIN_EXPIRY_MS = 30 * 60_000;

export const AUTH_HELP = `Usage:
  parley auth login <provider> [--api-key] [--no-browser]
  parley auth logout <provider>
  parley auth print-api-key [--provider <provider>] [--model <model>]
  parley auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  parley auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Sign in to model providers or out of them, hand their credentials to other programs, or check
that a provider can be used. Everything is kept in pi's auth.json (~/.pi/agent/auth.json), shared
with pi: the same lock, refreshed tokens saved for both.

Commands:
  login <provider>        sign in with an account (browser or device code), or store an API key
  logout <provider>       forget the stored credentials (environment variables and models.json stay)
  print-api-key           print the provider's API key
  print-bearer-token      print the provider's OAuth access token, refreshed when it is due
  check                   print ready, not_ready or invalid; exit status 0, 1 or 2

Options of print-api-key, print-bearer-token and check (one of the two is needed):
  --provider <provider>   the provider
  --model <model>         the provider of this model

Options of login:
  --api-key               store an API key rather than signing in with an account
  --no-browser            open no browser: another way to sign in, such as a device code

Other options:
  --min-expiry <duration> print-bearer-token: how long the token must stay valid (30m, 1h; default 30m)
  --json                  check: print the result as a JSON object
  --credentials           check: print the credential itself (or add it to the JSON)
  --no-refresh            check: do not refresh an expired OAuth token`;

interface ParsedAuth {
  kind: Kind;
  provider?: string;
  model?: string;
  json: boolean;
  credentials: boolean;
  noRefresh: boolean;
  minExpiryMs?: number;
}

/** pi's parsing: the command's own flags first, then --provider/--model; anything else is an error. */
export function parseAuthCommand(args: string[]): ParsedAuth {
  const kind = KINDS[args[1] ?? ""];
  if (!kind) {
    throw new AuthCommandError(
      `Unknown auth command "${args[1] ?? ""}". Use "parley auth login", "parley auth logout", "parley auth print-api-key", "parley auth print-bearer-token", or "parley auth check".`,
    );
  }
  const parsed: ParsedAuth = { kind, json: false, credentials: false, noRefresh: false };
  let others = false;
  for (let i = 2; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--min-expiry") {
      if (kind !== "bearer_token") throw new AuthCommandError("--min-expiry is only supported by print-bearer-token");
      const match = /^(\d+)(ms|s|m|h)$/iu.exec(args[++i] ?? "");
      if (!match) throw new AuthCommandError("--min-expiry must use a duration such as 30m or 1h");
      const unit = (match[2] as string).toLowerCase();
      parsed.minExpiryMs = Number(match[1]) * (unit === "ms" ? 1 : unit === "s" ? 1_000 : unit === "m" ? 60_000 : 3_600_000);
    } else if (arg === "--json" || arg === "--credentials" || arg === "--no-refresh") {
      if (kind !== "check") throw new AuthCommandError(`${arg} is only supported by auth check`);
      if (arg === "--json") parsed.json = true;
      else if (arg === "--credentials") parsed.credentials = true;
      else parsed.noRefresh = true;
    } else if (arg === "--provider" || arg === "--model") {
      const value = args[++i];
      if (value !== undefined) parsed[arg === "--provider" ? "provider" : "model"] = value.trim() || undefined;
    } else if (arg.startsWith("--") && arg !== "--api-key") {
      throw new UnknownOption(arg.slice(2).split("=")[0] as string, kind);
    } else {
      others = true;
      if (arg === "--api-key") i++;
    }
  }
  if (others) throw new AuthCommandError("Auth commands only accept --provider and --model");
  return parsed;
}

class UnknownOption extends AuthCommandError {
  constructor(
    readonly option: string,
    readonly kind: Kind,
  ) {
    super(`Unknown option --${option} for "${NAMES[kind]}".`);
  }
}

/** auth.json, unchanged: `check --no-refresh` reads only, as pi's read-only storage. */
function readOnly(store: CredentialStore): CredentialStore {
  const refuse = async (): Promise<never> => {
    throw new Error("Read-only credential storage cannot modify auth.json");
  };
  return { read: (id, o) => store.read(id, o), list: (o) => store.list(o), modify: refuse, delete: refuse };
}

/**
 * The provider a --model names: `provider/id`, or an id exactly (pi's fuzzy matching is not
 * reproduced). An id several providers have is ambiguous, as pi's check finds it.
 */
function providerOfModel(models: Models, model: string, provider: string | undefined): string {
  const slash = model.indexOf("/");
  const candidates = models.getModels(provider).filter((m) => m.id === model || (slash > 0 && `${m.provider}/${m.id}` === model));
  const providers = [...new Set(candidates.map((m) => m.provider))];
  if (providers.length === 0) throw new AuthCommandError(`Model "${model}" not found. Use --list-models to see available models.`);
  if (providers.length > 1) {
    const matches = candidates.map((m) => `${m.provider}/${m.id}`).sort((a, b) => a.localeCompare(b));
    throw new AuthCommandError(`Model "${model}" is ambiguous across providers: ${matches.join(", ")}. Use --provider or provider/model.`);
  }
  return providers[0] as string;
}

type CheckResult =
  | { status: "ready"; provider: string; authType: "api_key" | "oauth" }
  | { status: "not_ready" | "invalid"; provider: string | undefined; reason: string };

async function check(parsed: ParsedAuth, agentDir: string): Promise<{ result: CheckResult; credential?: string }> {
  const file = new AuthFileStore(join(agentDir, "auth.json"));
  const { models, store } = await authModels(agentDir, parsed.noRefresh ? readOnly(file) : file);
  const provider = parsed.model !== undefined ? providerOfModel(models, parsed.model, parsed.provider) : (parsed.provider as string);
  if (!models.getProvider(provider)) return { result: { status: "not_ready", provider, reason: "provider_not_found" } };
  const auth = await models.checkAuth(provider);
  if (!auth) return { result: { status: "not_ready", provider, reason: "credentials_not_configured" } };
  if (!parsed.noRefresh && !(await models.getAuth(provider))) {
    return { result: { status: "not_ready", provider, reason: "credentials_not_configured" } };
  }
  const result: CheckResult = { status: "ready", provider, authType: auth.type };
  if (!parsed.credentials) return { result };
  const stored = await store.read(provider);
  const credential = parsed.noRefresh && stored?.type === "oauth" ? stored.access : keyOfAuth((await models.getAuth(provider))?.auth);
  return credential ? { result, credential } : { result: { status: "not_ready", provider, reason: "credential_not_available" } };
}

async function print(parsed: ParsedAuth, agentDir: string, options: AuthOperationOptions): Promise<string> {
  const kind = parsed.kind;
  const { models, store } = await authModels(agentDir);
  const types = new Map((await store.list(options)).map((c) => [c.providerId, c.type]));
  const targets: string[] = [];
  if (parsed.provider !== undefined) {
    const provider = models.getProvider(parsed.provider);
    if (!provider) throw new AuthCommandError(`Unknown provider "${parsed.provider}". Use --list-models to see available providers.`);
    if (parsed.model !== undefined) providerOfModel(models, parsed.model, provider.id);
    targets.push(provider.id);
  } else {
    for (const provider of models.getProviders()) {
      if (!types.has(provider.id)) continue;
      try {
        if (providerOfModel(models, parsed.model as string, provider.id) === provider.id) targets.push(provider.id);
      } catch {
        // Not this provider's model.
      }
    }
    if (targets.length === 0) throw new AuthCommandError(`Model "${parsed.model}" not found. Use --list-models to see available models.`);
  }
  const found: { provider: string; value: string }[] = [];
  for (const provider of targets) {
    const type = types.get(provider);
    if ((kind === "api_key" && type === "oauth") || (kind === "bearer_token" && type !== "oauth")) continue;
    const overrides = kind === "bearer_token" ? { minOAuthValidityMs: parsed.minExpiryMs ?? DEFAULT_MIN_EXPIRY_MS } : {};
    const auth: AuthResult | undefined = await models.getAuth(provider, { ...overrides, ...options });
    const value = keyOfAuth(auth?.auth);
    if (value) found.push({ provider, value });
  }
  if (found.length === 1) return (found[0] as { value: string }).value;
  if (found.length === 0) {
    const first = targets[0];
    const type = first !== undefined ? types.get(first) : undefined;
    if (parsed.provider !== undefined && kind === "api_key" && type === "oauth")
      throw new AuthCommandError(`Provider "${first}" is configured with OAuth, not an API key`);
    if (parsed.provider !== undefined && kind === "bearer_token" && type !== "oauth")
      throw new AuthCommandError(`Provider "${first}" is not configured with an OAuth bearer token`);
    throw new AuthCommandError(`No usable ${kind === "api_key" ? "API key" : "OAuth bearer token"} is configured`);
  }
  throw new AuthCommandError(`Multiple configured providers matched (${found.map((f) => f.provider).join(", ")}). Specify --provider.`);
}

/** Runs `parley auth …` (`args[0]` is "auth"); resolves with the exit status. */
export async function runAuthCommand(args: string[], options: AuthCliOptions): Promise<number> {
  if (args[1] === undefined || args[1] === "help" || args.includes("--help") || args.includes("-h")) {
    options.out(AUTH_HELP);
    return 0;
  }
  if (args[1] === "login" || args[1] === "logout") {
    const { runAuthLogin, runAuthLogout } = await import("./auth-login.js");
    const rest = args.slice(2).filter((a) => a !== "--offline");
    return args[1] === "login" ? runAuthLogin(rest, options) : runAuthLogout(rest, options);
  }
  let parsed: ParsedAuth;
  try {
    parsed = parseAuthCommand(args);
  } catch (error) {
    if (error instanceof UnknownOption) {
      options.err(error.message);
      options.err(`Use "parley --help" or "${USAGES[error.kind]}".`);
    } else options.err(`Error: ${error instanceof AuthCommandError ? error.message : "Failed to parse auth command"}`);
    return 1;
  }
  try {
    if (parsed.provider === undefined && parsed.model === undefined) {
      throw new AuthCommandError(
        parsed.kind === "check"
          ? "Auth checks require --provider <provider> or --model <model>"
          : "Credential printing requires --provider <provider> or --model <model>",
      );
    }
    if (parsed.kind !== "check") {
      options.out(await print(parsed, options.agentDir, { signal: AbortSignal.timeout(15_000) }));
      return 0;
    }
    let outcome: { result: CheckResult; credential?: string };
    try {
      outcome = await check(parsed, options.agentDir);
    } catch {
      outcome = { result: { status: "invalid", provider: parsed.provider ?? parsed.model, reason: "invalid_state" } };
    }
    const { result, credential } = outcome;
    options.out(parsed.json ? JSON.stringify({ ...result, ...(credential ? { credentials: credential } : {}) }) : (credential ?? result.status));
    return result.status === "ready" ? 0 : result.status === "not_ready" ? 1 : 2;
  } catch (error) {
    options.err(`Error: ${error instanceof AuthCommandError ? error.message : "Failed to resolve credential"}`);
    return parsed.kind === "check" ? 2 : 1;
  }
}
