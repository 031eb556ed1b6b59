/**
 * What `@earendil-works/pi-coding-agent` (the newest pi's package name) resolves to for
 * extensions: the same module as `@mariozechner/pi-coding-agent` (pi-coding-agent.ts), one
 * instance of everything, except `VERSION`, which is the newest pi's whose surface parley follows.
 */
import { NEWEST_PI_VERSION } from "./pi-versions.js";

export * from "./pi-coding-agent.js";
/** The newest pi's version (a local export takes precedence over the one `export *` brings). */
export const VERSION = NEWEST_PI_VERSION;
