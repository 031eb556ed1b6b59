/**
 * What `parley auth`'s commands share: their options, and pi-ai 1.6's built-in providers over
 * pi's auth.json (auth-store.ts: pi's lock, whole-file replace).
 */
import { join } from "node:path";
import type { CredentialStore, Models } from "@earendil-works/pi-ai";
import { AuthFileStore } from "../config/auth-store.js";
import { importModule } from "../startup/module-loader.js";

export interface AuthCliOptions {
  agentDir: string;
  out: (line: string) => void;
  err: (line: string) => void;
  /** stdin and stdout are a terminal (login asks questions). */
  interactive: boolean;
}

type ProvidersModule = typeof import("@earendil-works/pi-ai/providers/all");

/** pi-ai 1.6's built-in providers over auth.json. */
export async function authModels(agentDir: string, store?: CredentialStore): Promise<{ models: Models; store: CredentialStore; file: string }> {
  const file = join(agentDir, "auth.json");
  const credentials = store ?? new AuthFileStore(file);
  const { builtinModels } = await importModule<ProvidersModule>("@earendil-works/pi-ai/providers/all");
  return { models: builtinModels({ credentials }), store: credentials, file };
}
