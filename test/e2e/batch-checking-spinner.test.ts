import { writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, type TestEnv } from '../helpers.js';
import { terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';
import { until } from '../support/until.js';

// Issue 46, round 13: `batch run` of a large file was seconds (a minute for millions of lines) of a blank terminal
// while every line was read and checked, then read again for the cost bound.
let t: TestEnv;
const open = terminalsOnEmulator((started) => (t = started));

describe.skipIf(!HAS_TMUX)('batch run of a large file on a terminal', () => {
  it('shows a spinner while it checks the file and takes its cost bound; it leaves no trace when done', async () => {
    const file = join(t.dir, 'large.jsonl');
    const line = (i: number) => JSON.stringify({ custom_id: `q${i}`, body: { messages: [{ role: 'user', content: `question ${i} `.padEnd(80, '.') }] } });
    writeFileSync(file, `${Array.from({ length: 70_000 }, (_, i) => line(i)).join('\n')}\n`);
    // A service whose model list is held: the cost bound waits for it, with the spinner up, until the test lets it go.
    const held: ServerResponse[] = [];
    let letGo = false;
    const answer = async (res: ServerResponse) => {
      const list = await fetch(`${t.env.ROUTER_API_ROOT}/v1/models`, { headers: { authorization: `Bearer ${t.apiKey}` } });
      res.writeHead(list.status, { 'content-type': 'application/json' }).end(await list.text());
    };
    const service = createServer((_req, res) => void (letGo ? answer(res) : held.push(res)));
    await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
    const root = `http://127.0.0.1:${(service.address() as { port: number }).port}/api`;
    try {
      const term = await open({ ROUTER_API_ROOT: root });
      term.run(`node ${BIN} batch run ${file} --model local/echo --dry-run > /dev/null`);
      // The file read and checked, its cost bound waits for the model list: the spinner is up (while the lines were
      // checked it was too, for a moment too short to look for here).
      expect(await until(() => held.length > 0)).toBe(true);
      await term.waitFor(/checking every line of \S*large\.jsonl \(\d+\.\d MB\)/);
      letGo = true;
      for (const res of held.splice(0)) await answer(res);
      await term.waitFor(/dry run: 70,000 requests in 14 shards checked; nothing was saved or sent/);
      expect(await term.screen()).not.toMatch(/cost bound: unknown/);
      expect(await term.lastExit()).toBe(0);
      expect(await term.screen()).not.toMatch(/checking every line/);
      expect(await term.cursorVisible()).toBe(true);
    } finally {
      service.closeAllConnections();
      service.close();
    }
  });
});
