/**
 * `update` of an npm package against pi 1.6.0, with a registry of our own: a small HTTP server on
 * 127.0.0.1 serving one package's metadata and tarballs (made with `npm pack`), which npm is
 * pointed at (`npm_config_registry`). An unversioned `npm:` source is installed at the registry's
 * latest; once a newer version is published, `update` installs it and says so, as pi does; asked
 * again, it is up to date. Nothing else is reached: npm's update check and audit are off.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";
import { type CliResult as Result, runSide, SIDES, type Side, type SideWorld, sideWorld } from "./helpers/newest-pi.js";

const COMMAND_MS = deadline(10 * AGENT_CEILING_MS);
const TEST_MS = deadline(30 * AGENT_CEILING_MS);
const NAME = "parley-fixture-reg";

let root: string;
let server: Server;
let registry: string;
/** The published versions: version → the tarball's bytes. */
const published = new Map<string, Buffer>();
const worlds = {} as Record<Side, SideWorld>;

/** Packs the package at this version into a tarball and publishes it to the registry. */
function publish(version: string): void {
  const src = join(root, `src-${version}`);
  mkdirSync(join(src, "extensions"), { recursive: true });
  writeFileSync(join(src, "package.json"), JSON.stringify({ name: NAME, version }));
  writeFileSync(
    join(src, "extensions", "index.ts"),
    `export default function (pi: any) { pi.registerCommand("fixture-reg", { description: "v${version}", handler: async () => {} }); }\n`,
  );
  const packed = spawnSync("npm", ["pack", "--pack-destination", root], { cwd: src, encoding: "utf8", env: { ...process.env, npm_config_offline: "true" } });
  if (packed.status !== 0) throw new Error(`npm pack: ${packed.stderr}`);
  published.set(version, readFileSync(join(root, `${NAME}-${version}.tgz`)));
}

/** The package's metadata as a registry serves it (what `npm install` and `npm view` read). */
function packument(): object {
  const versions: Record<string, object> = {};
  for (const [version, bytes] of published) {
    versions[version] = {
      name: NAME,
      version,
      dist: {
        tarball: `${registry}/${NAME}/-/${NAME}-${version}.tgz`,
        shasum: createHash("sha1").update(bytes).digest("hex"),
        integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
      },
    };
  }
  const latest = [...published.keys()].at(-1) ?? "";
  return { name: NAME, "dist-tags": { latest }, versions };
}

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "parley-pkgreg-")));
  server = createServer((req, res) => {
    const url = req.url ?? "";
    const tarball = new RegExp(`^/${NAME}/-/${NAME}-(.+)\\.tgz$`).exec(url);
    const bytes = tarball ? published.get(tarball[1] ?? "") : undefined;
    if (bytes) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(bytes);
    } else if (url === `/${NAME}`) {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache, max-age=0" });
      res.end(JSON.stringify(packument()));
    } else {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"not found"}');
    }
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  publish("1.0.0");
  for (const side of SIDES) {
    const base = join(root, side);
    worlds[side] = sideWorld(base, {
      npm_config_registry: `${registry}/`,
      npm_config_prefer_online: "true",
      npm_config_update_notifier: "false",
      npm_config_cache: join(base, "home", ".npm"),
    });
  }
});

afterAll(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  if (root) rmSync(root, { recursive: true, force: true });
});

const run = (side: Side, args: string[]): Promise<Result> => runSide(side, args, { cwd: worlds[side].cwd, env: worlds[side].env, ms: COMMAND_MS });

/** Both agents, one after the other (one registry, one npm cache each). */
async function both(args: string[]): Promise<Record<Side, Result>> {
  return { pi: await run("pi", args), parley: await run("parley", args) };
}

const alike = (side: Side, text: string): string =>
  text
    .split(worlds[side].base)
    .join("<world>")
    .replace(/ in \d+(\.\d+)?m?s$/gm, " in <time>");

function expectSame(r: Record<Side, Result>): void {
  expect({ code: r.parley.code, stdout: alike("parley", r.parley.stdout), stderr: alike("parley", r.parley.stderr) }).toEqual({
    code: r.pi.code,
    stdout: alike("pi", r.pi.stdout),
    stderr: alike("pi", r.pi.stderr),
  });
}

const installedVersion = (side: Side): string =>
  (JSON.parse(readFileSync(join(worlds[side].agentDir, "npm", "node_modules", NAME, "package.json"), "utf8")) as { version: string }).version;

describe("npm packages updated from a registry, parley against pi 1.6.0", () => {
  it(
    "an unversioned npm: source is installed at the latest version, updated when a newer one is published, and then up to date",
    async () => {
      expectSame(await both(["install", `npm:${NAME}`]));
      expect(SIDES.map(installedVersion)).toEqual(["1.0.0", "1.0.0"]);
      expectSame(await both(["update", "--extensions"]));
      publish("1.1.0");
      const r = await both(["update", "--extensions"]);
      expectSame(r);
      expect(r.parley.stdout).toContain(`Updated 1 package:\n  npm:${NAME} 1.0.0 -> 1.1.0\n`);
      expect(SIDES.map(installedVersion)).toEqual(["1.1.0", "1.1.0"]);
      const again = await both(["update", `npm:${NAME}`]);
      expectSame(again);
      expect(again.parley.stdout).toContain(`npm:${NAME} is already up to date`);
      // A pinned version is never updated (nothing is asked of the registry).
      expectSame(await both(["install", `npm:${NAME}@1.0.0`]));
      expectSame(await both(["update", "--extensions"]));
      expect(SIDES.map(installedVersion)).toEqual(["1.0.0", "1.0.0"]);
    },
    TEST_MS,
  );
});
