import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ProfileFile } from '../../src/config/profile-file.js';
import { ProfileStore } from '../../src/config/profiles.js';

const saved = process.env.XDG_CONFIG_HOME;
const made: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'router-profiles-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
  else process.env.XDG_CONFIG_HOME = saved;
});

describe('ProfileFile (profiles read without conf)', () => {
  for (const where of ['the default folder', 'ROUTER_CONFIG_DIR']) {
    it(`reads what ProfileStore writes, from the same file (${where})`, () => {
      const root = tempDir();
      process.env.XDG_CONFIG_HOME = root;
      const dir = where === 'ROUTER_CONFIG_DIR' ? join(root, 'elsewhere') : undefined;
      expect(new ProfileFile(dir).current()).toBe('default');
      expect(new ProfileFile(dir).names()).toEqual([]);
      const store = new ProfileStore(dir);
      store.set('work', 'api_key', 'sk-rt-v1-0123456789');
      store.set('work', 'model', 'local/echo');
      store.set('home', 'api_root', 'http://127.0.0.1:9/api');
      store.use('work');
      const file = new ProfileFile(dir);
      expect(file.path).toBe(store.path);
      expect(file.path).toBe(dir ? join(dir, 'config.json') : join(root, 'router', 'config.json'));
      expect(file.current()).toBe(store.current());
      expect(file.names()).toEqual(store.names());
      for (const name of ['work', 'home', 'nope']) expect(file.get(name)).toEqual(store.get(name));
    });
  }

  it('a broken file is one error naming the file and the place, as ProfileStore says it', () => {
    const dir = tempDir();
    for (const text of ['{"current": ', '']) {
      writeFileSync(join(dir, 'config.json'), text);
      expect(() => new ProfileFile(dir)).toThrow(/config\.json is not valid JSON/);
    }
    writeFileSync(join(dir, 'config.json'), '{"current": ');
    let fromStore = '';
    try {
      new ProfileStore(dir);
    } catch (err) {
      fromStore = (err as Error).message;
    }
    const said = new RegExp(`^${join(dir, 'config.json')} is not valid JSON( \\(at position \\d+\\))?: fix it or move it away$`);
    expect(fromStore).toMatch(said);
    expect(() => new ProfileFile(dir)).toThrow(said);
  });

  it('valid JSON of another shape (edited by hand) is refused by readers and writers alike, and left as it was', () => {
    const dir = tempDir();
    const cases: [string, string][] = [
      ['[1]', 'not a JSON object'],
      ['{"current": 5}', '"current" is not a profile name'],
      ['{"profiles": "x"}', '"profiles" is not an object of profiles'],
      ['{"profiles": {"work": 5}}', 'profile "work" is not an object'],
      ['{"profiles": {"work": {"api_key": 5}}}', 'profile "work": api_key is not a string'],
    ];
    for (const [text, problem] of cases) {
      writeFileSync(join(dir, 'config.json'), text);
      const said = `${join(dir, 'config.json')} is not a router config (${problem}): fix it or move it away`;
      expect(() => new ProfileFile(dir)).toThrow(said);
      expect(() => new ProfileStore(dir)).toThrow(said);
      expect(readFileSync(join(dir, 'config.json'), 'utf8')).toBe(text);
    }
  });
});
