#!/usr/bin/env node
// `npm run generate`: writes every generated file in the repository, in dependency order.
//   @parley/protocol  command aliases, standalone command validators, JSON Schema files
//                     (packages/protocol/scripts/generate.mjs, from the command table and schemas)
//   @parley/client    the typed command methods (packages/client/scripts/generate.mjs)
//   the agent         the newest pi's library surface (packages/agent/scripts/newest-surface.mjs)
// Each has a test that fails while its files are stale.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateClient } from "../packages/client/scripts/generate.mjs";
import { generateProtocol } from "../packages/protocol/scripts/generate.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const schemas = await generateProtocol();
await generateClient(schemas);
execFileSync(process.execPath, [path.join(root, "packages/agent/scripts/newest-surface.mjs")], { stdio: "inherit" });
