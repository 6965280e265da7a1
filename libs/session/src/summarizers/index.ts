/**
 * Summarizers (DESIGN §3.7): the {@link Summarizer} port, the OpenAI-compatible and extractive
 * implementations, and {@link summarizerFromEnv}, which picks one from the environment.
 */
export * from './summarizer';
export * from './openai-summarizer';
export * from './extractive-summarizer';
export * from './summarizer-config';
