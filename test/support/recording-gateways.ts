// Gateways (`router serve --providers`, each its own process) in front of one in-process `router serve`
// upstream, all in one temp folder: for the record/replay tests that kill -9 a gateway mid-stream.
// Every gateway a test started is killed after it; the upstream and the folder go after the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { startEmulator, type Emulator } from '../../dist/emulator/server.js';
import { spawnServe, type Serve } from './serve-process.js';

export const STREAMED_ASK = { model: 'test/m', stream: true, max_tokens: 200, messages: [{ role: 'user', content: 'write 150 words about tides' }] };

/** The `data:` payloads of an SSE text, [DONE] included. */
export const payloads = (text: string) => text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));

export function recordingGateways(prefix: string, providerLine = '') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const started: { g: Serve; stderr: () => string }[] = [];
  let upstream: Emulator | undefined;
  afterEach(async () => {
    for (const { g } of started.splice(0)) {
      if (g.child.exitCode === null && g.child.signalCode === null) g.child.kill('SIGKILL');
      await g.exited;
    }
  });
  afterAll(async () => {
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const startUpstream = async () => (upstream ??= await startEmulator({ stateDir: join(dir, 'upstream'), port: 0 }));

  /** A gateway over the upstream as provider `up` (model test/m), `args` after `--providers`. */
  async function serve(args: string[], state: string) {
    const up = await startUpstream();
    const providers = join(dir, 'providers.yaml');
    writeFileSync(providers, `providers:\n  - { name: up, base_url: "${up.apiRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/lorem }${providerLine} }\n`);
    const g = await spawnServe(['--state', join(dir, state), '--providers', providers, ...args], { UP_KEY: up.store.firstKeys().apiKey, HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg') });
    let err = '';
    g.child.stderr!.on('data', (c) => (err += c));
    const s = { g, stderr: () => err };
    started.push(s);
    return s;
  }

  /** The upstream's next chat stream sends its first KiB, then holds the rest. */
  async function holdNextStream() {
    const up = await startUpstream();
    return fetch(`${up.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${up.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: ['held,after=1,times=1,path=/v1/chat/completions'] }) });
  }

  const ask = (g: Serve, body: object = STREAMED_ASK) =>
    fetch(`${g.info.api_root}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${g.info.api_key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  return { dir, serve, ask, holdNextStream, adopt: (g: Serve) => started.push({ g, stderr: () => '' }) };
}
