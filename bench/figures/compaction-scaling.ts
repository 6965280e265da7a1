export async function runCompactionScaling(_o: unknown): Promise<never[]> { return []; }
