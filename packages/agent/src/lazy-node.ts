/**
 * node:crypto and node:child_process, loaded on first use. Loading them costs ~1.5 ms and ~1 ms,
 * and a start-up that only answers get_state needs neither: they load with the first dialog id,
 * tool call or shell command instead.
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let crypto: typeof import("node:crypto") | undefined;
let childProcess: typeof import("node:child_process") | undefined;

export function nodeCrypto(): typeof import("node:crypto") {
  return (crypto ??= require("node:crypto") as typeof import("node:crypto"));
}

export function nodeChildProcess(): typeof import("node:child_process") {
  return (childProcess ??= require("node:child_process") as typeof import("node:child_process"));
}
