/**
 * HTTP clients run outside the test's process (curl, a Node script), for the specs that check what
 * a real client is told before or while it uploads a body (`Expect: 100-continue`, early 401/413
 * answers, lingering close): the test's own event loop then cannot hide a reset or a stall.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';

/** Debian's curl; specs using {@link curlPostFile} skip when it is absent. */
export const CURL = '/usr/bin/curl';

/** True when {@link CURL} exists. */
export function hasCurl(): boolean {
  return fs.existsSync(CURL);
}

/** What curl reported: the answer's body (text), `"<status> <bytes uploaded>"`, and its verbose trace (stderr). */
export interface CurlUpload {
  body: string;
  statusAndUpload: string;
  trace: string;
}

/**
 * POSTs the file at `file` as `Content-Type: application/json` to `url` with curl, sending
 * `Expect: 100-continue` (as curl does for large bodies) plus `headers` (`Name: value` strings).
 * @throws Error when curl fails (exit status not 0), with its stderr
 */
export function curlPostFile(url: string, file: string, headers: string[] = []): Promise<CurlUpload> {
  const headerArgs = ['Content-Type: application/json', 'Expect: 100-continue', ...headers].flatMap((h) => ['-H', h]);
  const args = ['-sS', '-v', '-X', 'POST', ...headerArgs, '--data-binary', `@${file}`, '-w', '\n%{http_code} %{size_upload}', url];
  return new Promise((resolve, reject) =>
    execFile(CURL, args, (error, out, err) => {
      if (error) return reject(new Error(`${error.message}\n${err}`));
      const cut = out.lastIndexOf('\n');
      resolve({ body: out.slice(0, cut), statusAndUpload: out.slice(cut + 1), trace: err });
    }),
  );
}

/**
 * Runs `script` (JavaScript source) in a new Node process with `args` as `process.argv.slice(1)`,
 * and resolves with the one JSON line it printed, parsed (output up to 1 MiB).
 * @throws Error when the process fails, with its stderr
 */
export function nodeProcess(script: string, args: string[]): Promise<unknown> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script, ...args], { maxBuffer: 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    ),
  );
}
