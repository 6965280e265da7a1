/** Until {@link releaseLoadingSignals}, SIGINT or SIGTERM ends the process with one line (`<name>: interrupted by … while loading, …`), exit code 130 or 143. */
export declare function holdSignalsWhileLoading(name: string): void;
/** Removes the handlers of {@link holdSignalsWhileLoading}; nothing when none is held. */
export declare function releaseLoadingSignals(): void;
