/**
 * `import("@parley/client")` loads no schema library: the client's runtime imports are the
 * protocol's light subpaths (JSONL framing, the UI reducer, the UI method lists); the schema types
 * are `import type` only. Checked in a fresh process (this one has loaded TypeBox already), on the
 * built output (`npm test` builds first), with a resolve hook that records every URL the module
 * loader resolves.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const clientDist = join(import.meta.dirname, "../dist/index.js");
const protocolDist = join(import.meta.dirname, "../../protocol/dist/index.js");
const hooks = join(import.meta.dirname, "fixtures/record-resolved-urls.mjs");

/** The URLs (deduplicated, in first-resolved order) that importing `file` resolves in a fresh node. */
function resolvedUrls(file: string): string[] {
  if (!existsSync(file)) throw new Error(`${file} is missing: build first (npx tsc -b)`);
  const dir = mkdtempSync(join(tmpdir(), "parley-client-import-"));
  const logFile = join(dir, "resolved.txt");
  const script = `
    import { register } from "node:module";
    register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { logFile: ${JSON.stringify(logFile)} } });
    await import(${JSON.stringify(pathToFileURL(file).href)});
  `;
  try {
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return [
      ...new Set(
        readFileSync(logFile, "utf8")
          .split("\n")
          .filter((line) => line !== ""),
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const isTypebox = (url: string) => url.includes("/node_modules/typebox/");

describe("importing @parley/client", () => {
  it("does not load TypeBox or any protocol schema module", () => {
    const urls = resolvedUrls(clientDist);
    expect(urls).toContain(pathToFileURL(clientDist).href);
    expect(urls.filter(isTypebox)).toEqual([]);
    // Only the protocol's light modules, none of its schemas, validators or root index.
    const protocol = urls.filter((url) => url.includes("/packages/protocol/")).map((url) => url.replace(/^.*\/packages\/protocol\//, ""));
    expect(protocol.sort()).toEqual([
      "dist/command-envelope.js",
      "dist/dialog-answers.js",
      "dist/disposable.js",
      "dist/json-line.js",
      "dist/jsonl.js",
      "dist/ui-methods.js",
      "dist/ui-state.js",
    ]);
  });

  it("(control) the hook does see TypeBox when the protocol's root is imported", () => {
    const urls = resolvedUrls(protocolDist);
    expect(urls.some(isTypebox)).toBe(true);
    expect(urls.some((url) => url.endsWith("/packages/protocol/dist/schema/extension-ui.js"))).toBe(true);
  });
});
