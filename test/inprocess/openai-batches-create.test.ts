import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { BadRequestError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { batchesPathOf, FLAVORS } from '../support/batch-jobs.js';

// The openai package's `batches.create()` sends an uploaded file's id (`input_file_id`), which this API does not
// take: its 400 said only "requests must be a non-empty array", with no word of why a typed call was wrong.
describe.each(FLAVORS)('%s flavour', (flavor) => {
  let dir: string;
  let emu: Emulator;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'router-openai-batches-'));
    emu = await startEmulator({ stateDir: dir, port: 0, flavor });
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the openai package's batches.create with an input file is a 400 that says requests are sent inline", async () => {
    const place = batchesPathOf(flavor).replace(/\/batches$/, '');
    const client = new OpenAI({ apiKey: emu.store.firstKeys().apiKey, baseURL: `${emu.apiRoot}${place}`, maxRetries: 0 });
    const made = client.batches.create({ input_file_id: 'file-abc', endpoint: '/v1/chat/completions', completion_window: '24h' });
    await expect(made).rejects.toBeInstanceOf(BadRequestError);
    await expect(made).rejects.toThrow('requests must be a non-empty array: this API takes the requests inline, not an uploaded file (input_file_id)');
  });

  it('a body with neither is refused in the words it had', async () => {
    const res = await fetch(`${emu.apiRoot}${batchesPathOf(flavor)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emu.store.firstKeys().apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: '/v1/chat/completions', model: 'local/echo' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('requests must be a non-empty array');
  });
});
