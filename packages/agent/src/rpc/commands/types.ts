import type { CommandType, RpcCommand } from "@parley/protocol";
import type { RpcServer } from "../server.js";

export type CommandOf<K extends CommandType> = Extract<RpcCommand, { type: K }>;

/**
 * `sync` handlers answer before the next line is read, so their responses leave in arrival order.
 * `async` handlers are long-running by nature (they wait for a model, a shell or an extension's
 * dialog); their response leaves when they finish, and later lines do not wait for them.
 */
export type CommandHandler<K extends CommandType> = (
  | { kind: "sync"; run: (command: CommandOf<K>, server: RpcServer) => unknown }
  | {
      kind: "async";
      /** `respond` answers early (e.g. when a prompt is accepted, before its events); otherwise the result answers. */
      run: (command: CommandOf<K>, server: RpcServer, respond: (data?: unknown) => void) => Promise<unknown>;
    }
) & {
  /**
   * The handler uses the built-in model catalogue, which start-up does not load. Until it is
   * loaded, this line and every later one wait (in order) while it loads.
   */
  needsCatalog?: boolean;
};

export type CommandTable<K extends CommandType> = { [P in K]: CommandHandler<P> };

export const sync = <K extends CommandType>(run: (command: CommandOf<K>, server: RpcServer) => unknown): CommandHandler<K> => ({ kind: "sync", run });
export const async = <K extends CommandType>(
  run: (command: CommandOf<K>, server: RpcServer, respond: (data?: unknown) => void) => Promise<unknown>,
): CommandHandler<K> => ({
  kind: "async",
  run,
});

/** Marks a handler as needing the model catalogue (see CommandHandler.needsCatalog). */
export const withCatalog = <K extends CommandType>(handler: CommandHandler<K>): CommandHandler<K> => ({ ...handler, needsCatalog: true });
