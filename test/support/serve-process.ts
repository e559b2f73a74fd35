// `router serve` as its own process (for kill -9 and restarts): started with `--port 0 --json`, its
// keys and root read from the JSON line it prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import { startEmulator } from '../../dist/emulator/server.js';
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

/** Kills `g` with -9 unless it has ended, and resolves once it has exited. */
export async function killedServe(g: Serve): Promise<void> {
  if (g.child.exitCode === null && g.child.signalCode === null) g.child.kill('SIGKILL');
  await g.exited;
}

/**
 * Call at a file's top level: returns spawnServe for the file's tests, each gateway it starts killed -9 after its test
 * (a test that fails before its own kill leaves no server running).
 */
export function servesKilledAfterEach(): (args: string[], env?: Record<string, string>) => Promise<Serve> {
  const started: Serve[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map(killedServe));
  });
  return async (args, env = {}) => {
    const g = await spawnServe(args, env);
    started.push(g);
    return g;
  };
}

/** The state in `state` as the next start reads it (after a kill): the default workspace's usage, and its generations. */
export async function stateAtNextStart(state: string): Promise<{ usage: number; generations: Record<string, unknown>[] }> {
  const next = await startEmulator({ stateDir: state, port: 0 });
  try {
    return { usage: next.store.workspace('default').total_usage, generations: [...next.store.allGenerations()].filter((g) => g.workspace === 'default').map((g) => g.data) };
  } finally {
    await next.close();
  }
}
