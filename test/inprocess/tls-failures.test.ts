import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliEnvPerFile } from '../support/cli-env.js';

// An API root written https:// for a server that speaks plain http (the emulator's own): the handshake
// fails before anything is sent. It read as OpenSSL's text with its source file and line, "not retried:
// the service may have carried it out", and other commands tried it three times.
const run = cliEnvPerFile(() => {});
let server: Server;
let connections = 0;
const sockets = new Set<import('node:net').Socket>();
let root: string;
beforeAll(async () => {
  // Answers plain HTTP to whatever comes, as an http server does to a TLS hello.
  server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  root = `https://127.0.0.1:${(server.address() as { port: number }).port}/api`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((done) => server.close(() => done()));
});

it.each([
  ['chat', '--model', 'local/echo', 'hi'],
  ['models', '--refresh'],
])('router %s with an https:// root to a plain http server: said in words, nothing sent, tried once (exit 8)', async (...args) => {
  connections = 0;
  const r = await run([...args, '--api-root', root]);
  const host = new URL(root).host;
  expect(r).toMatchObject({ code: 8, stdout: '', stderr: `error: https to ${host} failed: the server there does not speak TLS (is its URL http://, not https://?); nothing was sent (the API root from --api-root)\n` });
  expect(connections).toBe(1);
});
