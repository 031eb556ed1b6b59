/**
 * Files parley writes so the model can use output it was not shown in full: a long bash output
 * (`parley-bash-*.log`), an MCP result's whole text or binary resource (`parley-mcp-*`). pi puts
 * them in the temp folder, readable by the user only; parley puts them in one folder of its own
 * there (`parley-XXXXXX`, 0700), each created exclusively with mode 0600, and removes the folder
 * when it ends: at exit, or by the child watchdog after a SIGKILL. `PARLEY_KEEP_OUTPUT_FILES=1`
 * keeps it (the paths the model was given stay readable after parley ends).
 */
import { createWriteStream, mkdtempSync, rmSync, type WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watchdogRemoveAtEnd } from "./child-watchdog.js";
import { nodeCrypto } from "./lazy-node.js";

export const KEEP_OUTPUT_VARIABLE = "PARLEY_KEEP_OUTPUT_FILES";
const FILE_MODE = 0o600;

let folder: string | undefined;

function keep(): boolean {
  const value = process.env[KEEP_OUTPUT_VARIABLE];
  return value !== undefined && value !== "" && value !== "0" && value.toLowerCase() !== "false";
}

/** The folder, made on first use (mkdtemp: 0700, a name nobody else holds). */
function outputFolder(): string {
  if (folder !== undefined) return folder;
  const made = mkdtempSync(join(tmpdir(), "parley-"));
  folder = made;
  if (!keep()) {
    process.on("exit", () => rmSync(made, { recursive: true, force: true }));
    watchdogRemoveAtEnd(made);
  }
  return made;
}

/** A new path in the folder: `<prefix>-<random hex><extension>` (extension with its dot). */
function newPath(prefix: string, extension: string): string {
  return join(outputFolder(), `${prefix}-${nodeCrypto().randomBytes(8).toString("hex")}${extension}`);
}

/** Writes `data` to a new output file; returns its path. */
export async function writeOutputFile(prefix: string, extension: string, data: string | Uint8Array): Promise<string> {
  const path = newPath(prefix, extension);
  // node:fs/promises on first use: it also loads Node's readline internals (~1.3 MiB), which a
  // start-up that writes no output file never needs.
  await process.getBuiltinModule("node:fs/promises").writeFile(path, data, { mode: FILE_MODE, flag: "wx" });
  return path;
}

/** A new output file for streamed output. */
export function createOutputFileStream(prefix: string, extension: string): { path: string; stream: WriteStream } {
  const path = newPath(prefix, extension);
  return { path, stream: createWriteStream(path, { mode: FILE_MODE, flags: "wx" }) };
}

/** The folder when one was made (tests). */
export function outputFolderPath(): string | undefined {
  return folder;
}
