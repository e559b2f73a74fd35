// hideFromEnviron writes over the process's own memory: it runs in a child with an environment made for each case.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const MODULE = resolve(import.meta.dirname, '../../src/internal/hide-from-environ.ts');

/** Runs `before` (code), hides `secrets`, and gives back process.env before and after and the /proc/self/environ that is left. */
function hideIn(env: Record<string, string>, secrets: string[], before = '') {
  const script = `import(${JSON.stringify(MODULE)}).then(({ hideFromEnviron }) => {
    ${before}
    const was = { ...process.env };
    const ok = hideFromEnviron(${JSON.stringify(secrets)});
    const environ = require('node:fs').readFileSync('/proc/self/environ', 'utf8').split('\\0').filter(Boolean);
    console.log(JSON.stringify({ ok, was, now: { ...process.env }, environ }));
  })`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', env: { PATH: process.env.PATH!, ...env } });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { ok: boolean; was: Record<string, string>; now: Record<string, string>; environ: string[] };
}

describe.skipIf(process.platform !== 'linux')('hideFromEnviron', () => {
  it('writes over a key wherever it is a value or a part of one, and the process still reads every variable as it was', () => {
    const key = 'sk-or-v1-0123456789abcdef';
    const r = hideIn({ ROUTER_API_KEY: key, AUTH: `Bearer ${key};x`, OTHER: 'kept' }, [key]);
    expect(r.ok).toBe(true);
    expect(r.now).toEqual(r.was);
    expect(r.environ.join('\n')).not.toContain(key);
    expect(r.environ).toEqual(expect.arrayContaining([`ROUTER_API_KEY=${'*'.repeat(key.length)}`, `AUTH=Bearer ${'*'.repeat(key.length)};x`, 'OTHER=kept', `PATH=${process.env.PATH}`]));
  });

  it('leaves a name that holds the key alone (was: ROUTER_API_ROOT renamed **********_ROOT, the root lost)', () => {
    const r = hideIn({ ROUTER_API_KEY: 'ROUTER_API', ROUTER_API_ROOT: 'http://127.0.0.1:9/api/v1' }, ['ROUTER_API']);
    expect(r.now).toEqual(r.was);
    expect(r.now.ROUTER_API_ROOT).toBe('http://127.0.0.1:9/api/v1');
    expect(r.environ).toEqual(expect.arrayContaining(['ROUTER_API_KEY=**********', 'ROUTER_API_ROOT=http://127.0.0.1:9/api/v1']));
  });

  it('keeps what the process changed before: a variable set anew, one deleted, one added', () => {
    const key = 'sk-or-v1-fedcba9876543210';
    const r = hideIn({ ROUTER_API_KEY: key, GONE: key, CHANGED: key }, [key], `process.env.CHANGED = 'new ${key}'; delete process.env.GONE; process.env.ADDED = '${key}';`);
    expect(r.now).toEqual(r.was);
    expect(r.now).toMatchObject({ ROUTER_API_KEY: key, CHANGED: `new ${key}`, ADDED: key });
    expect(r.environ.join('\n')).not.toContain(key);
  });
});
