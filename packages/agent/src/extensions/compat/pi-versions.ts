/**
 * The pi releases whose extension API parley mirrors, one constant each: `VERSION` from
 * `@mariozechner/pi-coding-agent` is pi 0.73.1's (the package name that release had), from
 * `@earendil-works/pi-coding-agent` the newest pi's whose surface parley follows, so an extension
 * that checks the version sees the release that matches the name it imported.
 */
export const PI_VERSION = "0.73.1";
export const NEWEST_PI_VERSION = "1.6.0";
