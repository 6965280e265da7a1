/** Runs a Node.js child process to its end and collects what it printed, for the command-line tests. */
import { spawn } from 'node:child_process';

/** What a finished process printed and its exit code (`null` when a signal ended it). */
export interface FinishedRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node <args>` (this process's Node) in `cwd` with exactly `env`; resolves when it has exited.
 * @throws Error (rejects) when the process cannot be started.
 */
export function runNode(args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<FinishedRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...args], { cwd: options.cwd, env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
