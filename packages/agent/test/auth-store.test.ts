/**
 * AuthFileStore, pi's auth.json as a credential store: writes serialised under pi's lock, whole-file
 * replaces that keep the other entries and the file's mode, a symlinked auth.json written at its
 * target (the link kept), and a file that does not parse never written over.
 */
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AuthFileStore } from "../src/config/auth-store.js";
import { freshOAuthCredential } from "../src/config/oauth-tokens.js";

const folder = (): string => mkdtempSync(join(tmpdir(), "parley-auth-store-"));

describe("AuthFileStore", () => {
  it("creates auth.json with mode 0600 and pi's formatting", async () => {
    const file = join(folder(), "agent", "auth.json");
    const store = new AuthFileStore(file);
    await store.modify("openai", async () => ({ type: "api_key", key: "k" }));
    expect(readFileSync(file, "utf8")).toBe(JSON.stringify({ openai: { type: "api_key", key: "k" } }, null, 2));
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("keeps the other entries and an existing file's mode", async () => {
    const file = join(folder(), "auth.json");
    writeFileSync(file, JSON.stringify({ a: { type: "api_key", key: "1" }, b: { type: "api_key", key: "2" } }));
    chmodSync(file, 0o640);
    const store = new AuthFileStore(file);
    await store.modify("b", async () => ({ type: "api_key", key: "3" }));
    await store.delete("a");
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ b: { type: "api_key", key: "3" } });
    expect(statSync(file).mode & 0o777).toBe(0o640);
  });

  it("serialises concurrent read-modify-writes: none is lost", async () => {
    const file = join(folder(), "auth.json");
    const stores = Array.from({ length: 8 }, () => new AuthFileStore(file));
    await Promise.all(stores.map((store, i) => store.modify(`p${i}`, async () => ({ type: "api_key", key: String(i) }))));
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8"))).sort()).toEqual(["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"]);
  });

  it("writes a symlinked auth.json at its target and keeps the link", async () => {
    const dir = folder();
    const target = join(dir, "real-auth.json");
    writeFileSync(target, "{}");
    const link = join(dir, "auth.json");
    symlinkSync(target, link);
    await new AuthFileStore(link).modify("x", async () => ({ type: "api_key", key: "y" }));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(target);
    expect(JSON.parse(readFileSync(target, "utf8"))).toEqual({ x: { type: "api_key", key: "y" } });
  });

  it("never writes over a file that does not parse", async () => {
    const file = join(folder(), "auth.json");
    writeFileSync(file, "{ not json");
    const store = new AuthFileStore(file);
    await expect(store.modify("x", async () => ({ type: "api_key", key: "y" }))).rejects.toThrow();
    expect(readFileSync(file, "utf8")).toBe("{ not json");
  });

  it("refreshes once when two callers find the token due at the same time, and never refreshes without saving", async () => {
    const file = join(folder(), "auth.json");
    writeFileSync(file, JSON.stringify({ p: { type: "oauth", access: "a0", refresh: "r0", expires: 0 } }));
    let refreshes = 0;
    const flow = {
      refresh: async (c: { refresh: string }) => {
        refreshes++;
        return { type: "oauth" as const, access: `a${refreshes}`, refresh: `${c.refresh}+`, expires: Date.now() + 3_600_000 };
      },
      toAuth: async (c: { access: string }) => ({ apiKey: c.access }),
    };
    const [one, two] = await Promise.all([freshOAuthCredential(new AuthFileStore(file), "p", flow), freshOAuthCredential(new AuthFileStore(file), "p", flow)]);
    expect(refreshes).toBe(1);
    expect(one?.access).toBe("a1");
    expect(two?.access).toBe("a1");
    expect(JSON.parse(readFileSync(file, "utf8")).p).toMatchObject({ access: "a1", refresh: "r0+" });
  });
});
