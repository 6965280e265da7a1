/**
 * HTTP over a bare TCP socket, for requests no HTTP client sends (an unknown method, a broken head).
 */
import * as net from 'node:net';

/** Sends `raw` (latin1 bytes) on a new connection to 127.0.0.1:`port`; resolves with what came back (latin1) once the server closed it. */
export function sendRaw(port: number, raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(raw, 'latin1'));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}
