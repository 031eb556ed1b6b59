/**
 * The `packages` list of one settings file (the agent directory's `settings.json`, or the
 * project's `.pi/settings.json`), read and written as pi's settings manager does it:
 *   - written under pi's lock (`settings.json.lock`), replaced atomically (config/pi-file-lock.ts);
 *   - the file's other keys stay, in their order; pi's migrations of older keys apply (pi writes
 *     the file back migrated), and the text is two-space JSON without a final newline, as pi's;
 *   - a file that cannot be read as JSON is never written (pi keeps it and warns).
 * Entries are kept as written: a string, or an object whose `source` names the package and whose
 * other keys (filters, `autoload`) stay untouched.
 */
import { existsSync, readFileSync } from "node:fs";
import { replacePiFile, SETTINGS_LOCK, withPiFileLock } from "../config/pi-file-lock.js";
import { errorMessage } from "../error-text.js";

/** An entry as written; one pi cannot use stays in the file as it is. */
export type RawPackage = unknown;
type Raw = Record<string, unknown>;

const isObject = (v: unknown): v is Raw => v !== null && typeof v === "object" && !Array.isArray(v);

/** The source an entry names (a string, or an object's `source`); undefined for one pi cannot use. */
export function entrySource(entry: RawPackage): string | undefined {
  if (typeof entry === "string") return entry;
  return isObject(entry) && typeof entry["source"] === "string" ? entry["source"] : undefined;
}

/** The file's settings, migrated as pi migrates them on reading; `{}` when absent; an error when it is not JSON. */
export function readSettingsFile(file: string): { settings: Raw } | { error: string } {
  if (!existsSync(file)) return { settings: {} };
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
    // pi spreads whatever JSON it finds; a file that is not an object gives no settings.
    return { settings: migrateAsPi(isObject(value) ? value : {}) };
  } catch (error) {
    return { error: `${file}: ${errorMessage(error)}` };
  }
}

/** The file's `packages` entries, as written. */
export function packagesOf(settings: Raw): RawPackage[] {
  const list = settings["packages"];
  return Array.isArray(list) ? list : [];
}

/**
 * pi's migrations, in pi's order and with its key moves (an old key deleted, the new one added
 * last), so that a file parley writes reads byte for byte as pi would have written it.
 */
function migrateAsPi(settings: Raw): Raw {
  if ("queueMode" in settings && !("steeringMode" in settings)) {
    settings["steeringMode"] = settings["queueMode"];
    delete settings["queueMode"];
  }
  if (!("transport" in settings) && typeof settings["websockets"] === "boolean") {
    settings["transport"] = settings["websockets"] ? "websocket" : "sse";
    delete settings["websockets"];
  }
  const skills = settings["skills"];
  if (isObject(skills)) {
    if (skills["enableSkillCommands"] !== undefined && settings["enableSkillCommands"] === undefined)
      settings["enableSkillCommands"] = skills["enableSkillCommands"];
    const dirs = skills["customDirectories"];
    if (Array.isArray(dirs) && dirs.length > 0) settings["skills"] = dirs;
    else delete settings["skills"];
  }
  const retry = settings["retry"];
  if (isObject(retry)) {
    const provider = isObject(retry["provider"]) ? retry["provider"] : undefined;
    if (typeof retry["maxDelayMs"] === "number" && (provider?.["maxRetryDelayMs"] === undefined || provider["maxRetryDelayMs"] === null)) {
      retry["provider"] = { ...provider, maxRetryDelayMs: retry["maxDelayMs"] };
    }
    delete retry["maxDelayMs"];
  }
  return settings;
}

/**
 * Sets the file's `packages` to what `change` makes of the current list (read under the lock);
 * `change` returns undefined to leave the file alone. Resolves to a warning when the file could
 * not be used, else undefined.
 */
export async function writePackages(file: string, change: (current: RawPackage[]) => RawPackage[] | undefined): Promise<string | undefined> {
  try {
    return await withPiFileLock(file, SETTINGS_LOCK, async (held) => {
      const read = readSettingsFile(file);
      if ("error" in read) return `${read.error}; the file was left as it is`;
      const next = change(packagesOf(read.settings));
      if (next === undefined) return undefined;
      held();
      await replacePiFile(file, JSON.stringify({ ...read.settings, packages: next }, null, 2));
      return undefined;
    });
  } catch (error) {
    return `${file}: ${errorMessage(error)}; not changed`;
  }
}
