/** Choosing the model. */
import { CommandError } from "../responses.js";
import { sync, withCatalog, type CommandTable } from "./types.js";
import { AgentError } from "../../agent/agent-session.js";

export const modelCommands: CommandTable<"set_model" | "cycle_model" | "get_available_models"> = {
  set_model: withCatalog(
    sync((c, server) => {
      const model = server.agent.models.findModel(c.provider, c.modelId);
      if (!model) throw new CommandError(`Model not found: ${c.provider}/${c.modelId} (see get_available_models)`);
      try {
        server.agent.setModel(model);
      } catch (error) {
        if (error instanceof AgentError) throw new CommandError(error.message);
        throw error;
      }
      return model;
    }),
  ),
  cycle_model: withCatalog(sync((_c, server) => server.agent.cycleModel())),
  get_available_models: withCatalog(sync((_c, server) => ({ models: server.agent.models.availableModels() }))),
};
