/** The line saying `dir` is not a folder of vectors, and the fix (`isDefault`: the shared folder's, not the command line's). */
export declare function missingVectorsMessage(dir: string, isDefault: boolean): string;
/** The folder to run (`arg`, or `<shared>/conformance/vectors`) and, when it is not a folder, the line to print (else null). */
export declare function vectorsFolder(arg: string | undefined): { dir: string; problem: string | null };
