// `router serve` as its own process (for kill -9 and restarts): started with `--port 0 --json`, its
// keys and root read from the JSON line it prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from '../helpers.js';

export interface Serve {
  child: ChildProcess;
  exited: Promise<void>;
  info: { api_root: string; api_key: string; management_key: string; operator_key: string };
}

/** Starts `router serve --port 0 --json` with `args` after it; resolves once it listens. */
export async function spawnServe(args: string[], env: Record<string, string> = {}): Promise<Serve> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--json', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const info = await new Promise<Serve['info']>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then(() => reject(new Error('serve exited before it listened')));
  });
  return { child, exited, info };
}

/** A GET (no body) or POST to `path` under the root, with the API key unless another is given. */
export async function serveApi(g: Serve, path: string, body?: unknown, key = g.info.api_key): Promise<{ status: number; json: any }> {
  const res = await fetch(`${g.info.api_root}${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as any };
}
