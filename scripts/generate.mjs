#!/usr/bin/env node
// `npm run generate`: writes every generated file in the repository, in dependency order.
//   @parley/protocol  command aliases, standalone command validators, JSON Schema files
//                     (packages/protocol/scripts/generate.mjs, from the command table and schemas)
//   @parley/client    the typed command methods (packages/client/scripts/generate.mjs)
// Each has a test that fails while its files are stale.
import { generateClient } from "../packages/client/scripts/generate.mjs";
import { generateProtocol } from "../packages/protocol/scripts/generate.mjs";

const schemas = await generateProtocol();
await generateClient(schemas);
