import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnvWithBatch, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;

beforeAll(async () => {
  ({ t } = await startCliEnvWithBatch());
});
afterAll(() => t.close());

describe('serve refuses what it cannot use, in words', () => {
  it('a port in use, a state path that is a file', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const busy = await t.run(['serve', '--port', String(port), '--state', join(t.dir, 'st')]);
    blocker.close();
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toBe(`error: port ${port} is in use: try another --port, or --port 0 for any free one\n`);
    const file = join(t.dir, 'state-file');
    writeFileSync(file, '');
    const bad = await t.run(['serve', '--port', '0', '--state', file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--state .* is a file, not a folder/);
    expect(await t.run(['serve', '--port', '0', '--state', ''])).toMatchObject({ code: 2, stderr: 'error: --state: the path is empty\n' });
  });

  it('a fault whose number is not one, refused before the server starts (and by the faults route)', async () => {
    for (const [spec, said] of [
      ['503,times=x', 'times must be a whole number of at least 1, got "x"'],
      ['slow,delay_ms=soon', 'delay_ms must be a whole number of at least 0, got "soon"'],
      ['cut,after=-1', 'after must be a whole number of at least 0, got "-1"'],
      ['429,retry_after=', 'retry_after must be seconds or an HTTP date, got ""'],
    ]) {
      expect(await t.run(['serve', '--port', '0', '--state', join(t.dir, 'st-fault'), '--fault', spec!])).toMatchObject({ code: 2, stdout: '', stderr: `error: --fault: ${said}\n` });
    }
    const res = await fetch(`${t.apiRoot}/_emulator/faults`, { method: 'POST', headers: { authorization: `Bearer ${t.operatorKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ faults: ['503,times=x'] }) });
    expect(res.status).toBe(400);
  });

  it("a fault's path= may name the URL's path, as the CLI's errors do (POST /api/v1/…), or the path under the root", async () => {
    const chat = () => t.run(['chat', '--max-retries', '0', '--model', 'local/echo', 'hi'], { env: { ROUTER_NO_LOG: '1' } });
    for (const path of ['/api/v1/chat/completions', '/v1/chat/completions']) {
      await t.admin('faults', { faults: [`503,times=1,path=${path}`] });
      // Was: a rule of /api/v1/… never matched, and stayed, in silence.
      expect(await chat()).toMatchObject({ code: 7 });
      expect(await chat()).toMatchObject({ code: 0, stdout: 'hi\n' });
    }
  });

});
