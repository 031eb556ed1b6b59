/**
 * The client's typed methods come from the protocol's command table: the generated module is
 * fresh, every declared command has its method, and a new declaration gets one.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as schemas from "@parley/protocol";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs helper without types
import { buildCommandMethodsModule } from "../scripts/command-methods-code.mjs";
import { RpcClient } from "../src/index.js";

const build = buildCommandMethodsModule as (s: unknown) => string;

describe("generated command methods", () => {
  it("are fresh (regenerate with npm run generate)", () => {
    const committed = readFileSync(join(import.meta.dirname, "../src/generated/command-methods.ts"), "utf8");
    expect(committed, "packages/client/src/generated/command-methods.ts is stale: run `npm run generate`").toBe(build(schemas));
  });

  it("give RpcClient a method for every declared command", () => {
    for (const [type, declaration] of Object.entries(schemas.COMMAND_DECLARATIONS)) {
      expect(typeof Reflect.get(RpcClient.prototype, declaration.client.method), `${type}: ${declaration.client.method}`).toBe("function");
    }
  });

  it("give a new declaration its method: positional args, the other fields as options, the result unwrapped", () => {
    const echo = {
      description: "Answer with the text sent.",
      params: { text: Type.String(), loud: Type.Optional(Type.Boolean()) },
      data: Type.Object({ text: Type.String() }),
      client: { method: "echo", args: ["text"], result: "text" },
    };
    const table = { ...schemas.COMMAND_DECLARATIONS, echo };
    const text = build({ COMMAND_DECLARATIONS: table, COMMAND_SCHEMAS: schemas.deriveCommandRecords(table).commandSchemas });
    expect(text).toContain(
      'async echo(text: CommandInput<"echo">["text"], options: RequestOptions & Pick<CommandInput<"echo">, "loud"> = {}): Promise<ResponseData<"echo">["text"]> {',
    );
    expect(text).toContain('return (await this.request({ type: "echo", text, ...defined({ loud }) }, rest)).text;');
  });
});
