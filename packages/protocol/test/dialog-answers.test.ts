import { describe, expect, it } from "vitest";
import { answerMismatch, dialogResponseBody, readDialogResponse } from "../src/dialog-answers.js";

const select = { id: "d1", method: "select", options: ["a", "b"] } as const;
const confirm = { id: "d2", method: "confirm" } as const;
const input = { id: "d3", method: "input" } as const;

describe("dialog answer rules", () => {
  it("a confirm takes a boolean, the others a string, a select one of its options", () => {
    expect(answerMismatch(confirm, true)).toBeUndefined();
    expect(answerMismatch(confirm, "yes")).toMatchObject({ kind: "type" });
    expect(answerMismatch(input, "x")).toBeUndefined();
    expect(answerMismatch(input, 1)).toMatchObject({ kind: "type", text: "is not a string" });
    expect(answerMismatch(select, "b")).toBeUndefined();
    expect(answerMismatch(select, "c")).toMatchObject({ kind: "option" });
  });

  it("the agent reads a response by them; cancelled: true wins", () => {
    expect(readDialogResponse(select, { value: "a" })).toEqual({ kind: "value", value: "a" });
    expect(readDialogResponse(confirm, { confirmed: false, cancelled: false })).toEqual({ kind: "confirmed", confirmed: false });
    expect(readDialogResponse(confirm, { confirmed: true, cancelled: true })).toEqual({ kind: "cancelled" });
    expect(readDialogResponse(select, { value: "c" })).toContain("not one of its options");
    expect(readDialogResponse(confirm, { value: "yes" })).toContain('answered with "confirmed"');
    expect(readDialogResponse(input, {})).toContain("carries no answer");
  });

  it("the client writes an answer by them, and refuses one that does not fit", () => {
    expect(dialogResponseBody(select, "b")).toEqual({ value: "b" });
    expect(dialogResponseBody(confirm, false)).toEqual({ confirmed: false });
    expect(dialogResponseBody(input, undefined)).toEqual({ cancelled: true });
    expect(dialogResponseBody(select, "c")).toBeInstanceOf(RangeError);
    expect(dialogResponseBody(confirm, "yes")).toBeInstanceOf(TypeError);
  });
});
