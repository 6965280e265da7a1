/**
 * The script of a child process (`node -e READER <url> <n>`) that GETs one URL `n` times, one after
 * the other, so a bench's reads come from another process than the service it observes.
 */

/** Sequential GETs of one path; prints 'start' once warmed up, then one JSON line with each read's wall ms. */
export const READER = `
const [url, n] = [process.argv[1], Number(process.argv[2])];
(async () => {
  await (await fetch(url.replace(/\\/v1\\/.*/, '/health'))).arrayBuffer();
  process.stdout.write('start\\n');
  const ms = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(url);
    const body = await res.arrayBuffer();
    if (res.status !== 200) throw new Error('status ' + res.status);
    ms.push(performance.now() - t);
    bytes = body.byteLength;
  }
  process.stdout.write(JSON.stringify({ ms, bytes }) + '\\n');
})();
`;
