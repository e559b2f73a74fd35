import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers.js';

// `router serve --record /proc/x` spun for ever in node 20's recursive mkdir (ENOENT, then EEXIST for
// /proc, again and again; SIGTERM never handled), and `--record /proc` started and then failed every
// cassette's write; `--state /proc` said "cannot use <the lock's text>". Now each folder serve writes
// into is made and written once at start: a place it cannot write is one line, exit 2.
const dir = mkdtempSync(join(tmpdir(), 'router-serve-unwritable-'));
const providers = join(dir, 'gateway.yaml');
writeFileSync(providers, 'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: m } }\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** serve with these flags; killed (and so failing the test) if it neither exits nor listens within a bound far above a start's. */
function serve(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--state', join(dir, 'state'), '--providers', providers, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const bound = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('exit', (code) => (clearTimeout(bound), resolve({ code, stdout, stderr }))));
}

describe.runIf(process.platform === 'linux')('serve refuses folders it cannot write, at start', () => {
  it('--record under /proc: one line, exit 2, instead of spinning', async () => {
    const got = await serve('--record', '/proc/router-cassettes');
    expect(got).toMatchObject({ code: 2, stdout: '' });
    expect(got.stderr).toMatch(/^error: --record \/proc\/router-cassettes: cannot make \/proc\/router-cassettes: [^\n]+\n$/);
  });

  it('--record /proc (a folder that exists): refused before it listens', async () => {
    const got = await serve('--record', '/proc');
    expect(got).toMatchObject({ code: 2, stdout: '' });
    expect(got.stderr).toMatch(/^error: --record \/proc: cannot write there: [^\n]+\n$/);
  });

  it('--state /proc: named as the folder, not the lock text', async () => {
    const got = await serve('--state', '/proc');
    expect(got).toMatchObject({ code: 2, stdout: '' });
    expect(got.stderr).toMatch(/^error: --state \/proc: cannot write there: [^\n]+\n$/);
  });
});
