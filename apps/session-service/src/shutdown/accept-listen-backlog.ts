import type * as net from 'node:net';
import { eventLoopPolled } from './event-loop-polled';

/**
 * Lets `server` accept the connections waiting in its listen backlog (completed by the kernel, not yet
 * accepted), so that closing its port next does not reset them: a client may have sent its request on
 * such a connection already, and a reset leaves it not knowing whether the request ran. Node accepts one
 * connection per poll of the event loop, so this lets it poll (rounds of {@link eventLoopPolled}: one or
 * two polls each) until a round accepts none, at most `maxRounds` rounds (a client opening connections
 * without pause cannot hold the port open longer).
 * @returns how many connections were accepted meanwhile.
 */
export async function acceptListenBacklog(server: net.Server, maxRounds = 1024): Promise<number> {
  let accepted = 0;
  const count = (): void => {
    accepted++;
  };
  server.on('connection', count);
  try {
    for (let round = 0; round < maxRounds; round++) {
      const before = accepted;
      await eventLoopPolled();
      if (accepted === before) break;
    }
  } finally {
    server.off('connection', count);
  }
  return accepted;
}
