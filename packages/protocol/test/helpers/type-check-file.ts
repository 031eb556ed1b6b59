import path from "node:path";
import ts from "typescript";

/**
 * Type-checks one test file with the package's compiler options and returns the diagnostics as
 * text ("" when it compiles). vitest does not type-check, so a `*.types.test.ts` runs this on itself.
 */
export function typeCheckFile(file: string): string {
  const packageDir = path.resolve(path.dirname(file), "..");
  const configPath = path.join(packageDir, "tsconfig.json");
  const read = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, packageDir);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    composite: false,
    declaration: false,
    declarationMap: false,
    sourceMap: false,
    incremental: false,
    tsBuildInfoFile: undefined,
    rootDir: undefined,
    outDir: undefined,
  };
  const program = ts.createProgram([file], options);
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => packageDir,
    getNewLine: () => "\n",
  });
}
