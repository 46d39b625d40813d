/** Types of ./prebuilt.js (plain JavaScript: it runs before tsx is registered). */
export declare const CHECKOUT: string;
export declare const PREBUILT_DIR: string;
export declare const DASHBOARD_DIST: string;
export declare const PREBUILT_ENTRY: string;
export declare const PREBUILT_INPUTS: string;
/** The URL of the prebuilt entry in `dir` when every input it was built from is unchanged, else null. */
export declare function currentPrebuilt(dir?: string, checkout?: string, entry?: string): string | null;
/** The inputs.json text of a build made from `files` (relative to the checkout): each with its size and mtime now. */
export declare function inputsJson(files: Iterable<string>, checkout?: string): string;
