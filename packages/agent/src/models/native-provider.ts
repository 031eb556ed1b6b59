/**
 * A provider object as pi-ai 1.6's `createProvider` makes it, handed to `pi.registerProvider(provider)`:
 * read into the config form parley's extension providers hold. Its models are its `getModels()`,
 * its requests go through its own `streamSimple` (which dispatches on the model's api itself), and
 * its key is what its `auth.apiKey.resolve()` gives, asked before each request as pi 1.6 does, and
 * a login of its `auth.oauth` is refreshed and resolved (`toAuth`) by it.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import type { Api, Model } from "@earendil-works/pi-ai";
import type { OAuthFlow } from "../config/oauth-tokens.js";
import type { ProviderConfig, ProviderModelConfig } from "./extension-providers.js";

/** The fields of pi-ai's `Provider` that parley reads (see its models.d.ts). */
interface NativeProvider {
  id: string;
  name?: unknown;
  baseUrl?: unknown;
  headers?: unknown;
  auth?: {
    apiKey?: { resolve?: (input: ResolveInput) => Promise<{ auth?: { apiKey?: string } } | undefined> };
    oauth?: Partial<OAuthFlow>;
  };
  getModels: () => readonly Partial<Model<Api>>[];
  streamSimple: (...args: never[]) => unknown;
  classify?: ProviderConfig["classify"];
  generateImages?: ProviderConfig["generateImages"];
}

interface ResolveInput {
  ctx: { env(name: string): Promise<string | undefined>; fileExists(path: string): Promise<boolean> };
  signal: AbortSignal;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** Whether a registration's argument is a provider object (it has `getModels` and `streamSimple`). */
export function isNativeProvider(value: unknown): value is NativeProvider {
  return isRecord(value) && typeof value["id"] === "string" && typeof value["getModels"] === "function" && typeof value["streamSimple"] === "function";
}

const authContext: ResolveInput["ctx"] = {
  env: async (name) => process.env[name],
  fileExists: async (path) => existsSync(path.startsWith("~") ? homedir() + path.slice(1) : path),
};

function stringRecord(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const entries = Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string");
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/** A provider object as a registration config; throws (as pi does) when its models cannot be read. */
export function nativeProviderConfig(provider: NativeProvider): ProviderConfig {
  const models = provider.getModels().flatMap((m): ProviderModelConfig[] => (typeof m.id === "string" ? [{ ...m, id: m.id }] : []));
  const resolve = provider.auth?.apiKey?.resolve;
  const headers = stringRecord(provider.headers);
  const oauth = provider.auth?.oauth;
  // A login's refresh and resolved auth (key, headers, a base URL) are the provider's own, as pi 1.6 uses them.
  const oauthFlow: OAuthFlow | undefined =
    typeof oauth?.refresh === "function" && typeof oauth.toAuth === "function"
      ? { refresh: oauth.refresh.bind(oauth), toAuth: oauth.toAuth.bind(oauth) }
      : undefined;
  return {
    ...(oauthFlow ? { oauthFlow } : {}),
    ...(typeof provider.name === "string" ? { name: provider.name } : {}),
    ...(typeof provider.baseUrl === "string" ? { baseUrl: provider.baseUrl } : {}),
    ...(headers ? { headers } : {}),
    models,
    streamSimple: (...args: never[]) => provider.streamSimple(...args),
    // Its image and classifier models are called through its own code (models with a `type` are kept apart).
    ...(typeof provider.classify === "function" ? { classify: provider.classify.bind(provider) } : {}),
    ...(typeof provider.generateImages === "function" ? { generateImages: provider.generateImages.bind(provider) } : {}),
    ...(resolve
      ? {
          resolveApiKey: async () => {
            const result = await resolve.call(provider.auth?.apiKey, { ctx: authContext, signal: new AbortController().signal });
            return result?.auth?.apiKey;
          },
        }
      : {}),
  };
}
