/**
 * pi's command line, so a client can swap the binary. Unknown `--flags` are kept for a second
 * pass: extensions may register them (pi.registerFlag), and only then can they be judged.
 */
import type { ThinkingLevel } from "@parley/protocol";
import { THINKING_LEVELS } from "@parley/protocol/constants";

export interface CliOptions {
  mode: "rpc";
  noSession: boolean;
  sessionDir?: string;
  session?: string;
  continue: boolean;
  extensions: string[];
  noExtensions: boolean;
  provider?: string;
  model?: string;
  apiKey?: string;
  thinking?: ThinkingLevel;
  systemPrompt?: string;
  name?: string;
  modelScript?: string;
  maxLineBytes?: number;
  // ---- dropin-ext: skills, prompt templates, themes (minimal acceptance; dropin-cli owns flags) ----
  skillPaths?: string[];
  promptTemplatePaths?: string[];
  noSkills?: boolean;
  noPromptTemplates?: boolean;
  // ---- end dropin-ext ----
  help: boolean;
  version: boolean;
  /** `--name[=value]` tokens no built-in flag claimed, with the bare token after each, if any. */
  unknown: { name: string; inlineValue?: string; next?: string }[];
  argv: string[];
}

export class UsageError extends Error {
  override readonly name = "UsageError";
}

type ValueFlag = "sessionDir" | "session" | "provider" | "model" | "apiKey" | "systemPrompt" | "name" | "modelScript";
const VALUE_FLAGS: Record<string, ValueFlag> = {
  "--session-dir": "sessionDir",
  "--session": "session",
  "--provider": "provider",
  "--model": "model",
  "--api-key": "apiKey",
  "--system-prompt": "systemPrompt",
  "--name": "name",
  "--model-script": "modelScript",
};

export function parseArgs(argv: string[]): CliOptions {
  const options: CliOptions = {
    mode: "rpc",
    noSession: false,
    continue: false,
    extensions: [],
    noExtensions: false,
    help: false,
    version: false,
    unknown: [],
    argv,
  };
  let modeGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    const flag = eq > 0 ? token.slice(0, eq) : token;
    const inline = eq > 0 ? token.slice(eq + 1) : undefined;
    const value = (): string => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith("-") && next !== "-")) throw new UsageError(`${flag} needs a value`);
      i++;
      return next;
    };
    switch (flag) {
      case "--mode": {
        const mode = value();
        if (mode !== "rpc") throw new UsageError(`--mode ${mode} is not supported: parley runs in --mode rpc only`);
        modeGiven = true;
        break;
      }
      case "--no-session":
        options.noSession = true;
        break;
      case "-c":
      case "--continue":
        options.continue = true;
        break;
      case "-e":
      case "--extension":
        options.extensions.push(value());
        break;
      case "--no-extensions":
        options.noExtensions = true;
        break;
      case "--thinking": {
        const level = value();
        if (!(THINKING_LEVELS as readonly string[]).includes(level)) {
          throw new UsageError(`--thinking ${level} is not a thinking level; use one of ${THINKING_LEVELS.join(", ")}`);
        }
        options.thinking = level as ThinkingLevel;
        break;
      }
      case "--max-line-bytes": {
        const raw = value();
        const n = Number(raw);
        if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--max-line-bytes ${raw} must be a positive whole number of bytes`);
        options.maxLineBytes = n;
        break;
      }
      // ---- dropin-ext: pi's skill/template flags; theme flags concern pi's terminal UI only ----
      case "--skill":
        (options.skillPaths ??= []).push(value());
        break;
      case "--prompt-template":
        (options.promptTemplatePaths ??= []).push(value());
        break;
      case "-ns":
      case "--no-skills":
        options.noSkills = true;
        break;
      case "-np":
      case "--no-prompt-templates":
        options.noPromptTemplates = true;
        break;
      case "--no-themes":
        break;
      case "--theme":
        value();
        break;
      // ---- end dropin-ext ----
      case "-h":
      case "--help":
        options.help = true;
        break;
      case "-v":
      case "--version":
        options.version = true;
        break;
      default: {
        const key = VALUE_FLAGS[flag];
        if (key) {
          options[key] = value();
        } else if (flag.startsWith("--") && flag.length > 2) {
          // Whether the next token is this flag's value depends on the type an extension gives it.
          const next = inline === undefined ? argv[i + 1] : undefined;
          const takesNext = next !== undefined && !next.startsWith("-");
          if (takesNext) i++;
          options.unknown.push({
            name: flag.slice(2),
            ...(inline !== undefined ? { inlineValue: inline } : {}),
            ...(takesNext ? { next } : {}),
          });
        } else {
          throw new UsageError(`Unexpected argument ${JSON.stringify(token)}; parley takes only options (see --help)`);
        }
      }
    }
  }
  if (options.session !== undefined && options.continue) throw new UsageError("--session and --continue (-c) cannot be combined");
  if (options.noSession && (options.session !== undefined || options.continue)) {
    throw new UsageError("--no-session cannot be combined with --session or --continue");
  }
  if (!modeGiven && !options.help && !options.version) {
    throw new UsageError("parley needs --mode rpc (the only mode it has)");
  }
  return options;
}

/**
 * Second pass, once extensions have registered their flags: every unknown token must be one of
 * them. A boolean flag takes no value unless written `--flag=value`; a string flag takes the next token.
 */
export function resolveExtensionFlags(
  options: CliOptions,
  registered: ReadonlyMap<string, { type: "boolean" | "string" }>,
): Map<string, string | boolean> {
  const values = new Map<string, string | boolean>();
  for (const { name, inlineValue, next } of options.unknown) {
    const flag = registered.get(name);
    if (!flag) {
      const known = [...registered.keys()].map((n) => `--${n}`);
      throw new UsageError(`Unknown option --${name}${known.length ? ` (extension flags: ${known.join(", ")})` : ""}; see --help`);
    }
    if (flag.type === "boolean") {
      if (next !== undefined) throw new UsageError(`Unexpected argument ${JSON.stringify(next)}: --${name} is a boolean flag (write --${name}=false to turn it off)`);
      values.set(name, inlineValue === undefined ? true : inlineValue !== "false");
      continue;
    }
    const value = inlineValue ?? next;
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    values.set(name, value);
  }
  return values;
}

export const USAGE = `Usage: parley --mode rpc [options]

Speaks pi's RPC protocol (JSON lines) on stdin/stdout. Diagnostics go to stderr.

Options:
  --mode rpc               the protocol mode (required; rpc is the only mode)
  -e, --extension FILE     load an extension (.ts or .js); may repeat
  --no-extensions          skip ~/.parley/extensions and ./.parley/extensions (-e still loads)
  --no-session             keep the session in memory only
  --session-dir DIR        where session files live
  --session PATH           open this session file
  -c, --continue           continue the most recent session
  --provider NAME          model provider
  --model PATTERN          model id or provider/id
  --api-key KEY            API key for the provider
  --thinking LEVEL         ${THINKING_LEVELS.join("|")}
  --system-prompt TEXT     replace the system prompt
  --name NAME              name the session
  --model-script FILE      offline scripted model (JSON array of turns)
  --max-line-bytes N       largest accepted input line (default 134217728)
  -h, --help               show this help
  -v, --version            print the version
`;
