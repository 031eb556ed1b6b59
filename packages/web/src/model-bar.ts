/**
 * The model in use and how it thinks: comboboxes "Model" (get_available_models) and "Thinking"
 * (the model's levels), the context window's use (a meter "Context") and the session's cost.
 * The current model is always shown, even when it is not among the available ones.
 */
import type { ContextUsage, Model, ThinkingLevel } from "@parley/protocol";
import { h } from "./dom.js";

export interface ModelActions {
  chooseModel(provider: string, modelId: string): void;
  chooseLevel(level: ThinkingLevel): void;
}

const key = (m: { provider: string; id: string }): string => `${m.provider}/${m.id}`;

export class ModelBar {
  readonly element: HTMLElement;
  readonly #model: HTMLSelectElement;
  readonly #level: HTMLSelectElement;
  readonly #meter: HTMLMeterElement;
  readonly #meterText: HTMLElement;
  readonly #cost: HTMLElement;
  #models: readonly Model[] = [];
  #levels: readonly ThinkingLevel[] = [];
  #current: Model | undefined;

  constructor(actions: ModelActions) {
    this.#model = h("select", { attrs: { "aria-label": "Model", class: "model-select" } });
    this.#level = h("select", { attrs: { "aria-label": "Thinking" } });
    this.#meter = h("meter", { attrs: { "aria-label": "Context", min: "0", max: "100", value: "0", low: "70", high: "90", optimum: "0" } });
    this.#meterText = h("span", { class: "meter-text" }, "");
    this.#cost = h("span", { class: "cost", attrs: { title: "Session cost" } }, "");
    this.element = h("div", { class: "model-bar" }, this.#model, this.#level, h("span", { class: "context" }, this.#meter, this.#meterText), this.#cost);
    this.#model.addEventListener("change", () => {
      const chosen = this.#models.find((m) => key(m) === this.#model.value);
      if (chosen) actions.chooseModel(chosen.provider, chosen.id);
    });
    this.#level.addEventListener("change", () => {
      const chosen = this.#levels.find((l) => l === this.#level.value);
      if (chosen !== undefined) actions.chooseLevel(chosen);
    });
  }

  setModels(models: readonly Model[]): void {
    this.#models = models;
    this.#renderModels();
  }

  setCurrent(model: Model | undefined, level: ThinkingLevel | undefined, levels: readonly ThinkingLevel[]): void {
    this.#current = model;
    this.#renderModels();
    const shown = level !== undefined && !levels.includes(level) ? [...levels, level] : levels;
    this.#levels = shown;
    this.#level.replaceChildren(...shown.map((l) => h("option", { attrs: { value: l } }, l)));
    if (level !== undefined) this.#level.value = level;
    this.#level.disabled = shown.length <= 1;
  }

  setStats(usage: ContextUsage | undefined, cost: number | undefined): void {
    const percent = usage?.percent ?? null;
    this.#meter.value = percent === null ? 0 : Math.min(100, percent);
    const text = usage === undefined ? "" : percent === null ? "context ?" : `${Math.round(percent)}% of ${compact(usage.contextWindow)}`;
    this.#meterText.textContent = text;
    this.#meter.setAttribute("aria-valuetext", text === "" ? "unknown" : text);
    this.#cost.textContent = cost === undefined ? "" : `$${cost.toFixed(cost < 1 ? 4 : 2)}`;
  }

  #renderModels(): void {
    const list = [...this.#models];
    const current = this.#current;
    if (current && !list.some((m) => key(m) === key(current))) list.unshift(current);
    this.#model.replaceChildren(...list.map((m) => h("option", { attrs: { value: key(m) } }, `${m.name ?? m.id} (${m.provider})`)));
    if (current) this.#model.value = key(current);
    this.#model.title = current ? key(current) : "";
  }
}

function compact(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${Math.round(n / 1000)}k` : String(n);
}
