/**
 * Text of a tool's or a server's, quoted cut, shows that it was cut: "…" at its end (the helper titles use), never
 * half an emoji. Was: chat -i's /tools printed each description's first 80 characters bare (a sentence stopping
 * mid-word read as whole), and a server's escape sequence in one raw to the terminal.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { typedRepl } from '../support/typed-repl.js';
import { cutText } from '../../src/internal/first-words.js';

const home = mkdtempSync(join(tmpdir(), 'router-quoted-cut-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { ROUTER_STATE_DIR: join(home, 'state'), ROUTER_CONFIG_DIR: join(home, 'config'), ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_PROFILE: '', ROUTER_MODEL: 'x/y', NO_COLOR: '1' };

it('chat -i /tools: a long description cut with "…", a short one whole, escapes shown escaped', async () => {
  const long = `Looks up the weather for a city, ${'with more words about it '.repeat(4)}END OF DESCRIPTION`;
  const tool = (name: string, description: string) => ({ type: 'function', function: { name, description, parameters: { type: 'object', properties: {} } }, command: 'echo ok' });
  const file = join(home, 'tools.json');
  writeFileSync(file, JSON.stringify([tool('weather', long), tool('short', 'Says ok.'), tool('escaped', 'Rings \x1b]0;pwned\x07 the bell'), tool('party', `${'🎉'.repeat(39)}x${'🎉'.repeat(10)}`)]));
  const { stderr } = await typedRepl(env, ['/tools'], { args: ['--tools', file] });
  const line = (name: string) => stderr.split('\n').find((l) => l.startsWith(`${name}  (`))!;
  expect(line('weather')).toMatch(/^weather {2}\(\S+\) {2}Looks up the weather for a city, .*…$/);
  expect(line('weather')).not.toContain('END OF');
  expect([...line('weather').slice(line('weather').indexOf('Looks'))].length).toBe(80);
  expect(line('short')).toMatch(/ {2}Says ok\.$/);
  expect(line('escaped')).toContain('Rings \\u001b]0;pwned\\u0007 the bell');
  expect(stderr).not.toContain('\x1b]0;');
  // Cut between pictures: never half of one (shown as �).
  expect(line('party')).toMatch(/(🎉){39}x…$/u);
  expect(line('party')).not.toContain('\ufffd');
});

it('cutText: the text whole within max, else its start and "…" in max characters, never half a pair', () => {
  expect(cutText('short', 10)).toBe('short');
  expect(cutText('0123456789abc', 10)).toBe('012345678…');
  expect(cutText(`${'a'.repeat(8)}🎉🎉`, 10)).toBe(`${'a'.repeat(8)}…`);
});
