/** Absolute path of the team's shared folder (`<repo>/../shared`, or `SHARED_DIR` in `env`); it may not exist. */
export declare function sharedDirLocation(env?: NodeJS.ProcessEnv): string;
