import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BIN } from '../helpers.js';

// Help names docs pages by their path in the installed package: under a deep install (nvm's
// ~/.nvm/versions/node/vXX/lib/node_modules/…) the path alone was wider than 80 columns (serve's was 86).
const checkout = resolve(BIN, '..', '..');
let top: string;
let bin: string;

beforeAll(() => {
  top = mkdtempSync(join(tmpdir(), 'router-deep-'));
  const pkg = join(top, 'home', 'someone-with-a-long-name', '.nvm', 'versions', 'node', 'v22.11.0', 'lib', 'node_modules', 'router-cli');
  mkdirSync(pkg, { recursive: true });
  for (const part of ['bin', 'dist', 'docs', 'package.json']) cpSync(join(checkout, part), join(pkg, part), { recursive: true });
  symlinkSync(join(checkout, 'node_modules'), join(pkg, 'node_modules'));
  bin = join(pkg, 'bin', 'router.cjs');
});
afterAll(() => rmSync(top, { recursive: true, force: true }));

it.each([['serve'], ['config'], ['login']])('%s --help fits 80 columns, each docs path whole once its pieces are joined', async (...words) => {
  const { spawnSync } = await import('node:child_process');
  const out = spawnSync(process.execPath, [bin, ...words, '--help'], { env: { ...process.env, HOME: top }, encoding: 'utf8' });
  expect(out.status).toBe(0);
  const help = out.stdout;
  expect(help).toContain('router-cli/');
  for (const line of help.split('\n')) if (!line.startsWith('Usage: ')) expect([...line].length, line).toBeLessThanOrEqual(80);
  // Each piece of a path broken after a "/" continues at its line's indent: joined, the whole path.
  const joined = help.replace(/\/\n +/g, '/');
  expect(joined).toMatch(/\/lib\/node_modules\/router-cli\/docs\/[\w-]+\.md/);
});
