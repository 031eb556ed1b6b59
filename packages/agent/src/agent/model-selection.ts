/**
 * The session's model and thinking level as the client and extensions change them: set_model,
 * cycle_model within the scope (`--models` / `enabledModels`), set and cycle the thinking level.
 * Each change is recorded on the session and announced as the newest pi announces it.
 */
import type { Api, Model } from "@earendil-works/pi-ai";
import type { RpcEvent, ThinkingLevel } from "@parley/protocol";
import type { ExtensionRuntime } from "../extensions/runtime.js";
import type { ExtensionProviders, ModelResolution } from "../models/index.js";
import type { ScopedModelChoice } from "../models/model-scope.js";
import type { Session } from "../session/session.js";
import type { AgentConfig } from "./agent-config.js";

/** What model selection needs from the agent (AgentSession is one). */
export interface ModelSelectionHost {
  readonly models: Pick<ModelResolution & ExtensionProviders, "availableModels" | "hasAuth" | "clampThinkingLevel" | "thinkingLevelsFor">;
  readonly runtime: Pick<ExtensionRuntime, "emit">;
  /** The loop's model and level (the Agent's state once it exists). */
  state(): { model: Model<Api>; thinkingLevel: ThinkingLevel };
  session(): Pick<Session, "append">;
  config(): AgentConfig | undefined;
  /** Throws the client's error when the model has no credentials. */
  checkAuth(model: Model<Api>): void;
  emit(event: RpcEvent): void;
}

export interface CycledModel {
  model: Model<Api>;
  thinkingLevel: ThinkingLevel;
  isScoped: boolean;
}

export class ModelSelection {
  /**
   * The models `--models` / `enabledModels` limit cycle_model to (pi's scope; ctx.scopedModels);
   * empty when not scoped. A model's level, when its pattern gave one, applies on switching to it.
   */
  scopedModels: ScopedModelChoice[] = [];

  constructor(private readonly host: ModelSelectionHost) {}

  /** settings.json `modelThinkingLevels`' level for this model, if any. */
  modelLevel(model: Model<Api>): ThinkingLevel | undefined {
    return this.host.config()?.modelThinkingLevels?.[`${model.provider}/${model.id}`];
  }

  /**
   * `source`: what model_select handlers are told ("cycle" for cycle_model, as in the newest pi).
   * The level becomes, as in the newest pi: `level` (a scoped pattern's), else the model's own
   * (modelThinkingLevels), else settings' defaultThinkingLevel, else the current one; clamped.
   */
  setModel(model: Model<Api>, source: "set" | "cycle" = "set", level?: ThinkingLevel): void {
    this.host.checkAuth(model);
    const state = this.host.state();
    const previous = state.model;
    const next = level ?? this.modelLevel(model) ?? this.host.config()?.defaultThinkingLevel ?? state.thinkingLevel;
    state.model = model;
    this.host.session().append({ type: "model_change", provider: model.provider, modelId: model.id });
    this.setThinkingLevel(next, { force: true });
    if (previous.provider !== model.provider || previous.id !== model.id) {
      void this.host.runtime.emit({ type: "model_select", model, previousModel: previous, source });
    }
  }

  /** Next model: of the scope (those with credentials) when there is one, else of every available model; null when there is only one. */
  cycleModel(): CycledModel | null {
    if (this.scopedModels.length > 0) return this.#cycleScoped();
    const current = this.host.state().model;
    const models = this.host.models.availableModels();
    if (models.length < 2) return null;
    const index = models.findIndex((m) => m.provider === current.provider && m.id === current.id);
    const next = models[(index + 1) % models.length];
    if (!next) return null;
    this.setModel(next, "cycle");
    return { model: next, thinkingLevel: this.host.state().thinkingLevel, isScoped: false };
  }

  #cycleScoped(): CycledModel | null {
    const current = this.host.state().model;
    const scope = this.scopedModels.filter((s) => this.host.models.hasAuth(s.model));
    if (scope.length < 2) return null;
    const index = scope.findIndex((s) => s.model.provider === current.provider && s.model.id === current.id);
    const next = scope[(Math.max(index, 0) + 1) % scope.length];
    if (!next) return null;
    this.setModel(next.model, "cycle", next.thinkingLevel);
    return { model: next.model, thinkingLevel: this.host.state().thinkingLevel, isScoped: true };
  }

  availableThinkingLevels(): ThinkingLevel[] {
    return this.host.models.thinkingLevelsFor(this.host.state().model);
  }

  /** Clamped to what the model supports; a real change is announced and recorded. */
  setThinkingLevel(level: ThinkingLevel, options: { force?: boolean } = {}): void {
    const state = this.host.state();
    const effective = this.host.models.clampThinkingLevel(state.model, level);
    const previous = state.thinkingLevel;
    if (effective === previous && !options.force) return;
    state.thinkingLevel = effective;
    if (effective === previous) return;
    this.host.session().append({ type: "thinking_level_change", thinkingLevel: effective });
    this.host.emit({ type: "thinking_level_changed", level: effective });
    void this.host.runtime.emit({ type: "thinking_level_select", level: effective, previousLevel: previous });
  }

  cycleThinkingLevel(): ThinkingLevel | null {
    const levels = this.availableThinkingLevels();
    if (levels.length < 2) return null;
    const next = levels[(levels.indexOf(this.host.state().thinkingLevel) + 1) % levels.length];
    if (!next) return null;
    this.setThinkingLevel(next);
    return next;
  }
}
