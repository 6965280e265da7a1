export async function runMemory(_o: unknown): Promise<never[]> { return []; }
