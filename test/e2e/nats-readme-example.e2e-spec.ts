/**
 * The first NATS example of docs/nats.md (the `ts` block after `<!-- readme-test: typecheck and run over
 * NATS -->`), type-checked and run as pasted (its prefix, server and top-level await adapted) against
 * the service on the machine's NATS server. Newcomer ncnatsops F5: the example read answers with a
 * plain `nc.subscribe` on the results subject, which misses an answer published while the client
 * reconnects (25 and 96 of 6,000 in two runs); the results stream holds them all. Here the
 * example's connection goes through a TCP proxy that is cut after it sent its command and before the
 * service answers, and mended once the answer is stored: the example still prints the answer, then
 * the decision. With the plain subscription it waited for ever.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as ts from 'typescript';
import { useService } from '../support/service-harness';
import { documentedBlocks } from '../support/readme-blocks';
import { describeWithNats, eventually, uniquePrefix, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { natsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(120_000);

const prefix = uniquePrefix();
const names = natsNames(prefix);

/** A TCP forwarder to the NATS server that can cut every connection and refuse new ones for a while. */
async function cuttableProxy(target: string): Promise<{ url: string; cut(): void; mend(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  let refusing = false;
  const server = net.createServer((client) => {
    if (refusing) return void client.destroy();
    const upstream = net.connect(Number(port) || 4222, hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined).on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `nats://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut() {
      refusing = true;
      for (const s of sockets) s.destroy();
    },
    mend() {
      refusing = false;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The documented block as a CommonJS script: its imports, then the rest in an async function (top-level await); `replace` applied. */
function asScript(code: string, replace: (text: string) => string): string {
  const lines = replace(code).split('\n');
  const imports = lines.filter((l) => l.startsWith('import '));
  const body = lines.filter((l) => !l.startsWith('import '));
  return [...imports, 'void (async () => {', ...body, '})().catch((err) => { console.error(err); process.exit(1); });', ''].join('\n');
}

describeWithNats('NATS README example')('the first NATS example of docs/nats.md', () => {
  const harness = useService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix } });
  const nats = useNatsSuite('NATS README example', { quiet: true, prefixes: [prefix] });
  const file = path.join(__dirname, `.nats-readme-example-${process.pid}.ts`);
  let child: ChildProcess | null = null;

  afterAll(async () => {
    child?.kill('SIGKILL');
    fs.rmSync(file, { force: true });
    await harness.stop();
    await nats.close();
    jest.restoreAllMocks();
  });

  it('reads the answers from the results stream, so it gets one published while its connection is cut, then the decision', async () => {
    const blocks = documentedBlocks().filter((b) => b.marker === 'typecheck and run over NATS');
    expect(blocks.map((b) => [b.file, b.heading])).toEqual([['docs/nats.md', 'Commands and decisions over NATS JetStream']]);
    const [block] = blocks;
    // The first thing it says about answers: read them from the stream, not with a plain subscription.
    expect(block.code).not.toMatch(/nc\.subscribe\(/);

    const proxy = await cuttableProxy(NATS_TEST_URL);
    try {
      const script = asScript(block.code, (text) =>
        text.replaceAll('nats://127.0.0.1:4222', proxy.url).replaceAll('compaction.', `${prefix}.`).replaceAll('COMPACTION_', `${prefix.toUpperCase()}_`),
      );
      fs.writeFileSync(file, script);
      const config = ts.getParsedCommandLineOfConfigFile(
        path.join(__dirname, '..', '..', 'tsconfig.json'),
        {},
        { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
      );
      const program = ts.createProgram([file], { ...config!.options, noEmit: true, noUnusedLocals: false });
      expect(ts.getPreEmitDiagnostics(program).map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)).toEqual([]);

      // A session to compact; the service then stops, so the command waits in the stream.
      const h = harness;
      const turns = Array.from({ length: 4 }, (_, i) => [
        { id: `u${i}`, type: 'user', text: `question ${i}` },
        { id: `a${i}`, type: 'assistant', text: `answer ${i}` },
      ]).flat();
      await h.http().post('/v1/sessions/demo/events').send({ events: turns }).expect(201);
      await h.stop();

      let stdout = '';
      let stderr = '';
      child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', file], {
        cwd: path.join(__dirname, '..', '..'),
      });
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      await eventually(
        async () => (await nats.client.jsm.streams.info(names.commandStream)).state.messages === 1,
        60_000,
        `the example's command in the command stream (${stderr})`,
      );
      // The example's connection cut: the answer is published while it reconnects.
      proxy.cut();
      await h.start();
      await eventually(async () => (await nats.client.jsm.streams.info(names.resultStream)).state.messages === 1, 20_000, 'the answer stored');
      proxy.mend();
      await eventually(() => /^200 \{[^]*outcome: 'compacted'/m.test(stdout), 30_000, `the example to print the answer (stdout: ${stdout}; stderr: ${stderr})`);
      await eventually(() => /type: 'CompactionCompleted'/.test(stdout), 30_000, `the example to print the decision (${stdout})`);
    } finally {
      child?.kill('SIGKILL');
      await proxy.close();
    }
  });
});
