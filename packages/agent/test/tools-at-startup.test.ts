/**
 * When the built-in tools' definitions are made, with the hook the CLI bundle sets
 * (setToolsRequire: the tools module synchronously, and whether TypeBox is loaded), in-process:
 * at start-up once an extension has loaded TypeBox (they then cost ~1 ms), else when first asked
 * for. The hook here loads the real tools module and counts the loads. Each test file runs in its
 * own module registry, so the hook stays in this file.
 */
import { describe, expect, it } from "vitest";
import type { ExtensionAPI } from "../src/index.js";
import { RpcServer } from "../src/modes/rpc/server.js";
import { setToolsRequire, type ToolsModule } from "../src/tools/tools-require.js";
import * as toolsModule from "../src/tools/index.js";
import { MemoryTransport } from "./helpers/memory-transport.js";

const hook = { typeboxLoaded: false, loads: 0 };
setToolsRequire(
  (): ToolsModule => {
    hook.loads++;
    return toolsModule;
  },
  () => hook.typeboxLoaded,
);

async function serve(factory: (pi: ExtensionAPI) => void) {
  const transport = new MemoryTransport();
  const server = new RpcServer({ transport, cwd: process.cwd(), extensions: [{ path: "/ext/0.ts", factory }], log: () => {}, shutdownGraceMs: 200 });
  await server.start();
  return { transport };
}

const schemaType = (schema: unknown): unknown => (typeof schema === "object" && schema !== null && "type" in schema ? schema.type : undefined);

/** An extension whose /tools command lists what pi.getAllTools() returns. */
function listsTools(pi: ExtensionAPI): void {
  pi.registerCommand("tools", {
    handler: async (_args, ctx) =>
      ctx.ui.notify(
        pi
          .getAllTools()
          .map((t) => `${t.name}:${schemaType(t.parameters)}`)
          .join(","),
      ),
  });
}

async function toolsListed(transport: MemoryTransport): Promise<string> {
  transport.line({ type: "prompt", message: "/tools", id: "t" });
  for (let i = 0; i < 100 && transport.of("response").every((r) => r["id"] !== "t"); i++) await new Promise((r) => setImmediate(r));
  return String(transport.of("extension_ui_request").find((r) => r["method"] === "notify")?.["message"]);
}

const BUILT_INS = "read:object,bash:object,edit:object,write:object,grep:object,find:object,ls:object";

describe("the built-in tools' definitions", () => {
  it("are not made at start-up while TypeBox is not loaded (pi's rpc-demo.ts): the first pi.getAllTools() makes them", async () => {
    hook.typeboxLoaded = false;
    hook.loads = 0;
    const { transport } = await serve(listsTools);
    expect(hook.loads).toBe(0);
    expect((await toolsListed(transport)).split(",").sort()).toEqual(BUILT_INS.split(",").sort());
    expect(hook.loads).toBe(1);
  });

  it("are made at start-up, after the factories, once an extension has loaded TypeBox; later asks reuse them", async () => {
    hook.typeboxLoaded = false;
    hook.loads = 0;
    let loadsInFactory = -1;
    const { transport } = await serve((pi) => {
      // As an extension that builds its schemas at load would: TypeBox is loaded from here on.
      hook.typeboxLoaded = true;
      loadsInFactory = hook.loads;
      listsTools(pi);
    });
    expect(loadsInFactory).toBe(0);
    expect(hook.loads).toBe(1);
    expect((await toolsListed(transport)).split(",").sort()).toEqual(BUILT_INS.split(",").sort());
    expect(hook.loads).toBe(1);
  });
});
