/**
 * OAuth access tokens that last: a login in auth.json whose token expires within five minutes
 * (pi-ai's window) is refreshed before it is used, under auth.json's lock, and the new tokens are
 * written before the lock is let go, as pi does. Refresh tokens rotate: a refresh whose result
 * were not saved would end the login for pi too, so the refresh runs only inside the store's
 * write. The check is made again under the lock, so when pi or another parley refreshed first,
 * their tokens are used and no second refresh is made.
 *
 * The flows: an extension provider's `oauth` (pi.registerProvider), else pi-ai 1.6's built-in
 * provider of that id (loaded only when a login needs refreshing or its key derived).
 */
import type { CredentialStore, ModelAuth, OAuthAuth, OAuthCredential, OAuthCredentials } from "@earendil-works/pi-ai";
import { importModule } from "../startup/module-loader.js";

/** What a refresh needs of a provider's OAuth: pi-ai 1.6's `OAuthAuth` without the login. */
export type OAuthFlow = Pick<OAuthAuth, "refresh" | "toAuth"> & Partial<Pick<OAuthAuth, "login" | "name">>;

/** An extension provider's `oauth` as pi.registerProvider takes it (the legacy form pi adapts). */
export interface ExtensionOAuthConfig {
  name?: string;
  refreshToken(credentials: OAuthCredentials, signal: AbortSignal): Promise<OAuthCredentials>;
  getApiKey(credentials: OAuthCredentials): string;
  login?: (...args: never[]) => unknown;
}

/** pi's adaptation of an extension's OAuth config (provider-composer): the stored type is "oauth", the key is getApiKey's. */
export function extensionOAuthFlow(config: ExtensionOAuthConfig): OAuthFlow {
  return {
    refresh: async (credential, signal) => ({ ...(await config.refreshToken(credential, signal)), type: "oauth" }),
    toAuth: async (credential) => ({ apiKey: config.getApiKey(credential) }),
  };
}

/** Extension providers' flows, by provider id (the last registration wins, as in pi). */
const extensionFlows = new Map<string, OAuthFlow[]>();

/** Registers an extension provider's OAuth flow; the returned function takes it back. */
export function registerOAuthFlow(providerId: string, flow: OAuthFlow): () => void {
  const held = extensionFlows.get(providerId) ?? [];
  held.push(flow);
  extensionFlows.set(providerId, held);
  return () => {
    const rest = (extensionFlows.get(providerId) ?? []).filter((f) => f !== flow);
    if (rest.length === 0) extensionFlows.delete(providerId);
    else extensionFlows.set(providerId, rest);
  };
}

type ProvidersModule = typeof import("@earendil-works/pi-ai/providers/all");
let builtIns: Promise<Map<string, OAuthAuth>> | undefined;

/** pi-ai 1.6's built-in OAuth flows by provider id. */
export function builtInOAuthFlows(): Promise<Map<string, OAuthAuth>> {
  builtIns ??= importModule<ProvidersModule>("@earendil-works/pi-ai/providers/all").then(
    (mod) => new Map(mod.builtinProviders().flatMap((p) => (p.auth.oauth ? [[p.id, p.auth.oauth] as const] : []))),
  );
  return builtIns;
}

/** pi-ai's refresh window: a token with less than five minutes left is refreshed. */
export const MIN_VALIDITY_MS = 5 * 60_000;
/** A refresh already started ignores cancellation (its result must be saved); this bounds it. */
const REFRESH_TIMEOUT_MS = 15_000;

/** The key a request sends: the API key, else a bearer token from an Authorization header. */
export function keyOfAuth(auth: ModelAuth | undefined): string | undefined {
  if (auth?.apiKey) return auth.apiKey;
  const header = Object.entries(auth?.headers ?? {}).find(([name]) => name.toLowerCase() === "authorization")?.[1];
  return typeof header === "string" ? /^Bearer\s+(.+)$/iu.exec(header)?.[1] : undefined;
}

export class OAuthRefreshError extends Error {}

/**
 * The stored login of `providerId`, refreshed and saved first when it has less than
 * `minValidityMs` (at least pi-ai's five minutes) left; undefined when the provider has no OAuth
 * login (logged out meanwhile included). Throws when the refresh fails: the stored login is
 * left as it was, for a later try or a new sign-in.
 */
export async function freshOAuthCredential(
  store: CredentialStore,
  providerId: string,
  flow: OAuthFlow,
  options: { minValidityMs?: number; signal?: AbortSignal } = {},
): Promise<OAuthCredential | undefined> {
  const window = Math.max(MIN_VALIDITY_MS, options.minValidityMs ?? 0);
  const expiresSoon = (c: OAuthCredential): boolean => Date.now() + window >= c.expires;
  const stored = await store.read(providerId, options.signal ? { signal: options.signal } : {});
  if (stored?.type !== "oauth") return undefined;
  if (!expiresSoon(stored)) return stored;
  const after = await store.modify(
    providerId,
    async (current) => {
      if (current?.type !== "oauth" || !expiresSoon(current)) return undefined;
      try {
        return await flow.refresh(current, AbortSignal.timeout(REFRESH_TIMEOUT_MS));
      } catch (error) {
        throw new OAuthRefreshError(`OAuth refresh failed for ${providerId}: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      }
    },
    options.signal ? { signal: options.signal } : {},
  );
  return after?.type === "oauth" ? after : undefined;
}

/** What a request takes of a login's resolved auth (pi-ai 1.6's `ModelAuth`): the key, headers and a base URL. */
export interface RequestAuth {
  apiKey?: string;
  headers?: Record<string, string>;
  baseUrl?: string;
}

/** A resolved auth as a request sends it: the key (a bearer token counts), the headers left set, the base URL. */
export function requestAuthOf(auth: ModelAuth | undefined): RequestAuth {
  const apiKey = keyOfAuth(auth);
  const headers = Object.fromEntries(
    Object.entries(auth?.headers ?? {}).flatMap(([name, value]) => (typeof value === "string" ? [[name, value] as const] : [])),
  );
  return {
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(auth?.baseUrl ? { baseUrl: auth.baseUrl } : {}),
  };
}

/**
 * The resolved auth of a provider's OAuth login for a request, refreshed first when due; undefined
 * without a login. As pi 1.6, the provider's flow turns the login into the request's auth (its key,
 * and headers or a base URL where the login carries them, e.g. an enterprise host); a built-in
 * provider without such a flow sends the access token.
 */
export async function oauthAuth(store: CredentialStore, providerId: string, options: { minValidityMs?: number } = {}): Promise<RequestAuth | undefined> {
  const own = extensionFlows.get(providerId)?.at(-1);
  const stored = await store.read(providerId);
  if (stored?.type !== "oauth") return undefined;
  const due = Date.now() + Math.max(MIN_VALIDITY_MS, options.minValidityMs ?? 0) >= stored.expires;
  const flow = own ?? (await builtInOAuthFlows()).get(providerId);
  const credential = due && flow ? await freshOAuthCredential(store, providerId, flow, options) : stored;
  if (!credential) return undefined;
  return flow ? requestAuthOf(await flow.toAuth(credential)) : { apiKey: credential.access };
}

/** The request key of a provider's OAuth login (see oauthAuth). */
export async function oauthKey(store: CredentialStore, providerId: string, options: { minValidityMs?: number } = {}): Promise<string | undefined> {
  return (await oauthAuth(store, providerId, options))?.apiKey;
}
