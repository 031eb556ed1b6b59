/**
 * Everything about commands that follows from their declarations (`command-table.ts`): each
 * command's schema, each successful response's schema, the `data` schema of each command, the
 * unions of all commands and all responses, and the types that go with them. Nothing here
 * names a command: a command added to the table appears in all of it. `deriveCommandRecords`
 * works on any table, so a test can show a new declaration flowing through.
 */
import { Type, type Static, type TProperties, type TSchema, type TUnion } from "typebox";
import { CommandId } from "./commands.js";
import { ErrorResponse, SuccessResponse } from "./responses.js";
import { COMMAND_DECLARATIONS, type CommandDeclaration } from "./command-table.js";
import { unionOf } from "./union-of.js";

/** A table of command declarations, keyed by command type. */
export type CommandTable = Record<string, CommandDeclaration>;

// ---- one command's schemas, from its declaration ----------------------------------------------

function commandSchema<K extends string, P extends TProperties>(type: K, description: string, params: P) {
  return Type.Object({ id: CommandId, type: Type.Literal(type), ...params }, { description });
}

const ResponseId = SuccessResponse.properties.id;

function successWithData<K extends string, S extends TSchema>(command: K, data: S) {
  return Type.Object(
    { type: Type.Literal("response"), id: ResponseId, command: Type.Literal(command), success: Type.Literal(true), data },
    { description: `Successful response to ${command}.` },
  );
}

/** parley sends `data` (as the newest pi does); pi 0.73.1 sends none, and a client of either reads both. */
function successWithOptionalData<K extends string, S extends TSchema>(command: K, data: S) {
  return Type.Object(
    { type: Type.Literal("response"), id: ResponseId, command: Type.Literal(command), success: Type.Literal(true), data: Type.Optional(data) },
    { description: `Successful response to ${command}; \`data\` is absent from older pi.` },
  );
}

function successWithoutData<K extends string>(command: K) {
  return Type.Object(
    { type: Type.Literal("response"), id: ResponseId, command: Type.Literal(command), success: Type.Literal(true) },
    { description: `Successful response to ${command}.` },
  );
}

type ParamsOf<D> = D extends { params: infer P extends TProperties } ? P : Record<never, never>;
type DataSchemaOf<D> = D extends { data: infer S extends TSchema } ? S : never;

/** The schema of command `K` declared as `D`. */
export type CommandSchemaOf<K extends string, D> = ReturnType<typeof commandSchema<K, ParamsOf<D>>>;

/** The schema of a successful response to command `K` declared as `D`. */
export type SuccessSchemaOf<K extends string, D> = D extends { data: infer S extends TSchema }
  ? D extends { olderPiOmitsData: true }
    ? ReturnType<typeof successWithOptionalData<K, S>>
    : ReturnType<typeof successWithData<K, S>>
  : ReturnType<typeof successWithoutData<K>>;

// ---- a table's records -----------------------------------------------------------------------------

type TypesOf<T extends CommandTable> = keyof T & string;
type WithData<T extends CommandTable> = { [K in TypesOf<T>]: T[K] extends { data: TSchema } ? K : never }[TypesOf<T>];
type Parley<T extends CommandTable> = { [K in TypesOf<T>]: T[K] extends { parley: true } ? K : never }[TypesOf<T>];
type CommandSchemas<T extends CommandTable> = { [K in TypesOf<T>]: CommandSchemaOf<K, T[K]> };
type SuccessSchemas<T extends CommandTable> = { [K in TypesOf<T>]: SuccessSchemaOf<K, T[K]> };

/** Every record derived from a table of declarations. */
export interface CommandRecords<T extends CommandTable> {
  /** Every command type, in the table's order. */
  readonly types: readonly TypesOf<T>[];
  /** Each command's schema, keyed by its type. */
  readonly commandSchemas: CommandSchemas<T>;
  /** Any command. */
  readonly rpcCommand: TUnion<[CommandSchemas<T>[TypesOf<T>]]>;
  /** The `data` schema of each command whose successful response carries data. */
  readonly dataSchemas: { [K in WithData<T>]: DataSchemaOf<T[K]> };
  /** The commands whose successful response has no `data`. */
  readonly withoutData: readonly Exclude<TypesOf<T>, WithData<T>>[];
  /** Each command's successful response, keyed by its type. */
  readonly successSchemas: SuccessSchemas<T>;
  /** Any response: a command's success, or an error. */
  readonly rpcResponse: TUnion<[SuccessSchemas<T>[TypesOf<T>] | typeof ErrorResponse]>;
  /** The commands parley adds to pi's protocol, in the table's order. */
  readonly parleyTypes: readonly Parley<T>[];
}

/** Derives every command record from a table of declarations. */
export function deriveCommandRecords<T extends CommandTable>(table: T): CommandRecords<T> {
  const declarations: Record<TypesOf<T>, CommandDeclaration> = table;
  const types = Object.keys(table).filter((type): type is TypesOf<T> => Object.hasOwn(table, type));
  // TypeScript cannot follow a value made per key back to its key's type, so each table below
  // is built loosely and typed once, here.
  const each = <R>(make: (type: TypesOf<T>, declaration: CommandDeclaration) => R) =>
    Object.fromEntries(types.map((type) => [type, make(type, declarations[type])]));
  const hasData = (type: TypesOf<T>): type is WithData<T> => declarations[type].data !== undefined;

  const commandSchemas = each((type, declaration) => commandSchema(type, declaration.description, declaration.params ?? {})) as CommandSchemas<T>;
  const successSchemas = each((type, { data, olderPiOmitsData }) => {
    if (data === undefined) return successWithoutData(type);
    return olderPiOmitsData ? successWithOptionalData(type, data) : successWithData(type, data);
  }) as SuccessSchemas<T>;
  const commandList: CommandSchemas<T>[TypesOf<T>][] = types.map((type) => commandSchemas[type]);
  const successList: SuccessSchemas<T>[TypesOf<T>][] = types.map((type) => successSchemas[type]);
  return {
    types,
    commandSchemas,
    rpcCommand: unionOf(commandList, "Any command a client may send."),
    dataSchemas: Object.fromEntries(types.filter(hasData).map((type) => [type, declarations[type].data])) as CommandRecords<T>["dataSchemas"],
    withoutData: types.filter((type): type is Exclude<TypesOf<T>, WithData<T>> => !hasData(type)),
    successSchemas,
    rpcResponse: unionOf([...successList, ErrorResponse], "The response to a command: a per-command success, or an error."),
    parleyTypes: types.filter((type): type is Parley<T> => declarations[type].parley === true),
  };
}

// ---- the protocol's commands ---------------------------------------------------------------------

const records = deriveCommandRecords(COMMAND_DECLARATIONS);
type Declarations = typeof COMMAND_DECLARATIONS;

/** The `type` of every command. */
export type CommandType = TypesOf<Declarations>;

/** Every command type, in the table's order. */
export const COMMAND_TYPES: readonly CommandType[] = records.types;

/** Every command schema, keyed by its `type`. */
export const COMMAND_SCHEMAS = records.commandSchemas;

export const RpcCommand = records.rpcCommand;
export type RpcCommand = Static<typeof RpcCommand>;

/** The command whose `type` is `K`. */
export type CommandOf<K extends CommandType> = Extract<RpcCommand, { type: K }>;

/** The commands parley adds to pi's protocol (pi answers "Unknown command"). */
export type ParleyCommandType = Parley<Declarations>;

/** The commands parley adds to pi's protocol, in the table's order. */
export const PARLEY_COMMAND_TYPES = records.parleyTypes;

export type CommandWithData = WithData<Declarations>;
export type CommandWithoutData = Exclude<CommandType, CommandWithData>;

/** The `data` schema of each command whose successful response carries data. */
export const RESPONSE_DATA_SCHEMAS = records.dataSchemas;

/** Commands whose successful response has no `data`. */
export const COMMANDS_WITHOUT_DATA = records.withoutData;

/** The `data` of a successful response to command `K` (undefined when it has none). */
export type ResponseData<K extends CommandType> = K extends CommandWithData ? Static<(typeof RESPONSE_DATA_SCHEMAS)[K]> : undefined;

/** The successful-response schema of every command, keyed by command type. */
export const SUCCESS_RESPONSE_SCHEMAS = records.successSchemas;

/** A successful response to command `K`. */
export type SuccessResponseFor<K extends CommandType> = Static<(typeof SUCCESS_RESPONSE_SCHEMAS)[K]>;

/** Any response, with `data` checked against the command it answers. */
export const RpcResponse = records.rpcResponse;
export type RpcResponse = Static<typeof RpcResponse>;
