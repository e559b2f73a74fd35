import { spawn } from 'node:child_process';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitBound } from './until.js';
import { childPort } from './upstreams.js';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const OPENAPI = resolve(root, '..', 'shared', 'reference', 'openrouter-openapi.yaml');
const PRISM = join(root, 'node_modules', '.bin', 'prism');

/** Stoplight Prism mocking the official OpenAPI on 127.0.0.1, and proxies in front of it that a test shapes. */
export interface PrismUpstream {
  url: string;
  /** A proxy of the test's own before Prism (or anything): its URL. Closed with the rest. */
  listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string>;
  /** The request on to Prism with `extra` headers; `answer` gets Prism's answer, `failed` a failed request. */
  toPrism(req: IncomingMessage, extra: Record<string, string>, answer: (r: IncomingMessage) => void, failed?: () => void): void;
  close(): void;
}


/** Prism started and answering (its `/credits` example), within the hook's bound. */
export async function startPrism(): Promise<PrismUpstream> {
  const port = await childPort();
  const prism = spawn(PRISM, ['mock', '-h', '127.0.0.1', '-p', String(port), OPENAPI], { stdio: 'ignore' });
  const proxies: Server[] = [];
  const close = () => {
    prism.kill('SIGKILL');
    for (const p of proxies) {
      p.closeAllConnections();
      p.close();
    }
  };
  for (const end = Date.now() + waitBound(); ; ) {
    if (await fetch(`http://127.0.0.1:${port}/credits`, { headers: { authorization: 'Bearer x' } }).then((r) => r.ok, () => false)) break;
    if (prism.exitCode !== null || Date.now() > end) {
      close();
      throw new Error(`prism did not start within the hook's bound (exit ${prism.exitCode})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    async listen(handler) {
      const server = createServer(handler);
      proxies.push(server);
      await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    toPrism(req, extra, answer, failed = () => undefined) {
      const up = request({ host: '127.0.0.1', port, path: req.url!, method: req.method, headers: { ...req.headers, ...extra } }, answer);
      up.on('error', failed);
      req.pipe(up);
    },
    close,
  };
}
