export interface LibraryModule {
  /** "." or "./utils/uuid". */
  readonly subpath: string;
  readonly file: string;
  load(): Promise<Record<string, unknown>>;
}
export declare function packageDir(name: string): string;
export declare function valueKind(value: unknown): string;
export declare function libraryModules(name: string): Promise<LibraryModule[]>;
