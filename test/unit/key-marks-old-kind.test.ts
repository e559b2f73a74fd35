import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { markedKeysIn, readKeyMark } from '../../src/internal/key-marks.js';
import { keepKeyMark } from '../../src/config/key-mark-kept.js';

// A key mark written by an older router kept the key's first words as its kind (`sk-proj-ab3_` of
// `sk-proj-ab3_Xy9…`: `ab3_` is the key's own). Read, its kind is the known one; the next time the key is
// read from the keychain to be sent, the profile's mark is made anew, without the key's words.
const KEY = 'sk-proj-ab3_Xy9-Qw_0123456789abcdefGHIJKLmnopqrstuvWXYZ';
const SALT = '0f'.repeat(16);
const OLD = `sha256:${KEY.length}:sk-proj-ab3_:${SALT}:${createHash('sha256').update(SALT).update(KEY).digest('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'router-old-mark-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a key mark written with an older router\'s kind', () => {
  it('is read with the known kind, and still finds its key', () => {
    const mark = readKeyMark(OLD)!;
    expect(mark.kind).toBe('sk-proj-');
    expect(markedKeysIn(`a ${KEY} b`, [mark])).toEqual([KEY]);
  });

  it('is made anew in the profile when the key is next read from the keychain', async () => {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ current: 'work', profiles: { work: { api_key_keychain: 'work/api_key', api_key_keychain_mark: OLD } } }), { mode: 0o600 });
    await keepKeyMark('work', 'api_key', 'work/api_key', KEY, { ...process.env, ROUTER_CONFIG_DIR: dir });
    const kept = (JSON.parse(readFileSync(file, 'utf8')) as { profiles: { work: { api_key_keychain_mark: string } } }).profiles.work.api_key_keychain_mark;
    expect(kept).not.toContain('ab3_');
    expect(kept.split(':')[2]).toBe('sk-proj-');
    expect(markedKeysIn(`x ${KEY}`, [readKeyMark(kept)!])).toEqual([KEY]);
  });
});
