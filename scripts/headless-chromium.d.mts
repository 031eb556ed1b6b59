import type { Browser, BrowserType } from "playwright-core";

export declare const CHROMIUM: string;
export declare const CHROMIUM_ARGS: readonly string[];
export declare function launchChromium(chromium: BrowserType): Promise<Browser>;
