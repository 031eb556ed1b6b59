/**
 * A request with its provider's resolved auth, as pi 1.6 sends every request (the loop's,
 * summaries', and those extensions make through ctx.modelRegistry): the key, the login's headers
 * (under the request's own) and, where an OAuth login names one, its base URL in place of the model's.
 */
import type { Api, Model, SimpleStreamOptions } from "@earendil-works/pi-ai";
import type { RequestAuth } from "../config/oauth-tokens.js";

export function withRequestAuth(
  model: Model<Api>,
  options: SimpleStreamOptions,
  auth: RequestAuth | undefined,
): { model: Model<Api>; options: SimpleStreamOptions } {
  const { apiKey: _key, ...common } = options;
  const headers = auth?.headers || options.headers ? { ...auth?.headers, ...options.headers } : undefined;
  return {
    model: auth?.baseUrl ? { ...model, baseUrl: auth.baseUrl } : model,
    options: { ...common, ...(auth?.apiKey !== undefined ? { apiKey: auth.apiKey } : {}), ...(headers ? { headers } : {}) },
  };
}
