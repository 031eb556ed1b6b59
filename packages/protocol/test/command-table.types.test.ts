/**
 * Type-level: a command declared once in a table appears in every derived type (the command
 * union, the command→data map, the success responses, the response union, the parley list),
 * and the protocol's exported types are those of its own table. The file type-checks itself.
 */
import { fileURLToPath } from "node:url";
import { Type, type Static } from "typebox";
import { describe, expect, it } from "vitest";
import {
  COMMAND_DECLARATIONS,
  deriveCommandRecords,
  type CommandOf,
  type CommandTable,
  type CommandType,
  type CommandWithData,
  type ParleyCommandType,
  type ResponseData,
  type RpcCommand,
  type SuccessResponseFor,
} from "../src/schema/index.js";
import { typeCheckFile } from "./helpers/type-check-file.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Compiles only when T is `true`. */
// biome-ignore lint/correctness/noUnusedVariables: the constraint on T is the whole check.
function check<T extends true>(): void {}

// ---- a new declaration, added to the protocol's table -------------------------------------------

const table = {
  ...COMMAND_DECLARATIONS,
  echo: {
    description: "Answer with the text sent.",
    params: { text: Type.String(), times: Type.Optional(Type.Integer()) },
    data: Type.Object({ text: Type.String() }),
    parley: true,
    client: { method: "echo", args: ["text"] },
  },
  ping: { description: "Answer at once.", client: { method: "ping" } },
} satisfies CommandTable;

const records = deriveCommandRecords(table);
type Command = Static<typeof records.rpcCommand>;
type Response = Static<typeof records.rpcResponse>;
type Data = { [K in keyof typeof records.dataSchemas]: Static<(typeof records.dataSchemas)[K]> };

// The command union has it, with its fields.
check<Equal<Extract<Command, { type: "echo" }>, { id?: string | number; type: "echo"; text: string; times?: number }>>();
check<Equal<Extract<Command, { type: "ping" }>, { id?: string | number; type: "ping" }>>();
check<Equal<Command["type"], CommandType | "echo" | "ping">>();
// The command→data map has the one with data, and not the other.
check<Equal<Data["echo"], { text: string }>>();
check<Equal<"ping" extends keyof Data ? true : false, false>>();
check<Equal<(typeof records.withoutData)[number] extends infer W ? ("ping" extends W ? true : false) : never, true>>();
// Its successful response is in the response union, `data` typed.
check<Equal<Extract<Response, { command: "echo" }>, { type: "response"; id?: string | number; command: "echo"; success: true; data: { text: string } }>>();
check<Equal<Extract<Response, { command: "ping" }>, { type: "response"; id?: string | number; command: "ping"; success: true }>>();
// Marked parley: listed as an addition.
check<Equal<(typeof records.parleyTypes)[number], ParleyCommandType | "echo">>();

// ---- the protocol's exported types are its table's ---------------------------------------------------

check<Equal<CommandType, keyof typeof COMMAND_DECLARATIONS>>();
check<Equal<RpcCommand, Static<ReturnType<typeof deriveCommandRecords<typeof COMMAND_DECLARATIONS>>["rpcCommand"]>>>();
check<Equal<CommandOf<"set_model">, { id?: string | number; type: "set_model"; provider: string; modelId: string }>>();
check<Equal<ResponseData<"abort">, undefined>>();
check<Equal<"abort" extends CommandWithData ? true : false, false>>();
check<Equal<SuccessResponseFor<"prompt">["data"], ResponseData<"prompt"> | undefined>>();

describe("declaring a command", () => {
  it("this file type-checks", () => {
    expect(typeCheckFile(fileURLToPath(import.meta.url))).toBe("");
  });

  it("puts the declaration in every derived record at run time", () => {
    expect(records.types.slice(-2)).toEqual(["echo", "ping"]);
    expect(records.rpcCommand.anyOf).toContain(records.commandSchemas.echo);
    expect(records.rpcResponse.anyOf).toContain(records.successSchemas.ping);
    expect(Object.keys(records.dataSchemas)).toContain("echo");
    expect(records.withoutData).toContain("ping");
    expect(records.parleyTypes.at(-1)).toBe("echo");
  });
});
