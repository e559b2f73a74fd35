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

});
