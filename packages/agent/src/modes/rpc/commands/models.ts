/** Choosing the model. */
import { CommandError } from "../responses.js";
import { afterSwitch, withCatalog, type CommandGroup, handlersFor } from "./types.js";
import { AgentError } from "../../../agent/agent-error.js";

/** What these handlers use of the agent. */
type Uses = "cycleModel" | "models" | "setModel";
const { sync } = handlersFor<Uses>();

export const modelCommands = {
  set_model: withCatalog(
    afterSwitch(
      sync((c, ctx) => {
        // As pi 1.6: only a model that can be used (one with credentials) is found, and a known
        // model without them is refused in the same words as an unknown one, which clients match on.
        const known = ctx.agent.models.findModel(c.provider, c.modelId);
        const model = known && ctx.agent.models.hasAuth(known) ? known : undefined;
        if (!model) throw new CommandError(`Model not found: ${c.provider}/${c.modelId}`);
        try {
          ctx.agent.setModel(model);
        } catch (error) {
          if (error instanceof AgentError) throw new CommandError(error.message);
          throw error;
        }
        return model;
      }),
    ),
  ),
  cycle_model: withCatalog(afterSwitch(sync((_c, ctx) => ctx.agent.cycleModel()))),
  get_available_models: withCatalog(sync((_c, ctx) => ({ models: ctx.agent.models.availableModels() }))),
} satisfies CommandGroup;
