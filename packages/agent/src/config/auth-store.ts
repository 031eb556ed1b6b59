/**
 * pi's `auth.json` as a pi-ai 1.6 `CredentialStore`: every read and write holds the lock pi
 * holds (proper-lockfile's `<auth.json's real path>.lock` folder, 30 s stale, retried with pi's
 * backoff for up to 30 s), so a pi and a parley never interleave a read-modify-write. A write
 * replaces the file whole (pi-file-lock.ts: write-file-atomic's temp file, fsync, rename), keeping its
 * mode (0600 when parley creates it, as pi does), so no reader ever sees half a file. A file that
 * does not parse is never written over: the operation fails and the file stays as it was.
 */
import type { AuthOperationOptions, Credential, CredentialInfo, CredentialStore } from "@earendil-works/pi-ai";
import { resolveAuthKey } from "./config-value.js";
import { type PiJsonChange, withPiJsonFile } from "./pi-file-lock.js";

type AuthData = Record<string, Credential>;

function parse(content: string): AuthData {
  const text = content.charCodeAt(0) === 0xfeff ? content.slice(1) : content;
  if (text.trim() === "") return {};
  const data: unknown = JSON.parse(text);
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw new Error("Invalid auth.json: expected an object");
  return data as AuthData;
}

export class AuthFileStore implements CredentialStore {
  constructor(readonly file: string) {}

  /** Runs `fn` on the file's data under pi's lock; what it returns as `next` replaces the file. */
  async #withLock<T>(fn: (data: AuthData) => Promise<PiJsonChange<AuthData, T>>, options?: AuthOperationOptions): Promise<T> {
    return withPiJsonFile(this.file, parse, fn, { signal: options?.signal });
  }

  async read(providerId: string, options?: AuthOperationOptions): Promise<Credential | undefined> {
    const credential = await this.#withLock(async (data) => ({ result: data[providerId] }), options);
    if (credential?.type !== "api_key" || credential.key === undefined) return credential;
    const key = resolveAuthKey(credential.key, credential.env);
    return key === undefined ? { ...credential, key: undefined } : { ...credential, key };
  }

  async list(options?: AuthOperationOptions): Promise<readonly CredentialInfo[]> {
    return this.#withLock(async (data) => ({ result: Object.entries(data).map(([providerId, c]) => ({ providerId, type: c.type })) }), options);
  }

  async modify(
    providerId: string,
    fn: (current: Credential | undefined) => Promise<Credential | undefined>,
    options?: AuthOperationOptions,
  ): Promise<Credential | undefined> {
    return this.#withLock(async (data) => {
      const next = await fn(data[providerId]);
      return next === undefined ? { result: data[providerId] } : { result: next, next: { ...data, [providerId]: next } };
    }, options);
  }

  async delete(providerId: string, options?: AuthOperationOptions): Promise<void> {
    await this.#withLock(async (data) => {
      const { [providerId]: _removed, ...rest } = data;
      return { result: undefined, next: rest };
    }, options);
  }
}
