/**
 * Each package as people install it: what `npm pack` would put in its tarball (npm's own answer,
 * `npm pack --dry-run --json`) and the manifest fields a registry page and a bundler read. Needs
 * the compiled `dist/` (`npx tsc -b`), as the other unit tests that read it do.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const PACKAGES = ["protocol", "client", "web", "agent"] as const;

interface Manifest {
  name: string;
  license?: string;
  engines?: { node?: string };
  exports?: Record<string, unknown>;
  publishConfig?: { access?: string };
  repository?: unknown;
}

interface PackResult {
  files: { path: string }[];
}

function packedFiles(dir: string): string[] {
  // npm prints notices on stderr; the JSON answer is stdout alone.
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const [result] = JSON.parse(out) as PackResult[];
  return (result?.files ?? []).map((file) => file.path);
}

describe.each(PACKAGES)("@parley/%s as packed", (name) => {
  const dir = join(root, "packages", name);
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;

  it("ships its README and LICENSE, and nothing of the repository's sources, tests or build state", () => {
    const files = packedFiles(dir);
    expect(files).toEqual(expect.arrayContaining(["README.md", "LICENSE", "package.json"]));
    expect(files.filter((file) => /^(src|test|scripts|screenshots)\//.test(file) || /\.(map|tsbuildinfo)$/.test(file))).toEqual([]);
    // No file points at a source map the tarball does not hold.
    expect(files.filter((file) => /\.(c|m)?js$|\.d\.ts$/.test(file) && readFileSync(join(dir, file), "utf8").includes("sourceMappingURL="))).toEqual([]);
  });

  it("is public, exports its package.json, and says its licence and Node version", () => {
    expect(manifest.publishConfig?.access).toBe("public");
    expect(manifest.exports?.["./package.json"]).toBe("./package.json");
    expect(manifest.license).toBe("MIT");
    expect(manifest.engines?.node).toBe(">=22.19.0");
  });
});
