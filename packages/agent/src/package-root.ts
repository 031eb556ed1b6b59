/** parley's package root: the folder above dist/ (compiled or bundled) or src/ (under a TS loader). */
import { dirname, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const packageRoot = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (dirname(dir) !== dir && !["dist", "src"].includes(dir.split(sep).at(-1) ?? "")) dir = dirname(dir);
  return dirname(dir);
})();
