import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { FLAVORS } from '../support/batch-jobs.js';
import { startCliEnv } from '../support/cli-env.js';
import { testStreams } from '../support/inprocess.js';
import { startedForAll } from '../support/for-all.js';

// `batch create --watch` says the id of the batch it made, then watches it; a kill at any point after must leave a
// record that the rerun reads as "made B, stopped before its watch saw it end" (it watches B, never sends again).
// Before, the record said so only after the id's line was written: a process killed right after writing it (descheduled
// on a loaded machine, or its stderr a full pipe) left "never answered before its id was printed" (the e2e test
// batch-create-once "killed mid-watch" failed so once at load 12). Here the record is read as the line is written.
describe.each(FLAVORS)('%s flavour', (flavor) => {
  const t = startedForAll(() => startCliEnv({ flavor, batchDelayMs: 5 }));

  it('the create record says the batch is watched before its id is said', async () => {
    const state = join(t.dir, `state-${flavor}`);
    const file = join(t.dir, `said-${flavor}.jsonl`);
    writeFileSync(file, ['a', 'b'].map((c) => JSON.stringify({ custom_id: c, body: { messages: [{ role: 'user', content: c }], max_tokens: 5 } })).join('\n') + '\n');
    const s = testStreams({ env: { ...t.env, ROUTER_STATE_DIR: state } });
    const creates = join(state, 'creates');
    const atLine: unknown[] = [];
    const write = s.streams.stderr.write.bind(s.streams.stderr);
    s.streams.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      // What a kill -9 right after this line would leave.
      if (/created batch_/.test(String(chunk))) atLine.push(...(existsSync(creates) ? readdirSync(creates).filter((n) => n.endsWith('.json')).map((n) => JSON.parse(readFileSync(join(creates, n), 'utf8'))) : []));
      return write(chunk, ...rest);
    }) as typeof s.streams.stderr.write;
    const code = await main(['node', 'router', 'batch', 'create', file, '--model', 'local/echo', '--watch', '--interval', '50ms'], s.streams);
    expect(code, s.stderr()).toBe(0);
    const id = /created (batch_\w+)/.exec(s.stderr())![1];
    expect(atLine).toMatchObject([{ batch_id: id, watching: true }]);
  });
});
