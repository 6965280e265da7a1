import { ServiceMetrics } from './metrics';

describe('duration histograms', () => {
  it('have buckets past 10 s, for reads waiting MAX_WAIT_MS, counting timeouts (30 s), request timeouts (60 s) and NATS commands held minutes', async () => {
    const metrics = new ServiceMetrics();
    metrics.registerNatsMetrics();
    metrics.httpDuration.observe({ method: 'GET', route: '/x', status: '200' }, 45);
    metrics.natsCommandDuration.observe({ kind: 'append', outcome: 'ok' }, 100);
    const text = await metrics.registry.metrics();
    const bounds = (name: string): string[] => [...text.matchAll(new RegExp(`^${name}_bucket\\{.*le="([^"]+)".*\\} `, 'gm'))].map((m) => m[1]);
    for (const name of ['http_request_duration_seconds', 'nats_command_duration_seconds'])
      expect(bounds(name)).toEqual([
        '0.001',
        '0.0025',
        '0.005',
        '0.01',
        '0.025',
        '0.05',
        '0.1',
        '0.25',
        '0.5',
        '1',
        '2.5',
        '5',
        '10',
        '30',
        '60',
        '120',
        '+Inf',
      ]);
    // 45 s falls in the 60 s bucket (it was only told apart from +Inf past 10 s)
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="30",method="GET",route="\/x",status="200"\} 0$/m);
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="60",method="GET",route="\/x",status="200"\} 1$/m);
  });
});
