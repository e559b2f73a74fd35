import { once } from 'node:events';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { spawnServe, serveApi } from '../support/serve-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { closedStatus } from '../support/run-process.js';

// Ctrl-C is an interrupt for serve as for every command (130); SIGTERM is its stop request (0).
const dir = tempFolder('router-serve-signals-');

it.each([
  // Ctrl-C is the usual way to stop a server: said as a stop (it read "error: interrupted"), exit 130 kept.
  ['SIGINT', 130, 'router serve: stopped (Ctrl-C)\n'],
  ['SIGTERM', 0, ''],
] as const)('serve stopped by %s exits %i, its state let go', async (signal, code, stderr) => {
  const state = join(dir(), `state-${signal}`);
  const serve = await spawnServe(['--state', state]);
  let err = '';
  serve.child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  expect((await serveApi(serve, '/v1/models')).status).toBe(200);
  const exit = closedStatus(serve.child);
  serve.child.kill(signal);
  expect(await exit).toBe(code);
  expect(err).toBe(stderr);
  // The state folder is free for the next serve.
  const again = await spawnServe(['--state', state]);
  const gone = once(again.child, 'exit');
  again.child.kill('SIGTERM');
  expect((await gone)[0]).toBe(0);
});
