/**
 * What an OAuth login changes about its provider's models, as pi applies it: pi-ai's OAuth
 * provider may adjust them from the login (GitHub Copilot's base URL comes from the token or the
 * enterprise domain). Loaded only when auth.json holds an OAuth login.
 */
import type { Api, Model } from "@mariozechner/pi-ai";
import { importModule } from "../startup/module-loader.js";
import type { OAuthLogin } from "./auth-file.js";

type PiAiOAuth = typeof import("@mariozechner/pi-ai/oauth");

export async function oauthModelAdjuster(logins: ReadonlyMap<string, OAuthLogin>): Promise<(model: Model<Api>) => Model<Api>> {
  const oauth = await importModule<PiAiOAuth>("@mariozechner/pi-ai/oauth");
  return (model) => {
    const login = logins.get(model.provider);
    const provider = login ? oauth.getOAuthProvider(model.provider) : undefined;
    if (!login || !provider?.modifyModels) return model;
    return provider.modifyModels([model], login)[0] ?? model;
  };
}
