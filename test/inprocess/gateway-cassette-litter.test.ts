import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { answersHi, localUpstream, type LocalUpstream } from '../support/upstreams.js';

// A cassette folder is there to be edited by hand. Emacs, while a cassette's buffer is changed, keeps a lock
// beside it (`.#name.json`, a symlink to `user@host.pid`, which names no file), and macOS on a shared volume
// writes `._name.json` (binary) beside each file: before, `--replay` refused to start ("cassette
// .#up-m-….json is not JSON: ENOENT"). A link to nowhere named as a cassette was said to be no JSON: it is
// said to be unreadable.
let dir: string;
let up: LocalUpstream;
let file: string;
const yaml = (url: string) => parseProviders(`providers:\n  - { name: up, base_url: "${url}", models: { t/m: m } }\n`, {});
const ask = (apiRoot: string, key: string) =>
  fetch(`${apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 't/m', messages: [{ role: 'user', content: 'hi' }] }) });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-cassette-litter-'));
  up = await localUpstream(answersHi);
  const e = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: yaml(up.baseUrl), cassettes: { dir: join(dir, 'recorded'), mode: 'record' } } });
  try {
    expect((await ask(e.apiRoot, e.store.firstKeys().apiKey)).status).toBe(200);
  } finally {
    await e.close();
  }
  [file] = readdirSync(join(dir, 'recorded'));
});

afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The recording in a folder of its own with `litter` beside it, replayed: its answer's status, or the start's error. */
async function replayWith(name: string, litter: (folder: string) => void): Promise<number | string> {
  const folder = join(dir, name);
  cpSync(join(dir, 'recorded'), folder, { recursive: true });
  litter(folder);
  try {
    const e = await startEmulator({ stateDir: join(dir, `state-${name}`), port: 0, gateway: { config: yaml('http://127.0.0.1:9/v1'), cassettes: { dir: folder, mode: 'replay', timing: 0 } } });
    try {
      const res = await ask(e.apiRoot, e.store.firstKeys().apiKey);
      await res.text();
      return res.status;
    } finally {
      await e.close();
    }
  } catch (err) {
    return (err as Error).message;
  }
}

describe('a cassette folder with what editors and file systems leave in it', () => {
  it("Emacs's lock of a cassette being edited is no cassette: the folder replays", async () => {
    expect(await replayWith('emacs', (folder) => symlinkSync('someone@host.4242:1700000000', join(folder, `.#${file}`)))).toBe(200);
  });

  it("macOS's ._ file beside a cassette is no cassette: the folder replays", async () => {
    expect(await replayWith('appledouble', (folder) => writeFileSync(join(folder, `._${file}`), Buffer.from([0, 5, 22, 7, 0, 2, 0, 0])))).toBe(200);
  });

  it('a link to nowhere named as a cassette is refused as unreadable, not as no JSON', async () => {
    expect(await replayWith('dangling', (folder) => symlinkSync('gone.json', join(folder, 'up-m-dead.json')))).toMatch(/^cassette up-m-dead\.json cannot be read: ENOENT/);
  });
});
