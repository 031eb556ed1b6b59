/**
 * The live catalogue in process (models/remote-catalog.ts, catalog.ts), against a plain HTTP
 * stand-in for pi.dev on 127.0.0.1 (the base URL is a parameter here; the CLI tests reach it
 * through a proxy): what counts as newer than pi-ai's data, the merge over built-in models, the
 * freshness window, and a models-store.json that does not parse never written over.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Api, KnownProvider, Model } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Catalog } from "../src/models/catalog.js";
import { type PiAiResolution, loadPiAiCatalog, loadPiAiForResolution } from "../src/models/pi-ai.js";
import { RemoteCatalog } from "../src/models/remote-catalog.js";

const GENERATED_AT = Date.parse("2026-01-01T00:00:00Z");
const NEWER = "Wed, 01 Jan 2031 00:00:00 GMT";
const dirs: string[] = [];
let baseUrl = "";
let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => void res.writeHead(404).end();
const seen: string[] = [];
const server = createServer((req, res) => {
  seen.push(req.url ?? "");
  handler(req, res);
});
let pi: PiAiResolution;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pi = await loadPiAiForResolution();
  await loadPiAiCatalog();
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function storeFile(content?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-remote-catalog-"));
  dirs.push(dir);
  const file = join(dir, "models-store.json");
  if (content !== undefined) writeFileSync(file, content);
  return file;
}

function anthropicModel(id: string): Model<Api> {
  const base = pi.getModels("anthropic" as KnownProvider)[0] as Model<Api>;
  return { ...base, id, name: id };
}

const request = { userAgent: "pi/test" };

describe("the live catalogue", () => {
  it("overlays a saved catalogue only when it is newer than pi-ai's data; a newer model of the same id replaces the built-in one", () => {
    const builtIn = pi.getModels("anthropic" as KnownProvider)[0] as Model<Api>;
    const replaced = { ...builtIn, name: "Replaced" };
    const entry = (lastModified: number) => ({ anthropic: { models: [replaced, anthropicModel("claude-new")], lastModified, checkedAt: Date.now() } });
    const older = new RemoteCatalog(storeFile(JSON.stringify(entry(GENERATED_AT - 1))), GENERATED_AT);
    older.restoreSync(["anthropic"]);
    expect(older.chatModels("anthropic")).toEqual([]);

    const newer = new RemoteCatalog(storeFile(JSON.stringify(entry(GENERATED_AT + 1))), GENERATED_AT);
    newer.restoreSync(["anthropic"]);
    const catalog = new Catalog(pi, [], () => true, undefined, newer);
    const ids = catalog.modelsOf("anthropic").map((m) => m.id);
    expect(ids.filter((id) => id === builtIn.id)).toHaveLength(1);
    expect(ids.at(-1)).toBe("claude-new");
    expect(catalog.find("anthropic", builtIn.id)?.name).toBe("Replaced");
  });

  it("asks once within the freshness window; a forced refresh asks again", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "last-modified": NEWER, etag: '"e1"' });
      res.end(JSON.stringify([anthropicModel("claude-fetched")]));
    };
    seen.length = 0;
    const remote = new RemoteCatalog(storeFile(), GENERATED_AT);
    expect(await remote.refresh(["anthropic"], ["anthropic"], { ...request, baseUrl })).toEqual(new Map());
    expect(remote.chatModels("anthropic").map((m) => m.id)).toEqual(["claude-fetched"]);
    await remote.refresh(["anthropic"], ["anthropic"], { ...request, baseUrl });
    expect(seen).toHaveLength(1);
    await remote.refresh(["anthropic"], ["anthropic"], { ...request, baseUrl, force: true });
    expect(seen).toHaveLength(2);
    const saved = JSON.parse(readFileSync(remote.file, "utf8")) as Record<string, { etag?: string; lastModified?: number }>;
    expect(saved["anthropic"]).toMatchObject({ etag: '"e1"', lastModified: Date.parse(NEWER) });
  });

  it("never writes over a models-store.json that does not parse: the refresh fails for the provider", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "last-modified": NEWER });
      res.end("[]");
    };
    const file = storeFile("{ not json");
    const remote = new RemoteCatalog(file, GENERATED_AT);
    remote.restoreSync(["anthropic"]);
    const errors = await remote.refresh(["anthropic"], ["anthropic"], { ...request, baseUrl });
    expect([...errors.keys()]).toEqual(["anthropic"]);
    expect(readFileSync(file, "utf8")).toBe("{ not json");
  });
});
