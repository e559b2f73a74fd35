import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { BIN } from '../helpers.js';
import { recordingGateways } from '../support/recording-gateways.js';
import type { Serve } from '../support/serve-process.js';
import { sayWhySkipped } from '../support/skip-reason.js';
import { SETTLE } from '../support/until.js';

// Two gateways in different pid namespaces (two containers on one machine) recording into one folder, at
// once. Each is pid 1 of its own namespace, so `<file>.json.<pid>@<start>` told them apart by the start
// tick alone, and a gateway's start took the other's partial cassette for one of its own namespace's
// pid 1 (itself, started at another tick): dead, and removed it while that stream was still being
// recorded. Now the writer's name carries its pid namespace (`<pid>@<start>~<pidns>`): the names differ
// whatever the pids and starts, and a writer of another namespace is left alone.
const { dir, ask, adopt } = recordingGateways('router-record-ns-');

const canUnshare = spawnSync('unshare', ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc', '--kill-child', 'true']).status === 0;

/** `router serve --record`-like gateway over the shared upstream, as pid 1 of a pid namespace of its own. */
async function serveInNamespace(args: string[], state: string, upRoot: string, upKey: string): Promise<{ g: Serve; stderr: () => string }> {
  const providers = join(dir, 'providers.yaml');
  writeFileSync(providers, `providers:\n  - { name: up, base_url: "${upRoot}/v1", api_key_env: UP_KEY, models: { test/m: local/lorem } }\n`);
  const child = spawn('unshare', ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, BIN, 'serve', '--port', '0', '--json', '--state', join(dir, state), '--providers', providers, ...args], {
    env: { ...process.env, UP_KEY: upKey, HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  let err = '';
  child.stderr.on('data', (c) => (err += c));
  const info = await new Promise<Serve['info']>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line));
    });
    void exited.then(() => reject(new Error(`serve exited before it listened: ${err}`)));
  });
  const g = { child, exited, info };
  adopt(g);
  return { g, stderr: () => err };
}

describe('two gateways of different pid namespaces recording into one folder', () => {
  it.skipIf(sayWhySkipped(!canUnshare, 'the pid-namespace test runs gateways under unshare --user --pid: needs unprivileged user namespaces'))(
    "name their partial cassettes apart, and neither's start removes the other's recording under way",
    async () => {
      const cassettes = join(dir, 'shared');
      // The upstream: a plain router serve of this process, reached by both namespaces over 127.0.0.1 (the network is shared).
      const { startEmulator } = await import('../../dist/emulator/server.js');
      const up = await startEmulator({ stateDir: join(dir, 'up-ns'), port: 0 });
      try {
        const upKey = up.store.firstKeys().apiKey;
        const holdOnUp = () => fetch(`${up.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${up.store.firstKeys().managementKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: ['held,after=1,times=1,path=/v1/chat/completions'] }) });
        const partials = () => readdirSync(cassettes).filter((f) => f.endsWith('.partial')).sort();

        const first = await serveInNamespace(['--record', cassettes], 'state-a', up.apiRoot, upKey);
        expect((await holdOnUp()).status).toBe(200);
        const a = (await ask(first.g)).body!.getReader();
        await a.read();
        await vi.waitFor(() => expect(partials()).toHaveLength(1), SETTLE);
        const [mine] = partials();

        // A second gateway, pid 1 of another namespace, starts recording into the folder while the first's stream is under way.
        const second = await serveInNamespace(['--replay', cassettes, '--record-missing'], 'state-b', up.apiRoot, upKey);
        expect((await holdOnUp()).status).toBe(200);
        const b = (await ask(second.g)).body!.getReader();
        await b.read();
        await vi.waitFor(() => expect(partials()).toHaveLength(2), SETTLE);
        // Before: "record: ….json.1@<start>.partial was a partial recording (its gateway was stopped mid-stream): removed".
        expect(second.stderr()).not.toContain('partial recording');
        expect(second.stderr()).toContain(`record: ${join(cassettes, mine!)} is a recording under way by another gateway (process 1 of another pid namespace)`);
        expect(existsSync(join(cassettes, mine!))).toBe(true);
        // Named by pid 1 of its namespace, its start, and that namespace (not this test's) of its namespace, its start, and that namespace (not this test's).
        const [, pid, ns] = /\.json\.(\d+)@\d+~(\d+)\.partial$/.exec(mine!) ?? [];
        expect(pid, mine).toBe('1');
        expect(ns).not.toBe(/\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))![1]);
        // Both recordings under way at once, each through a name of its own (both pid 1).
        const both = partials();
        expect(new Set(both).size).toBe(2);
        for (const f of both) expect(f).toMatch(/\.json\.1@\d+~\d+\.partial$/);
        expect(readFileSync(join(cassettes, mine!), 'utf8').split('\n').length).toBeGreaterThan(1);
        void a.cancel().catch(() => undefined);
        void b.cancel().catch(() => undefined);
      } finally {
        await up.close();
      }
    },
  );
});
