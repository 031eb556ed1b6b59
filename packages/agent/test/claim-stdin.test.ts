/**
 * claimStdin() in a process of its own (it takes the process's fd 0): what it reads, and what
 * process.stdin becomes.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { AGENT_CEILING_MS, deadline } from "./helpers/deadline.js";

const MODULE = pathToFileURL(join(import.meta.dirname, "../dist/transport/claim-stdin.js")).href;

// Claims twice, listens on process.stdin as an extension might, reads everything through the
// claim, and prints what each side saw.
const SCRIPT = `
import { claimStdin } from ${JSON.stringify(MODULE)};
const claim = claimStdin();
const again = claimStdin();
let standIn = 0;
process.stdin.on("data", (chunk) => (standIn += chunk.length));
process.stdin.resume();
const chunks = [];
const done = () => console.log(JSON.stringify({ same: claim === again, fd: process.stdin.fd, standIn, text: Buffer.concat(chunks).toString() }));
claim.stream.on("data", (chunk) => chunks.push(Buffer.from(chunk)));
claim.stream.once("end", () => setImmediate(done));
claim.stream.resume();
`;

const INPUT = "line one\nline two ✓\n".repeat(5000);

/** Runs the script with fd 0 set up by `shell` (a pipe, a file), or a socket pair (Node's own "pipe") without one. */
function run(shell: string | undefined): Record<string, unknown> {
  const dir = mkdtempSync(join(tmpdir(), "parley-claim-"));
  writeFileSync(join(dir, "in"), INPUT);
  writeFileSync(join(dir, "claim.mjs"), SCRIPT);
  const options = { cwd: dir, encoding: "utf8", env: { ...process.env, NODE: process.execPath }, timeout: deadline(AGENT_CEILING_MS) } as const;
  const result = shell === undefined ? spawnSync(process.execPath, ["claim.mjs"], { ...options, input: INPUT }) : spawnSync("sh", ["-c", shell], options);
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe("claimStdin", () => {
  it("a pipe: every byte; a second claim returns the first; process.stdin sees nothing", () => {
    expect(run(`cat in | "$NODE" claim.mjs`)).toEqual({ same: true, fd: 0, standIn: 0, text: INPUT });
  });

  it("a socket (what Node's spawn gives a child): every byte; process.stdin sees nothing", () => {
    expect(run(undefined)).toEqual({ same: true, fd: 0, standIn: 0, text: INPUT });
  });

  it("a regular file: every byte; process.stdin sees nothing either", () => {
    expect(run(`"$NODE" claim.mjs < in`)).toEqual({ same: true, fd: 0, standIn: 0, text: INPUT });
  });
});
