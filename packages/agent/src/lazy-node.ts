/**
 * node:crypto and node:child_process, loaded on first use. Loading them costs ~1.5 ms and ~1 ms,
 * and a start-up that only answers get_state needs neither: they load with the first dialog id,
 * tool call or shell command instead.
 */
import { createRequire } from "node:module";

// Made on first use too: createRequire itself costs a few tenths of a millisecond.
let require: NodeJS.Require | undefined;
const load = (id: string): unknown => (require ??= createRequire(import.meta.url))(id);
let crypto: typeof import("node:crypto") | undefined;
let childProcess: typeof import("node:child_process") | undefined;

export function nodeCrypto(): typeof import("node:crypto") {
  return (crypto ??= load("node:crypto") as typeof import("node:crypto"));
}

let net: typeof import("node:net") | undefined;

export function nodeNet(): typeof import("node:net") {
  return (net ??= load("node:net") as typeof import("node:net"));
}

export function nodeChildProcess(): typeof import("node:child_process") {
  return (childProcess ??= load("node:child_process") as typeof import("node:child_process"));
}
