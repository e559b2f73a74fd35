import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnvWithBatch, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
let requests: string;
let batchId: string;

beforeAll(async () => {
  ({ t, requests, batchId } = await startCliEnvWithBatch());
});
afterAll(() => t.close());

const mgmt = () => ({ ROUTER_MANAGEMENT_KEY: t.managementKey });
const chatRequests = () => t.requests().filter((r) => r.method === 'POST').length;

describe('an output never writes over an input', () => {
  it('--results never writes over the requests file, under any name: refused before anything is sent or any job made', async () => {
    const input = join(t.dir, 'own-input.jsonl');
    writeFileSync(input, readFileSync(requests));
    const link = join(t.dir, 'own-input-link.jsonl');
    symlinkSync(input, link);
    const before = t.requests().length;
    const env = { ROUTER_STATE_DIR: join(t.dir, 'own-input-state') };
    for (const target of [input, link, join(t.dir, '.', 'own-input.jsonl')]) {
      for (const args of [['batch', 'create', input, '--watch', '--results', target], ['batch', 'run', input, '--watch', '--results', target], ['batch', 'run', link, '--results', input]]) {
        const r = await t.run(args, { env });
        expect(r).toMatchObject({ code: 2, stdout: '' });
        expect(r.stderr).toMatch(/^error: --results .* is the requests file: the results would replace the requests; give another file\n$/);
      }
    }
    expect(t.requests()).toHaveLength(before);
    expect(readFileSync(input)).toEqual(readFileSync(requests));
    expect((await t.run(['batch', 'jobs'], { env })).stdout).toBe('');
  });

  it('speak -o never writes over its own input (a reference clip, the turns file), under any name', async () => {
    const mgmt = { ROUTER_MANAGEMENT_KEY: t.managementKey };
    const clip = join(t.dir, 'own-clip.mp3');
    expect((await t.run(['speak', 'hi', '--model', 'local/tts', '--voice', 'alloy', '-o', clip], { env: mgmt })).code).toBe(0);
    const kept = readFileSync(clip);
    const turns = join(t.dir, 'own-turns.mp3');
    writeFileSync(turns, JSON.stringify([{ text: 'a' }]));
    const before = t.requests().length;
    for (const args of [['speak', 'hi', '--reference-audio', clip, '-o', join(t.dir, '.', 'own-clip.mp3')], ['speak', '--turns', turns, '-o', turns]]) {
      const r = await t.run([...args, '--model', 'local/tts', '--voice', 'alloy'], { env: mgmt });
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toMatch(/^error: -o .* is the input file .*: the output would replace it; give another file\n$/);
    }
    expect(t.requests()).toHaveLength(before);
    expect(readFileSync(clip)).toEqual(kept);
  });

});
describe('bad output paths: one line, exit 2, nothing sent', () => {
  it('speak -o into a missing folder, onto a folder, with an extension the service does not produce', async () => {
    const before = chatRequests();
    const missing = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'nope', 'a.mp3')], { env: mgmt() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: cannot write .*nope\/a\.mp3: folder .* does not exist\n$/);
    const folder = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', t.dir], { env: mgmt() });
    expect(folder.code).toBe(2);
    expect(folder.stderr).toMatch(/is a folder/);
    const wav = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'a.wav')], { env: mgmt() });
    expect(wav.code).toBe(2);
    expect(wav.stderr).toMatch(/produces mp3 or pcm/);
    expect(chatRequests()).toBe(before);
  });

  it('--results naming a folder or a missing folder, before the batch is created', async () => {
    const before = chatRequests();
    for (const target of [t.dir, join(t.dir, 'missing', 'out.jsonl')]) {
      const r = await t.run(['batch', 'create', requests, '--watch', '--results', target]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      const g = await t.run(['batch', 'get', batchId, '--results', target]);
      expect(g.code).toBe(2);
    }
    expect(chatRequests()).toBe(before);
  });

  it('an empty path, or one ending in / (a folder to be): one line each, exit 2, nothing sent', async () => {
    const before = chatRequests();
    const speak = (o: string) => t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', o], { env: mgmt() });
    expect(await speak('')).toMatchObject({ code: 2, stderr: 'error: cannot write to an empty path: give a file name\n' });
    expect(await speak('new-folder/')).toMatchObject({ code: 2, stderr: 'error: cannot write new-folder/: it ends in / as a folder does; give a file name\n' });
    expect(await t.run(['batch', 'get', batchId, '--results', 'out/'])).toMatchObject({ code: 2, stderr: 'error: cannot write out/: it ends in / as a folder does; give a file name\n' });
    expect(await t.run(['embed', '--file', '', '--model', 'local/embed'])).toMatchObject({ code: 2, stderr: 'error: --file: the path is empty\n' });
    expect(await t.run(['batch', 'create', ''])).toMatchObject({ code: 2, stderr: 'error: the requests file name is empty\n' });
    expect(await t.run(['batch', 'create', join(requests, 'x.jsonl')])).toMatchObject({ code: 2, stderr: `error: requests file ${requests}/x.jsonl: cannot read it (a part of the path is not a folder)\n` });
    expect(chatRequests()).toBe(before);
  });

  it('a device is written, never replaced; a pcm extension asks for pcm', async () => {
    const r = await t.run(['batch', 'get', batchId, '--results', '/dev/null']);
    expect(r.code).toBe(0);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
    const pcm = await t.run(['speak', 'hi', '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'a.pcm')], { env: mgmt() });
    expect(pcm.code).toBe(0);
    expect(t.requests().filter((q) => q.path.endsWith('/audio/speech')).at(-1)!.body.response_format).toBe('pcm');
  });

  it('temp files a killed run left behind are swept by the next run to that folder', async () => {
    const dir = join(t.dir, 'sweep');
    mkdirSync(dir);
    writeFileSync(join(dir, '.router-tmp-out.jsonl.999999.abcdef'), 'half');
    const r = await t.run(['batch', 'get', batchId, '--results', join(dir, 'out.jsonl')]);
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).toEqual(['out.jsonl']);
  });
});
