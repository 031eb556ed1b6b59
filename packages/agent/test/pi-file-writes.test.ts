/**
 * The ground rule, checked on the source: every write parley makes to pi's own files (auth.json,
 * mcp-auth.json, mcp.json, models-store.json, settings.json, trust.json) goes through config/pi-file-lock.ts, which
 * takes pi's lock for the file and replaces it atomically. Here every call that writes, renames or
 * removes a file anywhere else in packages/agent/src is found, and each module that makes one must
 * be listed below with what it writes; none of those may name one of pi's files (except where
 * said: the package manager names settings.json's path for package-settings.ts, which writes it
 * through the lock module). A new direct write fails this test until it is classified, and
 * proper-lockfile and write-file-atomic are used nowhere but the lock module (write-file-atomic
 * also by the model's file tools, on the user's own files).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/spawn.js";

const SRC = join(ROOT, "packages/agent/src");
const LOCK_MODULE = "config/pi-file-lock.ts";

/** Modules that write files directly, and what they write (none of them pi's files). */
const DIRECT_WRITERS: Record<string, string> = {
  "output-files.ts": "full tool outputs in parley's own private temp folder",
  "startup/launch-bundle.ts": "parley's own V8 code cache",
  "packages/package-manager.ts": "the package folders (npm and git installs), where and as pi writes them (pi takes no lock there)",
  "session/export-html.ts": "an HTML export the user asked for",
  "session/session.ts": "session files (append only)",
  "session/session-lock.ts": "a session file's own lock (<file>.lock)",
  "transport/outbound-queue.ts": "parley's own spill files of the outbound queue",
  "transport/output-watch.ts": "nothing: a zero-byte write to its own opening of stdout, to learn whether the reader is gone",
  "transport/protocol-stdout.ts": "nothing: stdout and stderr opened again through /proc, so the protocol has a descriptor of its own",
  "transport/socket-stdout.ts": "nothing: stderr (or /dev/null) opened again on fd 1 once a socket stdout has its copy",
  "tools/write.ts": "the model's write tool (the user's files)",
  "tools/edit.ts": "the model's edit tool (the user's files)",
  "tools/replace-file.ts": "the model's file tools (the user's files)",
};

/** Direct writers that name one of pi's files without writing it, and why. */
const NAMES_WITHOUT_WRITING: Record<string, string> = {
  "packages/package-manager.ts": "settings.json's path, for package-settings.ts (which writes through the lock module)",
};

const PI_FILES = /\b(?:mcp-auth|auth|mcp|models-store|settings|trust)\.json\b/;
/** A call that writes, renames or removes a file; `open` only with a flag that writes. */
const WRITE_CALL =
  /\b(?:writeFileSync|writeFile|appendFileSync|appendFile|renameSync|rename|unlinkSync|unlink|rmSync|rm|rmdirSync|copyFileSync|copyFile|cpSync|cp|truncateSync|truncate|createWriteStream|writeFileAtomic|writeFileAtomicSync|symlinkSync|linkSync)\s*\(|\bopen(?:Sync)?\([^)]*(?:"[wa]|O_RDWR|O_WRONLY|O_APPEND|O_CREAT)/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The code without its comments (line and block), so prose about files is not mistaken for a call. */
const code = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");

const files = sources(SRC).map((path) => ({ name: relative(SRC, path), text: code(readFileSync(path, "utf8")) }));

describe("writes to pi's files go through the lock module", () => {
  it("finds the source", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.some((file) => file.name === LOCK_MODULE)).toBe(true);
  });

  it("every module that writes files directly is listed with what it writes", () => {
    const writers = files.filter((file) => file.name !== LOCK_MODULE && WRITE_CALL.test(file.text)).map((file) => file.name);
    expect(writers.sort()).toEqual(Object.keys(DIRECT_WRITERS).sort());
  });

  it("no direct writer names one of pi's files (except as said)", () => {
    const naming = files.filter((file) => file.name in DIRECT_WRITERS && PI_FILES.test(file.text)).map((file) => file.name);
    expect(naming.sort()).toEqual(Object.keys(NAMES_WITHOUT_WRITING).sort());
  });

  it("pi's lock and the atomic replace are used through the lock module only", () => {
    const importing = (library: string) => files.filter((file) => new RegExp(`from "${library}"`).test(file.text)).map((file) => file.name);
    expect(importing("proper-lockfile")).toEqual([LOCK_MODULE]);
    expect(importing("write-file-atomic").sort()).toEqual([LOCK_MODULE, "tools/replace-file.ts"].sort());
  });

  it("the modules that write pi's files do it through the lock module", () => {
    const through = files.filter((file) => /from "(?:\.\.\/config\/|\.\/)pi-file-lock\.js"/.test(file.text)).map((file) => file.name);
    for (const writer of [
      "config/auth-store.ts",
      "config/trust-store.ts",
      "mcp/mcp-auth-store.ts",
      "mcp/mcp-config-file.ts",
      "models/remote-catalog.ts",
      "packages/package-settings.ts",
    ]) {
      expect(through).toContain(writer);
    }
  });
});
