/**
 * pi's install-path helpers (`getPackageDir`, `getDocsPath`, …) for extensions, answered for
 * parley's own package: an extension that reads them at load time must get a path, not a throw.
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PROJECT_DIR_NAME } from "../../config/agent-dir.js";

/** The name of the project folder pi reads (pi's CONFIG_DIR_NAME). */
export const CONFIG_DIR_NAME = PROJECT_DIR_NAME;

const here = dirname(fileURLToPath(import.meta.url));

/** parley's agent package folder: the nearest folder above this module with a package.json (PI_PACKAGE_DIR wins, as in pi). */
export function getPackageDir(): string {
  const fromEnv = process.env.PI_PACKAGE_DIR;
  if (fromEnv) return resolve(fromEnv);
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) return here;
  }
}

export function getReadmePath(): string {
  return resolve(getPackageDir(), "README.md");
}

export function getDocsPath(): string {
  return resolve(getPackageDir(), "docs");
}

export function getExamplesPath(): string {
  return resolve(getPackageDir(), "examples");
}

/** A read call's line range as pi's tool rendering shows it (`:5`, `:5-14`); "" when malformed. */
export function formatReadLineRange(offset: unknown, limit: unknown): string {
  if (offset == null && limit == null) return "";
  const start = offset == null ? 1 : lineNumber(offset);
  if (start === undefined) return "";
  if (limit == null) return `:${start}`;
  const count = lineNumber(limit);
  if (count === undefined) return "";
  const end = start + count - 1;
  return `:${start}${end ? `-${end}` : ""}`;
}

function lineNumber(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) ? n : undefined;
}
