/**
 * OAuth for MCP servers as pi 1.6 does it, with pi-mcp's own OAuth support: which servers sign in
 * (HTTP servers without an `Authorization` header or `auth.provider`), their client settings from
 * `oauth` in mcp.json, the auth provider a connection sends tokens with (refreshing them under
 * the store's refresh lock, never starting a browser flow), and the sign-in of `mcp login`
 * (PKCE against a loopback callback, or a redirect URL the user pastes).
 *
 * parley identifies itself as pi does when built under another name: it registers a client
 * named "parley" (dynamic client registration) unless `oauth` says otherwise; pi's Client ID
 * Metadata Documents are kept for `clientRegistration: "cimd"` and for refreshing tokens a pi
 * signed in with them, so either program can use the other's sign-in.
 */
import {
  completeMcpSignIn,
  createMcpAuthProvider as createAuthProvider,
  listenForLoopbackSignIn,
  type McpAuthProvider,
  type McpClientMetadataDocuments,
  type McpOAuthServerStore,
  type McpOAuthSettings,
  type OAuthCallbackPage,
  type OAuthChallenge,
  startMcpSignIn,
  waitForLoopbackSignIn,
} from "@earendil-works/pi-mcp/oauth";
import type { McpServerEntry } from "./config.js";
import { resolveMcpValue } from "./config-values.js";

const CLIENT_NAME = "parley";

/** pi's check: its documents list `/callback` on localhost or 127.0.0.1, on any port. */
function listsRedirectUrl(callbackUrl: string | undefined): boolean {
  if (callbackUrl === undefined) return true;
  const url = new URL(callbackUrl);
  return url.hostname !== "[::1]" && url.pathname === "/callback";
}

const PI_DOCUMENTS: McpClientMetadataDocuments = { baseUrl: "https://pi.dev/oauth", listsRedirectUrl };
const CLIENT = { clientName: CLIENT_NAME, clientMetadataDocuments: PI_DOCUMENTS };

/** `auto` registers a client (pi's rule for a build that is not named pi). */
function clientSettings(settings: McpOAuthSettings): McpOAuthSettings {
  return (settings.clientRegistration ?? "auto") === "auto" ? { ...settings, clientRegistration: "dcr" } : settings;
}

/** The server's URL when it signs in with OAuth: an HTTP server without `auth` or an `Authorization` header. */
export function oauthUrlOf(entry: McpServerEntry): string | undefined {
  const { config } = entry;
  if (config.kind !== "http" || config.auth) return undefined;
  return Object.keys(config.headers ?? {}).some((header) => header.toLowerCase() === "authorization") ? undefined : config.url;
}

/** `oauth` of mcp.json as pi-mcp's settings; the client secret is resolved here (`${VAR}`, `!command`). */
export function oauthSettingsOf(entry: McpServerEntry): McpOAuthSettings {
  const oauth = entry.config.kind === "http" ? entry.config.oauth : undefined;
  if (!oauth) return {};
  const settings: McpOAuthSettings = {};
  if (oauth.clientId !== undefined) settings.clientId = oauth.clientId;
  if (oauth.clientSecret !== undefined) settings.clientSecret = resolveMcpValue(oauth.clientSecret, `MCP server "${entry.name}" oauth.clientSecret`);
  if (oauth.callbackPort !== undefined) settings.callbackPort = oauth.callbackPort;
  if (oauth.callbackUrl !== undefined) settings.callbackUrl = oauth.callbackUrl;
  if (oauth.scope !== undefined) settings.scope = oauth.scope;
  if (oauth.clientName !== undefined) settings.clientName = oauth.clientName;
  if (oauth.clientRegistration !== undefined) settings.clientRegistration = oauth.clientRegistration;
  if (oauth.authServerMetadataUrl !== undefined) settings.authServerMetadataUrl = new URL(oauth.authServerMetadataUrl);
  return settings;
}

/**
 * The auth provider of a connection: the stored access token, refreshed when it is about to expire
 * or after a 401 (saved before use); `McpOAuthAuthorizationRequiredError` when the user must sign in.
 */
export function createMcpOAuthProvider(options: {
  serverUrl: string;
  store: McpOAuthServerStore;
  settings: () => McpOAuthSettings;
  onChallenge: (challenge: OAuthChallenge) => void;
}): McpAuthProvider {
  return createAuthProvider({ ...options, ...CLIENT, settings: () => clientSettings(options.settings()) });
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

/** The page the browser shows after the redirect. */
function callbackPage(page: OAuthCallbackPage): string {
  const title = page.ok ? "Signed in" : "Sign-in failed";
  const message = page.ok ? "Signed in to the MCP server. You may now close this page." : page.message;
  const details = !page.ok && page.details ? `<pre>${escapeHtml(page.details)}</pre>` : "";
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${escapeHtml(message)}</p>${details}</body></html>`;
}

export interface McpSignInPrompt {
  /** The authorization URL, for the user's browser. */
  showAuthorizationUrl(url: URL): void;
  /** A redirect URL the user pastes (the browser cannot reach this machine); undefined gives up that way. */
  promptForRedirectUrl(signal: AbortSignal): Promise<string | undefined>;
}

/**
 * Signs in to a server: the stored refresh token when it still works, else the browser step on a
 * loopback callback (or a pasted redirect URL), the tokens saved to `store`. Aborting `signal`
 * ends it with `McpSignInCancelledError`.
 */
export async function signInMcpServer(options: {
  serverUrl: string;
  store: McpOAuthServerStore;
  settings: McpOAuthSettings;
  challenge: OAuthChallenge | undefined;
  prompt: McpSignInPrompt;
  signal: AbortSignal;
}): Promise<void> {
  const { serverUrl, store, challenge, prompt, signal } = options;
  const settings = clientSettings(options.settings);
  const { callback, redirectUrl } = await listenForLoopbackSignIn({
    serverUrl,
    store,
    settings,
    clientMetadataDocuments: PI_DOCUMENTS,
    renderPage: callbackPage,
  });
  try {
    const signIn = { serverUrl, store, settings, redirectUrl, signal, ...(challenge ? { challenge } : {}), ...CLIENT };
    const authorization = await startMcpSignIn(signIn);
    if (authorization.kind === "authorized") return;
    prompt.showAuthorizationUrl(new URL(authorization.authorizationUrl));
    const response = await waitForLoopbackSignIn({
      callback,
      authorization,
      promptForRedirectUrl: (promptSignal) => prompt.promptForRedirectUrl(promptSignal),
      signal,
    });
    await completeMcpSignIn({ ...signIn, authorization, response });
  } finally {
    await callback.close();
  }
}
