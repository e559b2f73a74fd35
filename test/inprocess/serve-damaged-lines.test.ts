import { appendFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { call, emulatorFolder } from '../support/emulator-folder.js';

// `router serve` on a state folder whose line files hold lines it cannot read: they were skipped with nothing said.
const folder = emulatorFolder('router-serve-damaged-');

describe('a state folder with damaged lines in charges.*.jsonl and generations.jsonl', () => {
  it('says once per file which one and how many lines were left out, and starts with the rest', async () => {
    const first = await folder.start('s');
    const made = await call(first, '/v1/chat/completions', { model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
    expect(made.status).toBe(200);
    const dir = join(folder.dir, 's');
    await folder.stop(first);
    const files = readdirSync(dir);
    expect(files).toContain('generations.jsonl');
    appendFileSync(join(dir, 'generations.jsonl'), '{"id":"gen-cut","workspace":\n\nnot json at all\n');
    writeFileSync(join(dir, 'charges.7.jsonl'), '{"s":1000000,"w":"ws","c":0.5,"h":"x"\n{"s":"one"}\n\n');
    const said: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (said.push(String(chunk)), true));
    let again;
    try {
      again = await folder.start('s');
    } finally {
      spy.mockRestore();
    }
    const damaged = said.filter((l) => l.includes('is damaged'));
    expect(damaged.sort()).toEqual([
      `router serve: warning: ${join(dir, 'generations.jsonl')} is damaged: 2 lines left out (fix it or move it away)\n`,
      `router serve: warning: ${join(dir, 'charges.7.jsonl')} is damaged: 2 lines left out (fix it or move it away)\n`,
    ].sort());
    const id = made.body.id as string;
    expect((await call(again, `/v1/generation?id=${id}`)).status).toBe(200);
  });
});
