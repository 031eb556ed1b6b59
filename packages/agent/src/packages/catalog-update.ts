/**
 * `parley update --models`, as pi 1.6's: every configured built-in provider's catalogue asked of
 * pi.dev now (fresh or not: pi's `force`), within 15 s, saved in models-store.json
 * (models/remote-catalog.ts). Success says "Model catalogs refreshed"; a provider that failed is
 * named in one error line ("Could not refresh model catalogs: <provider>: <message>; …").
 */
import { join } from "node:path";
import { loadAuthFile } from "../config/auth-file.js";
import { applyHttpProxySetting, configureHttpDispatcher } from "../config/http-dispatcher.js";
import { adjustBuiltIn, loadModelsFile, providerKey } from "../config/models-file.js";
import { errorMessage } from "../error-text.js";
import { resolveModels } from "../models/resolve.js";
import { catalogUserAgent } from "../models/remote-catalog.js";
import { builtinTypedModels } from "../models/typed-models.js";
import { readSettingsFile } from "./package-settings.js";

/** Resolves to the error line's message, or undefined when every catalogue was refreshed. */
export async function refreshModelCatalogs(agentDir: string, cwd: string, piVersion: string): Promise<string | undefined> {
  const signal = AbortSignal.timeout(15_000);
  try {
    // The request goes as every other does: settings' httpProxy (the user's file), the environment's proxy.
    const global = readSettingsFile(join(agentDir, "settings.json"));
    const httpProxy = "settings" in global ? global.settings["httpProxy"] : undefined;
    applyHttpProxySetting(typeof httpProxy === "string" ? httpProxy : undefined);
    await configureHttpDispatcher({ idleTimeoutMs: undefined });
    const auth = loadAuthFile(agentDir);
    const file = loadModelsFile(agentDir);
    const models = await resolveModels(
      {},
      {
        cwd,
        authKey: auth.apiKey,
        fallbackKey: (provider) => providerKey(file, provider),
        modelsStore: join(agentDir, "models-store.json"),
        // OpenRouter's personalised catalogue: its built-in models of every type, its base URL as models.json sets it.
        typedBuiltIns: builtinTypedModels,
        ...(file.overrides.size > 0 ? { adjustBuiltIn: (model) => adjustBuiltIn(file, model) } : {}),
      },
    );
    const errors = await models.refreshCatalog({ userAgent: catalogUserAgent(piVersion), signal, force: true });
    if (signal.aborted) return "Model catalog refresh timed out.";
    if (errors.size === 0) return undefined;
    return `Could not refresh model catalogs: ${[...errors].map(([provider, error]) => `${provider}: ${error.message}`).join("; ")}`;
  } catch (error) {
    return signal.aborted ? "Model catalog refresh timed out." : errorMessage(error);
  }
}
