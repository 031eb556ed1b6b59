/**
 * Records always fit the schemas: an extension that hands ctx.ui values of the wrong type or
 * outside an enum gets them repaired (to a string, to the default), with one diagnostic per
 * extension and kind on stderr. The spawn helper checks every record against outbound.json, so
 * any record that slips through fails here too; the helper's own check is tested first.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { outboundViolation } from "./helpers/outbound-schema.js";
import { spawnAgent, type AgentProcess, type Rec } from "./helpers/spawn.js";
import { processRegistry } from "./fixtures/agent/harness.js";

const HOSTILE = join(import.meta.dirname, "fixtures/hostile-values.ts");
const procs = processRegistry();

describe("the helper's schema check", () => {
  it("names a record outside a closed enum, and passes the normalised one", () => {
    const base = { type: "extension_ui_request", id: "x" };
    expect(outboundViolation({ ...base, method: "notify", message: "m", notifyType: "catastrophic" })).toMatch(
      /\(as a NotifyRequest: \/notifyType .*\)\n {2}record: .*"catastrophic"/,
    );
    expect(outboundViolation({ ...base, method: "setWidget", widgetKey: "w", widgetLines: ["a"], widgetPlacement: "sideways" })).toMatch(
      /as a SetWidgetRequest: \/widgetPlacement/,
    );
    expect(outboundViolation({ ...base, method: "setWidget", widgetKey: "w", widgetLines: [null] })).toMatch(/\/widgetLines\/0 /);
    expect(outboundViolation({ ...base, method: "select", title: "t", options: ["a"], timeout: null })).toMatch(/timeout/);
    expect(outboundViolation({ ...base, method: "notify", message: "m", notifyType: "info" })).toBeUndefined();
    expect(outboundViolation({ type: "response", command: "get_state", success: true, data: {} })).toMatch(
      /as a GetStateResponse: \/data must have required properties/,
    );
    expect(outboundViolation({ type: "bogus" })).toMatch(/not one of the record kinds/);
  });

  it("fails every wait on a process at once when a record does not fit", async () => {
    // `node -e` stands in for a parley that writes a bad record; checkSchema is on as for parley.
    const script = `process.stdout.write(JSON.stringify({type:"extension_ui_request",id:"1",method:"notify",message:"m",notifyType:"catastrophic"})+"\\n"); setTimeout(()=>{}, 60000);`;
    const agent = spawnAgent(process.execPath, ["-e", script], { checkSchema: true });
    await expect(agent.waitFor((r) => r.type === "never", 60_000)).rejects.toThrow(
      /stdout record #1: record does not fit .*outbound\.json \(as a NotifyRequest: \/notifyType /,
    );
    expect(agent.takeSchemaViolation()).toMatch(/catastrophic/);
    agent.kill();
    await agent.exited;
  });
});

async function run(agent: AgentProcess, command: string): Promise<Rec[]> {
  const from = agent.records.length;
  const res = await agent.request({ type: "prompt", message: command });
  expect(res["success"]).toBe(true);
  await agent.waitFor(
    (r) => r.type === "extension_ui_request" && r["method"] === "notify" && String(r["message"]).startsWith(command.slice(1)),
    undefined,
    from,
  );
  return agent.records.slice(from).filter((r) => r.type === "extension_ui_request");
}

describe("ctx.ui values that do not fit are repaired, with a one-time diagnostic naming the extension", () => {
  it("fire-and-forget: enums fall back to the default, text becomes a string, a non-array widget is dropped", async () => {
    const agent = procs.parley(["-e", HOSTILE]);
    const records = await run(agent, "/hostile-ui");
    const strip = ({ id: _id, type: _type, ...rest }: Rec) => rest;
    const round = [
      { method: "notify", message: "m", notifyType: "info" },
      { method: "notify", message: "42", notifyType: "info" },
      { method: "notify", message: "[object Object]", notifyType: "warning" },
      { method: "setWidget", widgetKey: "w", widgetLines: ["a"] },
      { method: "setWidget", widgetKey: "5", widgetLines: ["1", "null", "undefined", "[object Object]", "ok"], widgetPlacement: "belowEditor" },
      { method: "setWidget", widgetKey: "sparse", widgetLines: ["undefined", "second"] },
      { method: "setWidget", widgetKey: "bad-options", widgetLines: ["line"] },
      { method: "setStatus", statusKey: "s", statusText: "12" },
      { method: "setStatus", statusKey: "3", statusText: "false" },
      { method: "setStatus", statusKey: "cleared" },
      { method: "setTitle", title: "null" },
      { method: "set_editor_text", text: "undefined" },
      { method: "set_editor_text", text: "99" },
    ];
    expect(records.map(strip)).toEqual([...round, ...round, { method: "notify", message: "hostile-ui done", notifyType: "info" }]);

    // stderr and stdout are separate pipes: wait for the last diagnostic to arrive.
    await agent.until(() => agent.stderr().includes("ctx.ui.pasteToEditor(): text is number 99"));
    const diagnostics = agent
      .stderr()
      .split("\n")
      .filter((line) => line.includes(HOSTILE) && line.includes("ctx.ui."));
    for (const expected of [
      'ctx.ui.notify(): type "catastrophic" is not one of "info", "warning", "error"; sent as "info"',
      'ctx.ui.setWidget(): placement "sideways" is not "aboveEditor" or "belowEditor"; shown above the editor',
      'ctx.ui.setWidget(): content is "not an array", not an array of strings; the call is ignored',
      "ctx.ui.notify(): message is number 42, not a string; converted with String()",
      "ctx.ui.setStatus(): text is number 12, not a string; converted with String()",
      "ctx.ui.setWidget(): an element of lines is number 1, not a string; converted with String()",
    ]) {
      expect(
        diagnostics.filter((line) => line.endsWith(expected)),
        expected,
      ).toHaveLength(1);
    }
    // One line per extension and kind, however often it happens.
    expect(new Set(diagnostics).size).toBe(diagnostics.length);
  });

  it("dialogs: options and titles become strings, a timeout that is not a positive finite number is left out (a negative one has run out: never sent)", async () => {
    const agent = procs.parley(["-e", HOSTILE]);
    agent.send({ type: "prompt", message: "/hostile-dialogs", id: "d" });
    const answers: Record<string, object> = { select: { value: "two" }, confirm: { confirmed: true }, input: { value: "typed" }, editor: { cancelled: true } };
    const seen: Rec[] = [];
    // The confirm's timeout is -5: it resolves with false at once and is never sent.
    for (const method of ["select", "input", "editor"]) {
      const request = await agent.waitFor((r) => r.type === "extension_ui_request" && r["method"] === method);
      seen.push(request);
      agent.send({ type: "extension_ui_response", id: request["id"], ...answers[method] });
    }
    const done = await agent.waitFor((r) => r["method"] === "notify" && String(r["message"]).startsWith("hostile-dialogs"));
    expect(seen.map(({ id: _id, type: _type, ...rest }) => rest)).toEqual([
      { method: "select", title: "7", options: ["1", "two", "null"] },
      { method: "input", title: "[object Object]", placeholder: "3" },
      { method: "editor", title: "e", timeout: 1e300 },
    ]);
    expect(done["message"]).toBe(
      'hostile-dialogs: ["two",false,"typed",null,"rejected: ctx.ui.select(): options must be an array of strings, not \\"not an array\\""]',
    );
  });
});
