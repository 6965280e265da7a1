/**
 * A token-counting worker entry for tests (`TokenCountingPool` option `workerFile`): its loading
 * is held until the file named by `TOKEN_COUNTING_HELD_START` exists (checked every 10 ms; not
 * set: not held), standing in for a thread that starts slowly on a busy machine; then it is the
 * real worker (`token-counting-tasks`).
 */
import * as fs from 'node:fs';

const gate = process.env.TOKEN_COUNTING_HELD_START;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
while (gate && !fs.existsSync(gate)) Atomics.wait(sleeper, 0, 0, 10);

export { default } from '../token-counting-tasks';
