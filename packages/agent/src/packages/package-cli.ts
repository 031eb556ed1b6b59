/**
 * `parley install | remove | uninstall | update | list | config`, as pi 1.6's package commands:
 * the same options, sources, places, settings entries, output lines and exit statuses
 * (package-manager.ts does the work; `update --models` is catalog-update.ts). Differences: `update`
 * without a package target (pi's self-update) and `config` (pi's terminal UI) are refused with status 1, and
 * project trust is decided without asking extensions' `project_trust` handlers.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { PROJECT_DIR_NAME } from "../config/agent-dir.js";
import { hasTrustRequiringResources, storedTrust } from "../config/project-trust.js";
import { errorMessage } from "../error-text.js";
import { askNpmGlobalRoot } from "../resources/npm-global-root.js";
import { installedPath, type PackageScope, parseSource } from "../resources/package-sources.js";
import { expandHome, wirePath } from "../resources/paths.js";
import { NEWEST_PI_VERSION } from "../extensions/compat/pi-versions.js";
import { refreshModelCatalogs } from "./catalog-update.js";
import { isOfflineMode, PackageManager } from "./package-manager.js";
import { entrySource, packagesOf, readSettingsFile } from "./package-settings.js";

export interface PackageCliIo {
  cwd: string;
  agentDir: string;
  home?: string | undefined;
  out: (line: string) => void;
  err: (line: string) => void;
  /** ANSI colours, as pi's chalk gives them on a terminal. */
  color: boolean;
}

type Command = "install" | "remove" | "update" | "list";
type UpdateTarget = { type: "self" } | { type: "all" } | { type: "models" } | { type: "extensions"; source?: string | undefined };

interface Parsed {
  command: Command;
  source?: string | undefined;
  local: boolean;
  trust?: boolean | undefined;
  help: boolean;
  target?: UpdateTarget | undefined;
  skippedNote: boolean;
  problem?: { kind: "option" | "argument" | "value" | "conflict"; text: string } | undefined;
}

const USAGE: Record<Command, string> = {
  install: "parley install <source> [-l] [--approve|--no-approve]",
  remove: "parley remove <source> [-l] [--approve|--no-approve]",
  update: "parley update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]",
  list: "parley list [--approve|--no-approve]",
};
const CONFIG_USAGE = "parley config [-l] [--approve|--no-approve]";

const TRUST_HELP = `  -a, --approve     trust the project's .pi/ for this command
  -na, --no-approve leave the project's .pi/ out for this command`;

const HELP: Record<Command, string> = {
  install: `Usage:
  ${USAGE.install}

Installs a pi package (npm:name[@version], git:host/user/repo[@ref], an https:// or ssh:// git URL,
or a local path) and lists it in settings.json "packages".

Options:
  -l, --local       the project's .pi/settings.json, installed under .pi/
${TRUST_HELP}
`,
  remove: `Usage:
  ${USAGE.remove}

Removes a package: its installed copy and its entry in settings.json "packages".
Also: parley uninstall <source> [-l]

Options:
  -l, --local       the project's .pi/settings.json
${TRUST_HELP}
`,
  update: `Usage:
  ${USAGE.update}

Updates the installed packages, or the model catalogs (parley does not update itself).

Options:
  --extensions            every listed package
  --extension <source>    one package (also: parley update <source>)
  --models                Refresh model catalogs only
  --self, --all           pi's self-update: not available in parley
${TRUST_HELP}
`,
  list: `Usage:
  ${USAGE.list}

Lists the packages of the user's and the project's settings, with where each is installed.

Options:
${TRUST_HELP}
`,
};

function parse(args: readonly string[]): Parsed | undefined {
  const [raw, ...rest] = args;
  const command: Command | undefined =
    raw === "uninstall" ? "remove" : raw === "install" || raw === "remove" || raw === "update" || raw === "list" ? raw : undefined;
  if (!command) return undefined;
  const p: Parsed = { command, local: false, help: false, skippedNote: false };
  const flags = { self: false, extensions: false, models: false, all: false };
  let extension: string | undefined;
  const problem = (kind: NonNullable<Parsed["problem"]>["kind"], text: string): void => {
    p.problem ??= { kind, text };
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? "";
    if (arg === "-h" || arg === "--help") p.help = true;
    else if (arg === "-l" || arg === "--local") {
      if (command === "install" || command === "remove") p.local = true;
      else problem("option", arg);
    } else if (arg === "--self" || arg === "--extensions" || arg === "--models" || arg === "--all" || arg === "--force") {
      if (command !== "update") problem("option", arg);
      else if (arg !== "--force") flags[arg.slice(2) as keyof typeof flags] = true;
    } else if (arg === "-a" || arg === "--approve") p.trust = true;
    else if (arg === "-na" || arg === "--no-approve") p.trust = false;
    else if (arg === "--extension") {
      if (command !== "update") {
        problem("option", arg);
        continue;
      }
      const value = rest[i + 1];
      if (!value || value.startsWith("-")) problem("value", arg);
      else {
        if (extension !== undefined) problem("conflict", "--extension can only be provided once");
        else extension = value;
        i++;
      }
    } else if (arg.startsWith("-")) problem("option", arg);
    else if (p.source === undefined) p.source = arg;
    else problem("argument", arg);
  }
  if (command === "update") p.target = updateTarget(p, flags, extension, (text) => problem("conflict", text));
  return p;
}

/** pi's reading of `update`'s target and which combinations it refuses. */
function updateTarget(
  p: Parsed,
  f: { self: boolean; extensions: boolean; models: boolean; all: boolean },
  extension: string | undefined,
  conflict: (text: string) => void,
): UpdateTarget {
  if (f.all && (f.self || f.extensions || f.models || extension)) conflict("--all cannot be combined with --self, --extensions, --models, or --extension");
  if (f.all && p.source) conflict("--all cannot be combined with a positional source");
  if (f.models) {
    if (f.self || f.extensions || f.all || extension) conflict("--models cannot be combined with --self, --extensions, --all, or --extension");
    if (p.source) conflict("--models cannot be combined with a positional source");
    return { type: "models" };
  }
  if (extension) {
    if (f.self || f.extensions || f.all) conflict("--extension cannot be combined with --self, --extensions, or --all");
    if (p.source) conflict("--extension cannot be combined with a positional source");
    return { type: "extensions", source: extension };
  }
  if (p.source) {
    if (p.source === "self" || p.source === "pi") return f.extensions ? { type: "all" } : { type: "self" };
    if (f.extensions || f.self || f.all) conflict("positional update targets cannot be combined with --self, --extensions, or --all");
    return { type: "extensions", source: p.source };
  }
  if (f.all || (f.self && f.extensions)) return { type: "all" };
  if (f.self) return { type: "self" };
  if (f.extensions) return { type: "extensions" };
  p.skippedNote = true;
  return { type: "self" };
}

const paint =
  (code: string) =>
  (on: boolean, text: string): string =>
    on ? `\u001b[${code}m${text}\u001b[39m` : text;
const red = paint("31");
const green = paint("32");
const yellow = paint("33");
const dim = (on: boolean, text: string): string => (on ? `\u001b[2m${text}\u001b[22m` : text);
const bold = (on: boolean, text: string): string => (on ? `\u001b[1m${text}\u001b[22m` : text);

/** Runs a package command; resolves to the exit status, or undefined when `argv` is not one. */
export async function runPackageCommand(argv: readonly string[], io: PackageCliIo): Promise<number | undefined> {
  if (argv[0] === "config") return runConfigCommand(argv.slice(1), io);
  const p = parse(argv);
  if (!p) return undefined;
  const c = io.color;
  const fail = (message: string, hint: string): number => {
    io.err(red(c, message));
    io.err(dim(c, hint));
    return 1;
  };
  if (p.help) {
    io.out(HELP[p.command]);
    return 0;
  }
  if (p.problem?.kind === "option") return fail(`Unknown option ${p.problem.text} for "${p.command}".`, `Use "parley --help" or "${USAGE[p.command]}".`);
  if (p.problem?.kind === "value") return fail(`Missing value for ${p.problem.text}.`, `Usage: ${USAGE[p.command]}`);
  if (p.problem?.kind === "argument") return fail(`Unexpected argument ${p.problem.text}.`, `Usage: ${USAGE[p.command]}`);
  if (p.problem?.kind === "conflict") return fail(p.problem.text, `Usage: ${USAGE[p.command]}`);
  if ((p.command === "install" || p.command === "remove") && !p.source) return fail(`Missing ${p.command} source.`, `Usage: ${USAGE[p.command]}`);
  if (p.target?.type === "models") {
    const failure = await refreshModelCatalogs(io.agentDir, io.cwd, NEWEST_PI_VERSION);
    if (failure !== undefined) {
      io.err(red(c, `Error: ${failure}`));
      return 1;
    }
    io.out(green(c, "Model catalogs refreshed"));
    return 0;
  }

  const home = io.home ?? homedir();
  const globalFile = join(io.agentDir, "settings.json");
  const global = readSettingsFile(globalFile);
  const globalSettings = "settings" in global ? global.settings : {};
  const trusted = p.command === "update" ? savedTrust(p.trust, io) : decideTrust(p.trust, io, home, globalSettings["defaultProjectTrust"]);
  if (!trusted && p.local) {
    io.err(red(c, "Project is not trusted. Use --approve to modify local package config."));
    return 1;
  }
  if ("error" in global) io.err(yellow(c, `Warning (package command, global settings): ${global.error}`));
  const projectFile = join(io.cwd, PROJECT_DIR_NAME, "settings.json");
  const project = trusted ? readSettingsFile(projectFile) : { settings: {} };
  if ("error" in project) io.err(yellow(c, `Warning (package command, project settings): ${project.error}`));
  const npmCommand = strings(globalSettings["npmCommand"]);
  const updated: string[] = [];
  let warnings = 0;
  const manager = new PackageManager(
    { cwd: io.cwd, agentDir: io.agentDir, home, npmCommand, projectTrusted: trusted },
    {
      start: (message) => io.out(dim(c, message)),
      warning: (message) => {
        warnings++;
        io.out(yellow(c, message));
      },
      updated: (message) => updated.push(message),
    },
  );
  const scope: PackageScope = p.local ? "project" : "user";
  const source = p.source ?? "";
  try {
    switch (p.command) {
      case "install": {
        await manager.install(source, scope);
        // As pi: a settings file that cannot be read is left alone, the package stays installed.
        const warning = await manager.addToSettings(source, scope);
        if (warning) io.err(yellow(c, `Warning (package command, ${scope === "user" ? "global" : "project"} settings): ${warning}`));
        io.out(green(c, `Installed ${source}`));
        return 0;
      }
      case "remove": {
        await manager.remove(source, scope);
        const { removed, warning } = await manager.removeFromSettings(source, scope);
        if (warning) io.err(yellow(c, `Warning (package command, ${scope === "user" ? "global" : "project"} settings): ${warning}`));
        if (!removed) {
          io.err(red(c, `No matching package found for ${source}`));
          return 1;
        }
        io.out(green(c, `Removed ${source}`));
        return 0;
      }
      case "list":
        await list(io, manager, home, npmCommand, packagesOf(globalSettings), "settings" in project ? packagesOf(project.settings) : []);
        return 0;
      case "update":
        return await update(
          io,
          p,
          manager,
          { user: packagesOf(globalSettings), project: "settings" in project ? packagesOf(project.settings) : [] },
          updated,
          () => warnings,
        );
    }
  } catch (error) {
    io.err(red(c, `Error: ${errorMessage(error)}`));
    return 1;
  }
}

async function update(
  io: PackageCliIo,
  p: Parsed,
  manager: PackageManager,
  lists: { user: readonly unknown[]; project: readonly unknown[] },
  updated: readonly string[],
  warnings: () => number,
): Promise<number> {
  const c = io.color;
  const target = p.target ?? { type: "self" };
  if (p.skippedNote) io.out(dim(c, "Extensions are skipped. Run parley update --extensions to update extensions."));
  if (target.type === "extensions" || target.type === "all") {
    const one = target.type === "extensions" ? target.source : undefined;
    await manager.update(one, lists);
    if (isOfflineMode()) io.out(yellow(c, "Skipped package updates (offline mode)"));
    else if (updated.length === 0 && warnings() > 0)
      io.out(yellow(c, one ? `${one} was not updated, see the warnings above` : "No packages were updated, see the warnings above"));
    else if (updated.length === 0) io.out(green(c, one ? `${one} is already up to date` : "Packages are already up to date"));
    else {
      io.out(green(c, `Updated ${updated.length} package${updated.length === 1 ? "" : "s"}:`));
      for (const message of updated) io.out(`  ${message}`);
    }
  }
  if (target.type === "self" || target.type === "all") {
    io.err("error: parley cannot self-update this installation.");
    io.err("Update parley where it was installed from (npm, or git pull and npm ci in its clone).");
    return 1;
  }
  return 0;
}

/** pi's `list`: the user's entries, then the project's, each with where it is installed. */
async function list(
  io: PackageCliIo,
  manager: PackageManager,
  home: string,
  npmCommand: string[] | undefined,
  user: readonly unknown[],
  project: readonly unknown[],
): Promise<void> {
  const c = io.color;
  let globalRoot: string | undefined;
  if (npmCommand && user.some((e) => parseSource(entrySource(e) ?? "").type === "npm")) {
    const answer = await askNpmGlobalRoot(npmCommand, io.cwd);
    if ("root" in answer) globalRoot = answer.root;
  }
  const where = (source: string, scope: PackageScope): string | undefined => {
    const parsed = parseSource(source);
    if (parsed.type === "local") {
      const full = wirePath(expandHome(parsed.path.trim(), home), manager.baseDir(scope), home);
      return existsSync(full) ? full : undefined;
    }
    return installedPath(parsed, scope, { cwd: io.cwd, agentDir: io.agentDir, home, npmGlobalRoot: globalRoot });
  };
  const rows = (entries: readonly unknown[], scope: PackageScope): string[] =>
    entries.flatMap((entry) => {
      const source = entrySource(entry);
      if (source === undefined) return [];
      const path = where(source, scope);
      return [`  ${typeof entry === "string" ? source : `${source} (filtered)`}`, ...(path ? [dim(c, `    ${path}`)] : [])];
    });
  const userRows = rows(user, "user");
  const projectRows = rows(project, "project");
  if (user.length + project.length === 0) {
    io.out(dim(c, "No packages installed."));
    return;
  }
  if (user.length > 0) io.out([bold(c, "User packages:"), ...userRows].join("\n"));
  if (project.length > 0) io.out([...(user.length > 0 ? [""] : []), bold(c, "Project packages:"), ...projectRows].join("\n"));
}

const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === "string") ? v : undefined);

/** pi's trust for `update`: the flag, else only a saved decision. */
function savedTrust(override: boolean | undefined, io: PackageCliIo): boolean {
  return override ?? storedTrust(io.agentDir, io.cwd).decision === true;
}

/**
 * pi's trust for the other commands, without a terminal to ask on: the flag; a project with
 * nothing that needs trust is trusted unless trust.json says otherwise; else trust.json; else
 * `defaultProjectTrust` "always" trusts, anything else does not.
 */
function decideTrust(override: boolean | undefined, io: PackageCliIo, home: string, defaultTrust: unknown): boolean {
  if (override !== undefined) return override;
  const stored = storedTrust(io.agentDir, io.cwd).decision;
  if (!hasTrustRequiringResources(io.cwd, home)) return stored ?? true;
  if (stored !== undefined) return stored;
  return defaultTrust === "always";
}

/**
 * `config`: pi's terminal UI for turning a package's resources on and off. parley has no
 * terminal UI: it checks the options and installs missing packages as pi does before its UI
 * opens, then says how to do it instead (status 1; pi without a terminal waits for ever).
 */
async function runConfigCommand(rest: readonly string[], io: PackageCliIo): Promise<number> {
  const c = io.color;
  if (rest.includes("-h") || rest.includes("--help")) {
    io.out(`Usage:
  ${CONFIG_USAGE}

pi's terminal UI for turning package resources on and off. parley has none: edit the "packages"
entries' filters in settings.json ("extensions", "skills", "prompts", "themes": patterns, with
!pattern, +path and -path), or run pi config.
`);
    return 0;
  }
  let local = false;
  let override: boolean | undefined;
  for (const arg of rest) {
    if (arg === "-l" || arg === "--local") local = true;
    else if (arg === "-a" || arg === "--approve") override = true;
    else if (arg === "-na" || arg === "--no-approve") override = false;
    else if (arg.startsWith("-")) {
      io.err(red(c, `Unknown option ${arg} for "config".`));
      io.err(dim(c, `Use "parley --help" or "${CONFIG_USAGE}".`));
      return 1;
    } else {
      io.err(red(c, `Unexpected argument ${arg}.`));
      io.err(dim(c, `Usage: ${CONFIG_USAGE}`));
      return 1;
    }
  }
  const home = io.home ?? homedir();
  const global = readSettingsFile(join(io.agentDir, "settings.json"));
  const globalSettings = "settings" in global ? global.settings : {};
  const trusted = decideTrust(override, io, home, globalSettings["defaultProjectTrust"]);
  if (local && !trusted) {
    io.err(red(c, "Project is not trusted. Use --approve to modify local resource config."));
    return 1;
  }
  if ("error" in global) io.err(yellow(c, `Warning (config command, global settings): ${global.error}`));
  // As pi before its UI opens: the listed packages that are missing are installed.
  const project = trusted ? readSettingsFile(join(io.cwd, PROJECT_DIR_NAME, "settings.json")) : { settings: {} };
  const npmCommand = strings(globalSettings["npmCommand"]);
  const manager = new PackageManager(
    { cwd: io.cwd, agentDir: io.agentDir, home, npmCommand, projectTrusted: trusted },
    { start: () => {}, warning: () => {}, updated: () => {} },
  );
  let globalRoot: string | undefined;
  if (npmCommand) {
    const answer = await askNpmGlobalRoot(npmCommand, io.cwd);
    if ("root" in answer) globalRoot = answer.root;
  }
  const failures = await manager.installMissing(
    { user: packagesOf(globalSettings), project: "settings" in project ? packagesOf(project.settings) : [] },
    globalRoot,
  );
  for (const f of failures) {
    io.err(
      yellow(
        c,
        `Warning: Extension package "${f.source}": failed to install (${f.message}). Run "parley remove ${f.source}${f.scope === "project" ? " --local" : ""}" to remove it from settings.json.`,
      ),
    );
  }
  io.err(
    red(
      c,
      `parley config: parley has no terminal UI. Edit the filters of a "packages" entry in ${local ? join(io.cwd, PROJECT_DIR_NAME, "settings.json") : join(io.agentDir, "settings.json")} ("extensions", "skills", "prompts": patterns, !pattern, +path, -path), or run pi config.`,
    ),
  );
  return 1;
}
