import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';
import { answersHi, localUpstream, sseChunk } from '../support/upstreams.js';
import { recordedChats } from '../support/recorded-cassettes.js';

// Cassettes `router serve` took and then never used as written: one naming a provider the providers file does not
// have loaded without a word (a replay miss named it only later); one holding both `body` and `chunks` replayed the
// chunks, `body` dropped; a misspelt member (`broken_reson`) was ignored. Each is now refused when the folder is read:
// one line naming the file and what is wrong, exit 2, as a providers file's mistake is. `--check-drift` said a cassette
// of a provider not in the file (or of an endpoint it does not serve) as an `error` line, exit 1: now refused as replay does.
const t = startedForAll(() => startCliEnv());
const recorded: Record<string, any> = {};
const FILE = 'up-m-0123456789ab.json';
let providers: string;

beforeAll(async () => {
  const up = await localUpstream((req, res, body) => {
    if (!body.stream) return answersHi(req, res);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`${sseChunk('hi')}${sseChunk(null, 'stop')}data: [DONE]\n\n`);
  });
  try {
    Object.assign(recorded, await recordedChats(t.dir, `providers:\n  - { name: up, base_url: "${up.baseUrl}", models: { t/m: m } }\n`));
  } finally {
    await up.close();
  }
  providers = join(t.dir, 'gateway.yaml');
  writeFileSync(providers, 'providers:\n  - { name: up, base_url: "http://127.0.0.1:9/v1", models: { t/m: m } }\n');
});

/** A folder holding the recording `kind` edited by `edit`. */
function folderOf(name: string, kind: 'whole' | 'stream', edit: (c: any) => unknown): string {
  const folder = join(t.dir, name);
  mkdirSync(folder);
  const c = structuredClone(recorded[kind]);
  edit(c);
  writeFileSync(join(folder, FILE), JSON.stringify(c, null, 2));
  return folder;
}

/** The folder replayed by a gateway in this process: what its start said wrong, or '' when it started (then closed). */
async function startSays(folder: string, state: string): Promise<string> {
  try {
    const e = await startEmulator({ stateDir: join(t.dir, state), port: 0, gateway: { config: parseProviders(readFileSync(providers, 'utf8'), {}), cassettes: { dir: folder, mode: 'replay', timing: 0 } } });
    await e.close();
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

describe('cassettes router serve would take and not use as written', () => {
  it('the recordings as written start a replay', async () => {
    for (const kind of ['whole', 'stream'] as const) expect(await startSays(folderOf(`ok-${kind}`, kind, () => {}), `state-ok-${kind}`)).toBe('');
  });

  it.each([
    ['provider-typo', 'whole', (c: any): unknown => (c.provider = 'upp'), 'provider "upp" is not in the providers file (did you mean up?)'],
    ['provider-other', 'whole', (c: any): unknown => (c.provider = 'openai'), 'provider "openai" is not in the providers file (it names up)'],
    ['responses-unserved', 'whole', (c: any): unknown => (c.endpoint = 'responses'), 'provider up has no responses: true in the providers file, and this is a Responses exchange'],
    ['speech-unserved', 'whole', (c: any): unknown => (c.endpoint = 'speech'), 'provider up has no speech_models in the providers file, and this is a speech exchange'],
    ['embeddings-unserved', 'whole', (c: any): unknown => (c.endpoint = 'embeddings'), 'provider up has no embedding_models in the providers file, and this is an embeddings exchange'],
    ['body-and-chunks', 'stream', (c: any): unknown => (c.response.body = { choices: [] }), 'response has both body and chunks: a whole answer (body), a stream (chunks) or speech (audio), one of them'],
    ['failure-and-body', 'whole', (c: any): unknown => (c.response.failure = { reason: 'status', message: 'up: HTTP 503' }), 'response has both failure and body: a failure the gateway passed over holds no answer'],
    ['audio-of-chat', 'whole', (c: any): unknown => (delete c.response.body, (c.response.audio = [{ after_ms: 1, base64: 'SUQz' }])), 'response.audio is speech\'s: this cassette\'s endpoint is not "speech"'],
    ['reason-unbroken', 'stream', (c: any): unknown => (c.response.broken_reason = 'timeout'), 'response.broken_reason without response.broken: nothing broke'],
    ['member-typo', 'stream', (c: any): unknown => (c.response.broken_reson = 'timeout'), 'response: unknown member "broken_reson" (did you mean broken_reason?)'],
    ['top-typo', 'whole', (c: any): unknown => (c.endpiont = 'responses'), 'unknown member "endpiont" (did you mean endpoint?)'],
    ['failure-typo', 'whole', (c: any): unknown => (delete c.response.body, (c.response.failure = { reason: 'status', message: 'x', retry_afer: '1' })), 'response.failure: unknown member "retry_afer" (did you mean retry_after?)'],
  ] as const)('%s: refused by --replay, --record and --check-drift, one line, exit 2', async (name, kind, edit, words) => {
    const folder = folderOf(name, kind, edit);
    // In this process first: a folder the gateway takes would leave `router serve` below listening.
    expect(await startSays(folder, `state-${name}-0`)).toBe(`cassette ${FILE}: ${words}`);
    for (const flag of ['--replay', '--record', '--check-drift']) {
      const r = await t.run(['serve', '--port', '0', '--state', join(t.dir, `state-${name}`), '--providers', providers, flag, folder]);
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: `error: ${flag} ${folder}: cassette ${FILE}: ${words}\n` });
    }
  });
});
