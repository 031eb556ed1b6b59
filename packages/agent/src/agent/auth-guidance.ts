/**
 * The text of a prompt refused for lack of credentials. It starts as pi words it (clients and pi's
 * own tests match on "No API key found for <provider>." and the "/login" line that follows), then
 * says what works in parley, which has no interactive /login.
 */
const PI_DOCS = "https://github.com/earendil-works/pi/blob/main/packages/coding-agent/docs";

export function noApiKeyMessage(provider: string | undefined): string {
  const who = provider === undefined || provider === "" ? "the selected model" : provider;
  return [
    `No API key found for ${who}.`,
    "",
    "Use /login to log into a provider via OAuth or API key. See:",
    `  ${PI_DOCS}/providers.md`,
    `  ${PI_DOCS}/models.md`,
    "",
    "In parley: set the provider's environment variable, add the key to auth.json in the agent directory, or pass --api-key; or pick another model (get_available_models).",
  ].join("\n");
}
