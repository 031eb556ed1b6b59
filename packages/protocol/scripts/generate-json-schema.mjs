#!/usr/bin/env node
// Kept for old instructions: writes every generated file of the package (see generate.mjs).
// `npm run generate` at the repository root writes these and the client's methods.
import { generateProtocol } from "./generate.mjs";

await generateProtocol();
