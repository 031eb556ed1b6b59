/**
 * Skills and prompt templates, in pi's order: those of `-e` packages, then what settings and
 * discovery give (resource-resolver.ts: the project's settings lists and `.pi/` folders,
 * `.agents/skills` up to the git root, the user's settings lists and agent folder,
 * `~/.agents/skills`, installed pi packages), then the paths given with --skill /
 * --prompt-template (loaded even with --no-skills / --no-prompt-templates, which turn off the
 * rest). The first of two with the same name wins; the other is reported.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import type { SourceInfo } from "../extensions/types.js";
import { isDirectory, isFile } from "./fs-entries.js";
import { userPath } from "./paths.js";
import { findTemplateFiles, readTemplate, type PromptTemplate } from "./prompt-templates.js";
import { resolveResources, type ResolvedResource, type ResolvedResources, type ResourceLists } from "./resource-resolver.js";
import { findSkillFiles, readSkill, type ResourceWarning, type Skill } from "./skills.js";
import { explicitSource } from "./source-info.js";

export { expandPromptTemplate, parseCommandArgs, substituteArgs, type PromptTemplate } from "./prompt-templates.js";
export { expandSkillCommand, formatSkillsForPrompt, type ResourceWarning, type Skill, type SkillReader } from "./skills.js";
export { piAgentDir } from "./paths.js";
export { resolveCliSources, resolveResources, type ResolvedResource, type ResolvedResources, type ResourceLists } from "./resource-resolver.js";

export interface ResourceOptions {
  cwd: string;
  /** pi's agent folder (PI_CODING_AGENT_DIR, default ~/.pi/agent). */
  agentDir: string;
  /** --skill paths (files or folders), in order. */
  skillPaths?: readonly string[];
  /** --prompt-template paths (files or folders), in order. */
  promptTemplatePaths?: readonly string[];
  /** The settings files' resource lists (`project` undefined: an untrusted project). */
  settings?: { user: ResourceLists; project: ResourceLists | undefined };
  /** false: the project's settings and `.pi/`, `.agents/skills` folders are not used (an untrusted project, as in pi). */
  projectTrusted?: boolean;
  /** What settings and discovery give, when the caller has it already (else resolved here). */
  resolved?: ResolvedResources;
  /** What `-e` folders (pi packages given on the command line) hold. */
  cli?: ResolvedResources;
  /** --no-skills: only -e packages' skills and --skill paths. */
  noSkills?: boolean;
  /** --no-prompt-templates: only -e packages' templates and --prompt-template paths. */
  noPromptTemplates?: boolean;
  /** For `~` and `~/.agents/skills`; the user's home by default. */
  home?: string;
}

export interface Resources {
  skills: Skill[];
  prompts: PromptTemplate[];
  warnings: ResourceWarning[];
}

export const NO_RESOURCES: Resources = { skills: [], prompts: [], warnings: [] };

export function loadResources(options: ResourceOptions): Resources {
  const home = options.home ?? homedir();
  const cwd = resolve(options.cwd);
  const warnings: ResourceWarning[] = [];
  const trusted = options.projectTrusted !== false;
  const needed = !(options.noSkills && options.noPromptTemplates);
  const resolved =
    options.resolved ??
    (needed
      ? resolveResources({
          cwd,
          agentDir: options.agentDir,
          home,
          user: options.settings?.user ?? {},
          project: trusted ? (options.settings?.project ?? {}) : undefined,
        })
      : undefined);
  const enabled = (list: readonly ResolvedResource[] | undefined): ResolvedResource[] => (list ?? []).filter((r) => r.enabled);
  const skills = [...enabled(options.cli?.skills), ...(options.noSkills ? [] : enabled(resolved?.skills))];
  const prompts = [...enabled(options.cli?.prompts), ...(options.noPromptTemplates ? [] : enabled(resolved?.prompts))];
  return {
    skills: loadSkills(skills, options.skillPaths ?? [], cwd, home, warnings),
    prompts: loadPrompts(prompts, options.promptTemplatePaths ?? [], cwd, home, warnings),
    warnings,
  };
}

/** Keeps the first of each name, and each file once. */
function firstByName<T extends { name: string; filePath: string }>(items: Iterable<T>, kind: string, warnings: ResourceWarning[]): T[] {
  const byName = new Map<string, T>();
  const files = new Set<string>();
  for (const item of items) {
    if (files.has(item.filePath)) continue;
    const winner = byName.get(item.name);
    if (winner) {
      warnings.push({ path: item.filePath, message: `${kind} name "${item.name}" is taken by ${winner.filePath}; this one is skipped` });
      continue;
    }
    byName.set(item.name, item);
    files.add(item.filePath);
  }
  return [...byName.values()];
}

function loadSkills(found: readonly ResolvedResource[], explicit: readonly string[], cwd: string, home: string, warnings: ResourceWarning[]): Skill[] {
  const skills: Skill[] = [];
  const add = (files: string[], source: (file: string) => SourceInfo): void => {
    for (const file of files) {
      const skill = readSkill(file, source(file), warnings);
      if (skill) skills.push(skill);
    }
  };
  for (const r of found) add(isDirectory(r.path) ? findSkillFiles(r.path, "pi") : [r.path], (f) => ({ ...r.sourceInfo, path: f }));
  for (const raw of explicit) {
    const path = userPath(raw, cwd, home);
    if (isDirectory(path)) add(findSkillFiles(path, "pi"), (f) => explicitSource(f, path));
    else if (isFile(path) && path.endsWith(".md")) add([path], (f) => explicitSource(f));
    else warnings.push({ path, message: existsSync(path) ? "skill path is not a markdown file" : "skill path does not exist" });
  }
  return firstByName(skills, "skill", warnings);
}

function loadPrompts(
  found: readonly ResolvedResource[],
  explicit: readonly string[],
  cwd: string,
  home: string,
  warnings: ResourceWarning[],
): PromptTemplate[] {
  const prompts: PromptTemplate[] = [];
  const add = (files: string[], source: (file: string) => SourceInfo): void => {
    for (const file of files) {
      const template = readTemplate(file, source(file));
      if (template) prompts.push(template);
    }
  };
  for (const r of found) if (r.path.endsWith(".md")) add([r.path], () => r.sourceInfo);
  for (const raw of explicit) {
    const path = userPath(raw, cwd, home);
    if (isDirectory(path)) add(findTemplateFiles(path), (f) => explicitSource(f, path));
    else if (isFile(path) && path.endsWith(".md")) add([path], (f) => explicitSource(f));
  }
  return firstByName(prompts, "prompt template", warnings);
}

/**
 * Adds the skill and prompt paths extensions name in `resources_discover`, as pi does: loaded
 * like explicit paths, after what is already there (which keeps its names).
 */
export function extendResources(base: Resources, extra: { cwd: string; skillPaths: readonly string[]; promptTemplatePaths: readonly string[] }): Resources {
  const added = loadResources({
    cwd: extra.cwd,
    agentDir: "",
    noSkills: true,
    noPromptTemplates: true,
    skillPaths: extra.skillPaths,
    promptTemplatePaths: extra.promptTemplatePaths,
  });
  const warnings = [...base.warnings, ...added.warnings];
  return {
    skills: firstByName([...base.skills, ...added.skills], "skill", warnings),
    prompts: firstByName([...base.prompts, ...added.prompts], "prompt template", warnings),
    warnings,
  };
}
