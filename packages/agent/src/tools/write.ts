import { dirname } from "node:path";
import { type Static, Type } from "typebox";
import { withFileMutationQueue } from "./file-mutation-queue.js";
import { resolveToCwd } from "./path-utils.js";
import { replaceFile } from "./replace-file.js";
import type { AgentTool, ToolDefinition } from "./types.js";
import { describeFsError, errorCode, throwIfAborted, toAgentTool } from "./util.js";
import { makeDirs } from "../make-dirs.js";

const writeSchema = Type.Object({
  path: Type.String({ description: "File to write, relative to the working directory or absolute" }),
  content: Type.String({ description: "The complete new content of the file" }),
});

export type WriteToolInput = Static<typeof writeSchema>;

/** Pluggable file writes, so extensions can target remote systems. */
export interface WriteOperations {
  writeFile: (absolutePath: string, content: string) => Promise<void>;
  /** Create a directory and its parents. */
  mkdir: (dir: string) => Promise<void>;
}

export interface WriteToolOptions {
  operations?: WriteOperations;
}

const localOperations: WriteOperations = {
  writeFile: replaceFile,
  mkdir: makeDirs,
};

export function createWriteToolDefinition(cwd: string, options: WriteToolOptions = {}): ToolDefinition<typeof writeSchema, undefined> {
  const ops = options.operations ?? localOperations;
  return {
    name: "write",
    label: "write",
    description: "Write a file with the given content, replacing it if it exists. Missing parent directories are created.",
    promptSnippet: "Create or overwrite files",
    // Strict-schema arguments where the provider offers them, as pi 1.6 declares its read, bash, edit and write.
    constrainedSampling: { type: "json_schema", strict: "prefer" },
    promptGuidelines: ["Use write only to create new files or to replace a file's entire content."],
    parameters: writeSchema,
    async execute(_toolCallId, params, signal) {
      throwIfAborted(signal);
      const absolutePath = resolveToCwd(params.path, cwd);
      // No abortable() race here: the queued operation must really finish
      // before the next mutation of this file starts.
      return withFileMutationQueue(absolutePath, async () => {
        throwIfAborted(signal);
        try {
          await ops.mkdir(dirname(absolutePath));
        } catch (error) {
          if (errorCode(error) === "EEXIST" || errorCode(error) === "ENOTDIR") {
            throw new Error(`Cannot create the parent directory of ${params.path}: a file with that name exists.`);
          }
          throw describeFsError(error, absolutePath, "write");
        }
        throwIfAborted(signal);
        try {
          await ops.writeFile(absolutePath, params.content);
        } catch (error) {
          throw describeFsError(error, absolutePath, "write");
        }
        // pi reports the string length here (not the UTF-8 size); kept identical
        // so transcripts match pi's.
        return {
          content: [{ type: "text", text: `Successfully wrote to ${params.path}` }],
          details: undefined,
        };
      });
    },
  };
}

export function createWriteTool(cwd: string, options?: WriteToolOptions): AgentTool<typeof writeSchema, undefined> {
  return toAgentTool(createWriteToolDefinition(cwd, options));
}
