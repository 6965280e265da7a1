export async function runTokenizers(_o: unknown): Promise<never[]> { return []; }
