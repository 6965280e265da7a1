import * as net from 'node:net';
import { acceptListenBacklog } from './accept-listen-backlog';

describe('acceptListenBacklog', () => {
  it('given 40 connections completed by the kernel and not yet accepted, when the port closes after it, then each is answered and none reset', async () => {
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.on('data', () => socket.end('answered'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const sockets = Array.from({ length: 40 }, () => net.connect(port, '127.0.0.1'));
    const outcomes = sockets.map(
      (socket) =>
        new Promise<string>((resolve) => {
          let text = '';
          socket.on('data', (d: Buffer) => (text += d.toString()));
          socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
          socket.on('close', () => resolve(text));
          socket.write('request');
        }),
    );
    // the connect() calls run on the next tick; no poll of the event loop has accepted any of them yet
    await new Promise((resolve) => process.nextTick(resolve));
    const accepted = await acceptListenBacklog(server);
    server.close();
    expect(accepted).toBe(40);
    expect(await Promise.all(outcomes)).toEqual(Array.from({ length: 40 }, () => 'answered'));
  });

  it('stops after maxRounds rounds (one or two polls each) while connections are still waiting', async () => {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const sockets = Array.from({ length: 10 }, () => net.connect(port, '127.0.0.1').on('error', () => undefined));
    await new Promise((resolve) => process.nextTick(resolve));
    const accepted = await acceptListenBacklog(server, 3);
    expect(accepted).toBeGreaterThanOrEqual(3);
    expect(accepted).toBeLessThanOrEqual(6);
    server.close();
    for (const socket of sockets) socket.destroy();
  });
});
