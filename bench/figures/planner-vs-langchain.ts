export async function runPlannerVsLangChain(_o: unknown): Promise<never[]> { return []; }
