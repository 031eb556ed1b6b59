/**
 * The model and thinking level a session starts with, as pi's createAgentSession decides them
 * (the command line's, else what a resumed session last used when still usable, else settings'
 * defaults), and what a session records of them when it is opened.
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import { THINKING_LEVELS } from "@parley/protocol/constants";
import type { ThinkingLevel } from "@parley/protocol";
import type { ExtensionProviders, ModelResolution } from "../models/index.js";
import { lastModelChange } from "../models/virtual-models.js";
import type { Session, SessionContext } from "../session/session.js";

/** What a session's path records for its start: pi's createAgentSession decides from these. */
interface ResumedSettings extends Pick<SessionContext, "model" | "thinkingLevel"> {
  /** The path holds messages (pi's "existing session"). */
  existing: boolean;
  /** The path holds a thinking_level_change. */
  thinkingRecorded: boolean;
  /** The path's latest model_change: a virtual model it names stays selected though responses name physical ones. */
  selected: { provider: string; modelId: string } | undefined;
}

/**
 * What a session start falls back on, as in the newest pi: start-up's choice (the command line's,
 * else settings' defaults). A model and level the command line gave pin every session of the
 * process. set_model and set_thinking_level change the session only, as in the newest pi (0.73.1
 * saved them as settings' defaults).
 */
interface SessionDefaults {
  model: Model<Api>;
  thinkingLevel: ThinkingLevel;
  modelPinned: boolean;
  thinkingPinned: boolean;
}

/** Start-up's model choice (models/resolve.ts, or main's once extensions registered their providers). */
export interface StartupChoice {
  model: Model<Api>;
  thinkingLevel: ThinkingLevel;
  source: string;
  thinkingFromCli: boolean;
}

/** What the start choice needs from the agent (AgentSession is one). */
export interface StartModelHost {
  readonly models: Pick<ModelResolution & ExtensionProviders, "virtualModel" | "findModel" | "hasAuth" | "clampThinkingLevel">;
  /** The loop's model and level, which the choice sets. */
  state(): { model: Model<Api>; thinkingLevel: ThinkingLevel };
  /** settings.json `modelThinkingLevels`' level for a model, if any. */
  modelLevel(model: Model<Api>): ThinkingLevel | undefined;
  log(message: string): void;
}

function resumedSettings(session: Session, context: SessionContext): ResumedSettings {
  const branch = session.branch();
  return {
    model: context.model,
    thinkingLevel: context.thinkingLevel,
    existing: context.messages.length > 0,
    thinkingRecorded: branch.some((e) => e.type === "thinking_level_change"),
    selected: lastModelChange(branch),
  };
}

function defaultsOf(choice: StartupChoice): SessionDefaults {
  return {
    model: choice.model,
    thinkingLevel: choice.thinkingLevel,
    modelPinned: choice.source === "cli" || choice.source === "script",
    thinkingPinned: choice.thinkingFromCli,
  };
}

function isThinkingLevel(value: string): value is ThinkingLevel {
  return THINKING_LEVELS.some((level) => level === value);
}

export class StartModel {
  /** The session's recorded model and thinking level, kept so the start-up model choice need not rebuild the context. */
  #resumed: ResumedSettings;
  #defaults: SessionDefaults;
  /** The session whose start is recorded: pi records each session's model and level once, when it opens it. */
  #started: Session | undefined;
  /** pi 1.6's diagnostic when a resumed session's model is unavailable: said at start-up and after a switch, each wording once. */
  readonly #saidFallbacks = new Set<string>();

  /** `context`: the session's, built once by the caller (a resumed session's can be large). */
  constructor(
    private readonly host: StartModelHost,
    session: Session,
    context: SessionContext,
    choice: StartupChoice,
  ) {
    this.#resumed = resumedSettings(session, context);
    this.#defaults = defaultsOf(choice);
    this.#settle();
  }

  /** Another session is taken up (new, switch, fork): the model and level pi would start it with. */
  sessionChanged(session: Session, context: SessionContext): void {
    this.#resumed = resumedSettings(session, context);
    this.#sayFallback(this.#settle());
  }

  /**
   * The model chosen at start-up, once extensions have registered their providers. Unless the
   * command line chose it, a resumed session's own model (when still usable) wins, as in pi.
   */
  applyStartupModel(choice: StartupChoice): void {
    this.#defaults = defaultsOf(choice);
    this.#sayFallback(this.#settle());
  }

  /**
   * Records what the session starts with, once, as pi does when it opens a session: a new one gets
   * its model and level (so a resume restores them), one with messages but no level gets the level.
   */
  recordSessionStart(session: Session): void {
    if (this.#started === session) return;
    this.#started = session;
    const { model, thinkingLevel } = this.host.state();
    if (!this.#resumed.existing) session.append({ type: "model_change", provider: model.provider, modelId: model.id });
    if (!this.#resumed.existing || !this.#resumed.thinkingRecorded) session.append({ type: "thinking_level_change", thinkingLevel });
  }

  /**
   * The model and level the session starts with: the command line's when it gave them; else, for
   * a session with messages, the ones it last used (when still usable); else the defaults.
   */
  #settle(): string | undefined {
    const { models } = this.host;
    const resumed = this.#resumed;
    const defaults = this.#defaults;
    let model = defaults.model;
    let fallback: string | undefined;
    if (!defaults.modelPinned && resumed.existing && resumed.model) {
      // As the newest pi: a virtual selection holds while it is registered; else the model that answered last.
      const virtual = resumed.selected && models.virtualModel(resumed.selected.provider, resumed.selected.modelId);
      const recorded = virtual ?? models.findModel(resumed.model.provider, resumed.model.modelId);
      if (recorded && models.hasAuth(recorded)) model = recorded;
      else fallback = `Warning: Could not restore model ${resumed.model.provider}/${resumed.model.modelId}. Using ${model.provider}/${model.id}`;
    }
    // A level this parley does not know (a newer pi's, or a damaged file) counts as none recorded.
    const recordedLevel = resumed.existing && resumed.thinkingRecorded && isThinkingLevel(resumed.thinkingLevel) ? resumed.thinkingLevel : undefined;
    // A new session takes the model's own level (settings' modelThinkingLevels) before the default.
    const level = defaults.thinkingPinned
      ? defaults.thinkingLevel
      : resumed.existing
        ? (recordedLevel ?? defaults.thinkingLevel)
        : (this.host.modelLevel(model) ?? defaults.thinkingLevel);
    const state = this.host.state();
    state.model = model;
    state.thinkingLevel = models.clampThinkingLevel(model, level);
    return fallback;
  }

  #sayFallback(message: string | undefined): void {
    if (message === undefined || this.#saidFallbacks.has(message)) return;
    this.#saidFallbacks.add(message);
    this.host.log(message);
  }
}
