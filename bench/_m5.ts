import { startService } from '../test/support/service-harness';
function adversarialText(length: number): string {
  let x = 1; let text = '';
  const units: number[] = [];
  for (let i = 0; i < length; i++) { x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff; units.push(0x4e00 + ((x >> 8) % 20000)); }
  for (let i = 0; i < length; i += 8192) text += String.fromCharCode(...units.slice(i, i + 8192));
  return text;
}
(async () => {
  const h = await startService({ env: { MAX_BODY_BYTES: String(8 * 1024 * 1024) } });
  const n = Number(process.argv[2] ?? 100000);
  const text = adversarialText(n);
  for (let i=0;i<3;i++){ const s = performance.now(); await h.http().get("/health"); console.log("before", (performance.now()-s).toFixed(0)); }
  const t0 = performance.now(); let done = false;
  const p = h.http().post('/v1/sessions/adv/events').send({ events: [{ id: 'big', type: 'user', text }] }).then(r => { done = true; console.log('append', r.status, (performance.now()-t0).toFixed(0)); });
  while (!done) { const s = performance.now(); const r = await h.http().get('/health'); console.log('health', r.status, (performance.now()-s).toFixed(0), 'at', (performance.now()-t0).toFixed(0)); await new Promise(r => setTimeout(r, 50)); }
  await p;
  for (let i=0;i<5;i++){ const s = performance.now(); await h.http().get('/health'); console.log('after', (performance.now()-s).toFixed(0)); await new Promise(r => setTimeout(r, 200)); }
  await h.stop(); process.exit(0);
})();
