/**
 * How provider requests reach the network, as pi sets it up: settings.json `httpProxy` (global file
 * only) becomes HTTP_PROXY / HTTPS_PROXY unless the environment has them; with a proxy in the
 * environment (NO_PROXY honoured), or an `httpIdleTimeoutMs` in settings, fetch goes through
 * undici's EnvHttpProxyAgent with that idle timeout for headers and body. Without either, Node's
 * own fetch is used as it is (its idle timeouts are pi's default, 5 minutes), and undici is not
 * loaded: a start-up without a proxy does not pay for it.
 */
import { importModule } from "../startup/module-loader.js";

const PROXY_VARIABLES = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];

/** pi's rule: the setting fills in, the environment wins. */
export function applyHttpProxySetting(httpProxy: string | undefined, env: NodeJS.ProcessEnv = process.env): void {
  if (!httpProxy) return;
  env["HTTP_PROXY"] ??= httpProxy;
  env["HTTPS_PROXY"] ??= httpProxy;
}

export function proxyInEnvironment(env: NodeJS.ProcessEnv = process.env): boolean {
  return PROXY_VARIABLES.some((name) => (env[name] ?? "").trim() !== "");
}

/** Installs the dispatcher when a proxy or an idle timeout asks for one; resolves once fetch uses it. */
export async function configureHttpDispatcher(options: { idleTimeoutMs: number | undefined; env?: NodeJS.ProcessEnv }): Promise<boolean> {
  const env = options.env ?? process.env;
  if (!proxyInEnvironment(env) && options.idleTimeoutMs === undefined) return false;
  const undici = await importModule<typeof import("undici")>("undici");
  // undici takes 0 as "no timeout", which is what pi's "disabled" (0) means.
  const timeout = options.idleTimeoutMs ?? 300_000;
  undici.setGlobalDispatcher(new undici.EnvHttpProxyAgent({ headersTimeout: timeout, bodyTimeout: timeout }));
  return true;
}
