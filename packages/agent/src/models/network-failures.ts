/**
 * Why a provider request failed at the network level. Provider SDKs report a failed fetch as
 * "Connection error." (the cause stays on an error object pi-ai drops), so the user cannot tell a
 * DNS failure from a refused port or a bad certificate. Node's fetch (undici) publishes each
 * connect and request failure on diagnostics channels; the latest per host is kept here (a few
 * hosts, bounded) and added to a failed reply's message when that message does not say it.
 */
import { subscribe } from "node:diagnostics_channel";
import type { AssistantMessage } from "@earendil-works/pi-ai";

interface Failure {
  at: number;
  text: string;
}

/** Hosts remembered at once; the oldest goes first (a process talks to few). */
const MAX_HOSTS = 32;
const failures = new Map<string, Failure>();
let watching = false;

/** Starts listening to fetch's failures (once per process). */
export function watchNetworkFailures(): void {
  if (watching) return;
  watching = true;
  subscribe("undici:client:connectError", (message) => {
    const { connectParams, error } = message as { connectParams?: { hostname?: string; port?: string | number; protocol?: string }; error?: unknown };
    const host = connectParams?.hostname;
    if (host) remember(host, describe(error, host, connectParams?.port));
  });
  subscribe("undici:request:error", (message) => {
    const { request, error } = message as { request?: { origin?: string }; error?: unknown };
    const host = hostOf(request?.origin);
    // A connect failure was described already, with its port.
    if (host && !isConnectFailure(error)) remember(host, describe(error, host, undefined));
  });
}

function remember(host: string, text: string): void {
  failures.delete(host);
  failures.set(host, { at: Date.now(), text });
  if (failures.size > MAX_HOSTS) failures.delete(failures.keys().next().value as string);
}

/** What went wrong reaching `baseUrl`'s host since `since` (ms epoch), if fetch reported anything. */
export function networkFailureSince(baseUrl: string | undefined, since: number): string | undefined {
  const host = hostOf(baseUrl);
  const failure = host ? failures.get(host) : undefined;
  return failure && failure.at >= since ? failure.text : undefined;
}

/**
 * A failed reply's message with the network cause added, when the provider's words leave it out
 * ("Connection error.", "fetch failed"). Changes `message` in place (the loop holds it) and returns it.
 */
export function explainNetworkFailure(message: AssistantMessage, baseUrl: string | undefined, since: number): AssistantMessage {
  if (message.stopReason !== "error") return message;
  const cause = networkFailureSince(baseUrl, since);
  const said = message.errorMessage ?? "";
  if (cause && !said.includes(cause)) message.errorMessage = said ? `${said.replace(/\.$/, "")}: ${cause}` : cause;
  return message;
}

function hostOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, "");
  } catch {
    return undefined;
  }
}

function codeOf(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

function isConnectFailure(error: unknown): boolean {
  const code = codeOf(error) ?? "";
  return ["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "UND_ERR_CONNECT_TIMEOUT", "ENETUNREACH", "EHOSTUNREACH"].includes(code) || isTls(error);
}

function isTls(error: unknown): boolean {
  const code = codeOf(error) ?? "";
  const text = error instanceof Error ? error.message : "";
  return /^ERR_TLS|^ERR_SSL|CERT|^DEPTH_ZERO|^SELF_SIGNED/.test(code) || /certificate|\bSSL\b|\bTLS\b/i.test(text);
}

function describe(error: unknown, host: string, port: string | number | undefined): string {
  const code = codeOf(error);
  const text = error instanceof Error ? error.message : String(error);
  const where = port !== undefined && port !== "" ? `${host}:${port}` : host;
  switch (code) {
    case "ENOTFOUND":
      return `DNS lookup of ${host} failed (ENOTFOUND: no such host, or no DNS server reachable)`;
    case "EAI_AGAIN":
      return `DNS lookup of ${host} failed (EAI_AGAIN: the DNS server did not answer; offline?)`;
    case "ECONNREFUSED":
      return `${where} refused the connection (ECONNREFUSED: nothing listens there)`;
    case "ECONNRESET":
      return `${where} reset the connection (ECONNRESET)`;
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return `connecting to ${where} timed out (${code})`;
    case "ENETUNREACH":
    case "EHOSTUNREACH":
      return `${where} is unreachable (${code}: no network route)`;
    default:
      if (isTls(error)) return `TLS with ${where} failed (${code ?? "TLS"}: ${text})`;
      return `${where}: ${code ? `${code}: ` : ""}${text}`;
  }
}
