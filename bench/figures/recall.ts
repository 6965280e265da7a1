export async function runRecall(_o: unknown): Promise<never[]> { return []; }
