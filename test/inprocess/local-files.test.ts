import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';

// The files router keeps are read with a bound, and only when regular files: a role or a config that
// is a link to /dev/zero grew memory at 125 MB/s, deaf to Ctrl-C; a FIFO held the command. And a role
// whose YAML is an alias bomb is a usage error naming the file, not "internal error".
const home = mkdtempSync(join(tmpdir(), 'router-local-files-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
let n = 0;
function configDir(): string {
  const dir = join(home, `config-${++n}`);
  mkdirSync(join(dir, 'roles'), { recursive: true });
  return dir;
}
const env = (dir: string) => ({ ROUTER_CONFIG_DIR: dir, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_PROFILE: '', ROUTER_NO_LOG: '1', ROUTER_STATE_DIR: join(home, 'state') });
const chatAs = (dir: string) => runInProcess(['--max-retries', '0', 'chat', '--model', 'x/y', '--role', 'r', 'hi'], { env: env(dir) });

describe('a role file that is not a regular file of a bounded size', () => {
  it('a link to /dev/zero: exit 2, naming the file, nothing read', async () => {
    const dir = configDir();
    symlinkSync('/dev/zero', join(dir, 'roles', 'r.md'));
    const r = await chatAs(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: role file ${join(dir, 'roles', 'r.md')}: cannot read it (not a regular file (a device, a FIFO or a socket))\n`);
  });

  it('a FIFO no one writes to: exit 2 at once, no wait', async () => {
    const dir = configDir();
    execFileSync('mkfifo', [join(dir, 'roles', 'r.md')]);
    const r = await chatAs(dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot read it \(not a regular file/);
  });

  it('over 16 MiB: exit 2', async () => {
    const dir = configDir();
    const path = join(dir, 'roles', 'r.md');
    writeFileSync(path, 'x');
    truncateSync(path, 17 * 1024 * 1024);
    const r = await chatAs(dir);
    expect(r).toMatchObject({ code: 2, stderr: `error: role file ${path}: cannot read it (too large)\n` });
  });
});

describe('a config file that is a link to /dev/zero', () => {
  it('is exit 2, naming the file', async () => {
    const dir = configDir();
    symlinkSync('/dev/zero', join(dir, 'config.json'));
    const r = await runInProcess(['config', 'get', 'model'], { env: env(dir) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: config file .*config\.json: cannot read it \(not a regular file/);
  });
});

describe('a role whose YAML is an alias bomb', () => {
  it('is a damaged file named (exit 1, as every file router keeps), not an internal error', async () => {
    const dir = configDir();
    const path = join(dir, 'roles', 'r.md');
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
    writeFileSync(path, `---\n${levels.join('\n')}\n---\nYou are terse.\n`);
    const r = await chatAs(dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^error: ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged \\(.*alias`, 'i'));
    expect(r.stderr).not.toMatch(/internal error/);
  });
});
