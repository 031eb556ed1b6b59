/**
 * The command table is the one declaration of each command: every derived record, the generated
 * aliases, the JSON Schema files and the standalone validators follow from it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "typebox";
import { Value } from "typebox/value";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs helper without types
import { buildAliasModule } from "../scripts/alias-code.mjs";
// @ts-expect-error: a plain .mjs helper without types
import { buildJsonSchemaFiles } from "../scripts/json-schema-files.mjs";
// @ts-expect-error: a plain .mjs helper without types
import { buildValidatorModule } from "../scripts/validator-code.mjs";
import * as schemas from "../src/schema/index.js";

const ROOT = join(import.meta.dirname, "..");
const { COMMAND_DECLARATIONS, COMMAND_SCHEMAS, COMMAND_TYPES, SUCCESS_RESPONSE_SCHEMAS, RESPONSE_DATA_SCHEMAS, COMMANDS_WITHOUT_DATA } = schemas;

describe("the command table", () => {
  it("the generated aliases are fresh (regenerate with npm run generate)", () => {
    const committed = readFileSync(join(ROOT, "src/generated/command-aliases.ts"), "utf8");
    expect(committed, "src/generated/command-aliases.ts is stale: run `npm run generate`").toBe((buildAliasModule as (s: unknown) => string)(schemas));
  });

  it("gives every declared command its schemas, its place in both unions and its data or none", () => {
    expect(COMMAND_TYPES).toEqual(Object.keys(COMMAND_DECLARATIONS));
    const additions: readonly unknown[] = schemas.ParleyAdditionRecord.anyOf;
    for (const type of COMMAND_TYPES) {
      const declaration: schemas.CommandDeclaration = COMMAND_DECLARATIONS[type];
      expect(schemas.RpcCommand.anyOf, type).toContain(COMMAND_SCHEMAS[type]);
      expect(schemas.RpcResponse.anyOf, type).toContain(SUCCESS_RESPONSE_SCHEMAS[type]);
      expect(Reflect.get(COMMAND_SCHEMAS[type], "description"), type).toBe(declaration.description);
      expect(Object.hasOwn(RESPONSE_DATA_SCHEMAS, type), type).toBe(declaration.data !== undefined);
      expect(COMMANDS_WITHOUT_DATA.includes(type as (typeof COMMANDS_WITHOUT_DATA)[number]), type).toBe(declaration.data === undefined);
      expect(additions.includes(COMMAND_SCHEMAS[type]), type).toBe(declaration.parley === true);
      expect(additions.includes(SUCCESS_RESPONSE_SCHEMAS[type]), type).toBe(declaration.parley === true);
    }
  });

  it("a new declaration reaches the unions, the JSON Schema files and the validators", () => {
    const records = schemas.deriveCommandRecords({
      ...COMMAND_DECLARATIONS,
      echo: {
        description: "Answer with the text sent.",
        params: { text: Type.String({ description: "What to answer." }) },
        data: Type.Object({ text: Type.String() }, { description: "Data of echo." }),
        client: { method: "echo", args: ["text"] },
      },
    });
    const command = { id: 7, type: "echo", text: "hi" };
    const response = { type: "response", id: 7, command: "echo", success: true, data: { text: "hi" } };
    expect(Value.Check(records.rpcCommand, command)).toBe(true);
    expect(Value.Check(records.rpcCommand, { type: "echo" })).toBe(false);
    expect(Value.Check(records.rpcResponse, response)).toBe(true);
    expect(Value.Check(records.rpcResponse, { ...response, data: {} })).toBe(false);

    const extended = {
      ...schemas,
      COMMAND_DECLARATIONS: { ...COMMAND_DECLARATIONS, echo: {} },
      COMMAND_SCHEMAS: records.commandSchemas,
      SUCCESS_RESPONSE_SCHEMAS: records.successSchemas,
      RpcCommand: records.rpcCommand,
      RpcResponse: records.rpcResponse,
      InboundRecord: Type.Union([records.rpcCommand, schemas.ExtensionUiResponse]),
    };
    const files = (buildJsonSchemaFiles as (s: unknown) => Record<string, string>)(extended);
    const commandFile = JSON.parse(files["command.json"]!) as { anyOf: unknown[]; $defs: Record<string, unknown> };
    expect(commandFile.anyOf).toContainEqual({ $ref: "#/$defs/EchoCommand" });
    expect(commandFile.$defs["EchoCommand"]).toMatchObject({ description: "Answer with the text sent." });
    expect(JSON.parse(files["response.json"]!).anyOf).toContainEqual({ $ref: "#/$defs/EchoResponse" });
    expect(files["inbound.json"]).toContain('"#/$defs/EchoCommand"');

    const validators = (buildValidatorModule as (s: unknown) => string)({ COMMAND_SCHEMAS: records.commandSchemas });
    const checks = new Function(
      `${validators.replace(/^export const COMMAND_CHECKS: Record<string, \(value: unknown\) => boolean> =/m, "return")}`,
    )() as Record<string, (value: unknown) => boolean>;
    expect(checks["echo"]?.(command)).toBe(true);
    expect(checks["echo"]?.({ type: "echo", text: 1 })).toBe(false);
  });
});
