// --jq over a large answer: `router api` of a ~1 MB chat answer with `--jq`, against the same call without
// it (the filter's own cost: start-up and HTTP fall out), over `node -e` parsing the same JSON. With jq-wasm's
// glue as published (a copy per byte), over a minute.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, WORK, timed, median, report } from './lib.mjs';

export const jqSections = {
  async jqLarge(emu) {
    const content = Array.from({ length: 5_000 }, (_, i) => `line ${i}: "café" ${'x'.repeat(200)}`).join('\n');
    const body = join(WORK, 'jq-body.json');
    writeFileSync(body, JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content }] }));
    const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.api_key, ROUTER_NO_LOG: '1' };
    const call = ['api', 'POST', '/v1/chat/completions', '--input', body];
    const parse = `let s='';process.stdin.setEncoding('utf8').on('data',(c)=>s+=c).on('end',()=>process.stdout.write(JSON.parse(s).choices[0].message.content))`;
    const answer = execFileSync(process.execPath, [BIN, ...call], { env, maxBuffer: 64 << 20 });
    const [withJq, without, node] = [[], [], []];
    for (let i = 0; i < 5; i++) {
      withJq.push((await timed(process.execPath, [BIN, ...call, '--jq', '.choices[0].message.content'], { env })).ms);
      without.push((await timed(process.execPath, [BIN, ...call], { env })).ms);
      node.push((await timed(process.execPath, ['-e', parse], { input: answer })).ms);
    }
    const jqMs = Math.max(median(withJq) - median(without), 0);
    const r = jqMs / median(node);
    report(`--jq over a ${(answer.length / 1e6).toFixed(1)} MB answer / node -e JSON.parse`, `${r.toFixed(2)} (${jqMs.toFixed(0)} vs ${median(node).toFixed(0)} ms)`, '<= 5', r <= 5);
  },
};
