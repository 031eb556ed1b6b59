import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
// @ts-expect-error -- plain ESM script without type declarations
import { buildJsonSchemaFiles, FAMILIES } from "../scripts/json-schema-files.mjs";
import * as schemas from "../src/schema/index.js";

const STALE = "JSON Schema files are stale: run `npm run generate`";
const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../json-schema");

const generated = buildJsonSchemaFiles(schemas) as Record<string, string>;

describe("json-schema/ files", () => {
  it("are up to date with src/schema", () => {
    const committed = existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith(".json"))
          .sort()
      : [];
    const expected = Object.keys(generated).sort();
    if (JSON.stringify(committed) !== JSON.stringify(expected)) {
      throw new Error(`${STALE} (expected files ${expected.join(", ")}; found ${committed.join(", ") || "none"})`);
    }
    for (const [name, text] of Object.entries(generated)) {
      if (readFileSync(path.join(dir, name), "utf8") !== text) throw new Error(`${STALE} (${name} differs)`);
    }
  });

  it("cover the required record families", () => {
    for (const name of [
      "command.json",
      "response.json",
      "event.json",
      "extension-ui-request.json",
      "extension-ui-response.json",
      "parley-additions.json",
      "inbound.json",
      "outbound.json",
    ]) {
      expect(generated).toHaveProperty([name]);
    }
    expect((FAMILIES as unknown[]).length).toBe(Object.keys(generated).length);
  });

  it.each(Object.keys(generated))("%s is a self-contained draft 2020-12 document", (name) => {
    const text = generated[name]!;
    const document = JSON.parse(text) as Record<string, unknown>;
    expect(document["$schema"]).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(typeof document["title"]).toBe("string");
    expect(typeof document["description"]).toBe("string");
    expect(text).not.toContain('"$id"');
    expect(text).not.toContain('"~');
    // Every reference points into this document's own $defs.
    const defs = (document["$defs"] ?? {}) as Record<string, unknown>;
    for (const match of text.matchAll(/"\$ref": "([^"]*)"/g)) {
      const ref = match[1]!;
      expect(ref.startsWith("#/$defs/"), ref).toBe(true);
      expect(defs, ref).toHaveProperty([ref.slice("#/$defs/".length)]);
    }
  });

  it("are deterministic", () => {
    expect(buildJsonSchemaFiles(schemas)).toEqual(generated);
  });
});
