/**
 * The packages install anywhere: `npm pack` @parley/protocol, @parley/client, @parley/web (the page) and @parley/agent,
 * install the tarballs into empty projects outside the repository, offline, type-check and run
 * docs/sdk.md's embedding program (examples/embed.ts) against the installed `parley` binary.
 *
 * Offline: npm 11 resolves versions from full registry documents, which the npm cache may not
 * hold, so each project gets a lockfile built from the repository's (same versions, same
 * integrity) and `npm ci --offline` takes every tarball from the cache the repository's install
 * filled.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { deadline } from "../../agent/test/helpers/deadline.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const MINUTE = deadline(60_000);
const PACKAGES = { "@parley/protocol": "protocol", "@parley/client": "client", "@parley/web": "web", "@parley/agent": "agent" } as const;
type PackageName = keyof typeof PACKAGES;

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  bin?: Record<string, string> | string;
  [key: string]: unknown;
}

const repoLock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
const manifest = (name: PackageName): LockEntry & { name: string; version: string } =>
  JSON.parse(readFileSync(join(ROOT, "packages", PACKAGES[name], "package.json"), "utf8")) as LockEntry & { name: string; version: string };

/** Where Node (and npm's tree) finds `dep` for the package at lock key `from`. */
function locate(from: string, dep: string): string | undefined {
  for (let at = from; ; ) {
    const key = at === "" ? `node_modules/${dep}` : `${at}/node_modules/${dep}`;
    const entry = repoLock.packages[key];
    if (entry !== undefined && entry["link"] !== true) return key;
    if (at === "") return undefined;
    const cut = at.lastIndexOf("/node_modules/");
    at = cut === -1 ? "" : at.slice(0, cut);
  }
}

/** A lockfile for a project depending on the given tarballs: the repository's entries for their dependency tree. */
function lockFor(tarballs: Map<PackageName, string>): object {
  const packages: Record<string, LockEntry> = {};
  const root: Record<string, string> = {};
  const queue: Array<{ from: string; deps: Record<string, string>; optional: Set<string> }> = [];
  for (const [name, file] of tarballs) {
    const pkg = manifest(name);
    root[name] = `file:${file}`;
    packages[`node_modules/${name}`] = {
      version: pkg.version,
      resolved: `file:${file}`,
      ...(pkg.dependencies && { dependencies: pkg.dependencies }),
      ...(pkg.bin && { bin: pkg.bin }),
    };
    const deps = { ...pkg.dependencies };
    for (const dep of Object.keys(tarballs)) delete deps[dep];
    queue.push({ from: `packages/${PACKAGES[name]}`, deps, optional: new Set() });
  }
  while (queue.length > 0) {
    const { from, deps, optional } = queue.shift() as (typeof queue)[number];
    for (const dep of Object.keys(deps)) {
      if (tarballs.has(dep as PackageName)) continue;
      const key = locate(from, dep);
      if (key === undefined) {
        if (optional.has(dep)) continue;
        throw new Error(`${dep} (needed by ${from || "the project"}) is not in the repository's lockfile`);
      }
      if (packages[key] !== undefined) continue;
      const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = repoLock.packages[key] as LockEntry;
      // Without `resolved` npm would ask the registry where the tarball is; the cache holds it under this URL.
      const name = key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
      entry.resolved ??= `https://registry.npmjs.org/${name}/-/${name.split("/").at(-1)}-${entry.version}.tgz`;
      packages[key] = entry;
      const optionalDeps = new Set([
        ...Object.keys(entry.optionalDependencies ?? {}),
        ...Object.entries(entry.peerDependenciesMeta ?? {})
          .filter(([, meta]) => meta.optional)
          .map(([n]) => n),
      ]);
      queue.push({ from: key, deps: { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies }, optional: optionalDeps });
    }
  }
  return {
    name: "embed-app",
    version: "1.0.0",
    lockfileVersion: 3,
    requires: true,
    packages: { "": { name: "embed-app", version: "1.0.0", dependencies: root }, ...packages },
  };
}

/** An empty project outside the repository with these tarballs installed offline. */
function installProject(tarballs: Map<PackageName, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-embed-app-"));
  const dependencies = Object.fromEntries([...tarballs].map(([name, file]) => [name, `file:${file}`]));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "embed-app", version: "1.0.0", private: true, type: "module", dependencies }, null, 2));
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify(lockFor(tarballs), null, 2));
  execFileSync("npm", ["ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir, stdio: "pipe", timeout: 5 * MINUTE });
  return dir;
}

const tarballs = new Map<PackageName, string>();

beforeAll(() => {
  const out = mkdtempSync(join(tmpdir(), "parley-tarballs-"));
  for (const name of Object.keys(PACKAGES) as PackageName[]) {
    const file = execFileSync("npm", ["pack", "--silent", "--pack-destination", out], {
      cwd: join(ROOT, "packages", PACKAGES[name]),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 2 * MINUTE,
    })
      .trim()
      .split("\n")
      .at(-1) as string;
    tarballs.set(name, join(out, file));
  }
}, 5 * MINUTE);

describe("packed packages", () => {
  it("the client installs without the agent's LLM stack", { timeout: 6 * MINUTE }, () => {
    const dir = installProject(new Map([...tarballs].filter(([name]) => name !== "@parley/agent")));
    expect(existsSync(join(dir, "node_modules/@parley/client/dist/index.js"))).toBe(true);
    const tree = execFileSync("npm", ["ls", "--all", "--offline"], { cwd: dir, encoding: "utf8" });
    expect(tree).toContain("@parley/client@0.1.0");
    for (const llm of ["@mariozechner/pi-ai", "@mariozechner/pi-agent-core", "@anthropic-ai/sdk", "openai"]) {
      expect(tree).not.toContain(`${llm}@`);
      expect(existsSync(join(dir, "node_modules", llm))).toBe(false);
    }
  });

  it("protocol, client and agent install offline in a project outside the repository; docs/sdk.md's program type-checks and runs", {
    timeout: 8 * MINUTE,
  }, () => {
    const dir = installProject(tarballs);
    expect(existsSync(join(dir, "node_modules/.bin/parley"))).toBe(true);
    copyFileSync(join(ROOT, "examples/embed.ts"), join(dir, "embed.ts"));
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          skipLibCheck: true,
          outDir: "out",
          // @types/node from the repository: the project itself installs nothing but parley.
          typeRoots: [join(ROOT, "node_modules/@types")],
          types: ["node"],
        },
        files: ["embed.ts"],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], { cwd: dir, encoding: "utf8", timeout: 3 * MINUTE });
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.status).toBe(0);

    mkdirSync(join(dir, "home"));
    const run = spawnSync(process.execPath, [join(dir, "out/embed.js")], {
      cwd: dir,
      encoding: "utf8",
      timeout: 3 * MINUTE,
      env: { ...process.env, HOME: join(dir, "home") },
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    // The offline model read the project's package.json and listed the folder, through the installed binary.
    expect(run.stdout).toContain("[read]");
    expect(run.stdout).toContain("embed-app@1.0.0");
    expect(run.stdout).toMatch(/\d+ messages; then: The working directory has/);

    // The installed agent's ./rpc-entry export (the newest pi's), resolved by name from the
    // project: run with node, RPC mode without --mode.
    const entry = execFileSync(process.execPath, ["-p", 'require.resolve("@parley/agent/rpc-entry")'], { cwd: dir, encoding: "utf8" }).trim();
    expect(entry).toBe(join(realpathSync(dir), "node_modules/@parley/agent/bin/rpc-entry.js"));
    const rpc = spawnSync(process.execPath, [entry, "--no-session"], {
      cwd: dir,
      encoding: "utf8",
      input: '{"type":"get_state","id":"s"}\n',
      timeout: 3 * MINUTE,
      env: { ...process.env, HOME: join(dir, "home") },
    });
    expect(rpc.status).toBe(0);
    expect(JSON.parse(rpc.stdout.split("\n")[0] as string)).toMatchObject({ id: "s", type: "response", command: "get_state", success: true });
  });
});
