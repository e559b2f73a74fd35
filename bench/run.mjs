// npm run bench: every ratio is measured against its baseline in the same run.
import { BIN, ROOT, WORK, startEmulator, timed, median, rate, report, summary } from './lib.mjs';
import { hostileSections } from './hostile.mjs';
import { driftSections } from './drift.mjs';
import { jqSections } from './jq.mjs';
import { transportFloor } from './floor.mjs';
import { gatewaySections } from './gateway.mjs';
import { tailSections } from './gateway-tail.mjs';
import { installedSections } from './installed.mjs';

/** Rounds of each interleaved comparison; the ratio is their median, the spread their range. */
const ROUNDS = 7;
const spread = (ratios) => `spread ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`;

const only = process.argv[2];
process.on('exit', (code) => { if (code === 0 && !finished) console.error('bench: stopped early (the event loop emptied)'); });
let finished = false;
const sections = {
  async startup() {
    const node = [];
    const help = [];
    const version = [];
    for (let i = 0; i < 15; i++) {
      node.push((await timed(process.execPath, ['-e', '0'])).ms);
      help.push((await timed(process.execPath, [BIN, '--help'])).ms);
      version.push((await timed(process.execPath, [BIN, '--version'])).ms);
    }
    const base = median(node);
    const r = median(help) / base;
    report('router --help start time / node -e 0', `${r.toFixed(2)}x (${median(help).toFixed(0)} vs ${base.toFixed(0)} ms)`, '<= 1.15x', r <= 1.15);
    const v = median(version) / base;
    report('router --version start time / node -e 0', `${v.toFixed(2)}x (${median(version).toFixed(0)} ms)`, '<= 1.3x', v <= 1.3);
  },

  async chatStream(emu) {
    const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.api_key, ROUTER_NO_LOG: '1' };
    const body = (words) => JSON.stringify({ model: 'local/lorem', stream: true, messages: [{ role: 'user', content: `write ${words} words` }] });
    const url = `${emu.api_root}/v1/chat/completions`;
    await throughput('router chat stream', { short: 50_000, long: 250_000, unit: 'words', floor: 'undici', goal: 0.8 }, {
      curl: (words) => timed('curl', ['-sN', '-H', `Authorization: Bearer ${emu.api_key}`, '-H', 'content-type: application/json', '-d', body(words), url], { stdout: 'null' }),
      router: (words) => timed(process.execPath, [BIN, 'chat', '--model', 'local/lorem', `write ${words} words`], { env, stdout: 'null' }),
      node: (words) => timed(process.execPath, ['-e', bareNodeReader(url, emu.api_key, body(words))], { stdout: 'null' }),
      undici: (words) => timed(process.execPath, ['-e', bareUndiciReader(url, emu.api_key, body(words))], { stdout: 'null' }),
    });
  },
  ...installedSections,
};

/** One-shot chat against bare node and a minimal openai npm script; streaming against an openai loop. */
sections.versusOpenai = async (emu) => {
  const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.api_key, ROUTER_NO_LOG: '1' };
  const script = (stream, words) => `
    const { default: OpenAI } = await import(${JSON.stringify(`${ROOT}/node_modules/openai/index.mjs`)});
    const c = new OpenAI({ baseURL: ${JSON.stringify(`${emu.api_root}/v1`)}, apiKey: ${JSON.stringify(emu.api_key)} });
    ${stream
      ? `const s = await c.chat.completions.create({ model: 'local/lorem', stream: true, messages: [{ role: 'user', content: 'write ${words} words' }] });
         for await (const chunk of s) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');`
      : `const r = await c.chat.completions.create({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] });
         process.stdout.write(r.choices[0].message.content + '\\n');`}`;
  // The same call as a user after `router login` makes it: key and API root from a profile, not env.
  const { join } = await import('node:path');
  const { ROUTER_API_KEY, ROUTER_API_ROOT, ...rest } = env;
  const profileEnv = { ...rest, ROUTER_CONFIG_DIR: join(WORK, 'bench-config') };
  await timed(process.execPath, [BIN, 'login', '--with-key', '--no-verify'], { env: profileEnv, input: ROUTER_API_KEY });
  await timed(process.execPath, [BIN, 'config', 'set', 'api_root', ROUTER_API_ROOT], { env: profileEnv });
  const bare = `require('node:http').request(${JSON.stringify(`${emu.api_root}/v1/chat/completions`)}, { method: 'POST', headers: { authorization: 'Bearer ${emu.api_key}', 'content-type': 'application/json' } }, (r) => { let b = ''; r.setEncoding('utf8').on('data', (c) => (b += c)).on('end', () => process.stdout.write(JSON.parse(b).choices[0].message.content + '\\n')); }).end(${JSON.stringify(JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }))})`;
  const floorArgs = await transportFloor(env);
  const node = [], cli = [], sdk = [], withProfile = [], http = [], floor = [];
  const faults = { node: [], cli: [], floor: [] };
  const timeCall = async (list, faultList, args, opts) => {
    const r = await timed(process.execPath, args, opts);
    list.push(r.ms);
    faultList.push(r.faults);
  };
  for (let i = 0; i < ROUNDS; i++) {
    await timeCall(node, faults.node, ['-e', '0']);
    await timeCall(cli, faults.cli, [BIN, 'chat', '--model', 'local/echo', 'hi'], { env });
    sdk.push((await timed(process.execPath, ['--input-type=module', '-e', script(false)])).ms);
    withProfile.push((await timed(process.execPath, [BIN, 'chat', '--model', 'local/echo', 'hi'], { env: profileEnv })).ms);
    http.push((await timed(process.execPath, ['-e', bare])).ms);
    await timeCall(floor, faults.floor, floorArgs, { env });
  }
  const vsNode = median(cli) / median(node);
  report('one-shot router chat wall time / node -e 0', `${vsNode.toFixed(2)}x (${median(cli).toFixed(0)} vs ${median(node).toFixed(0)} ms; ${spread(cli.map((c, i) => c / node[i]))})`, '<= 1.35x', vsNode <= 1.35);
  report('  a minimal node:http script making the same call / node -e 0', `${(median(http) / median(node)).toFixed(2)}x (${median(http).toFixed(0)} ms)`, 'info');
  report('  undici\'s floor: that call from a script built as the CLI is / node -e 0', `${(median(floor) / median(node)).toFixed(2)}x (${median(floor).toFixed(0)} ms; router ${(median(cli) / median(floor)).toFixed(2)}x of it)`, 'info');
  report('  minor page faults: one-shot router chat, undici\'s floor, node -e 0', `${median(faults.cli)}, ${median(faults.floor)}, ${median(faults.node)}`, 'info');
  report('  the same, key and API root from a profile (router login)', `${(median(withProfile) / median(node)).toFixed(2)}x (${median(withProfile).toFixed(0)} ms)`, 'info');
  const vsSdk = median(cli) / median(sdk);
  report('one-shot router chat / minimal openai npm script', `${vsSdk.toFixed(2)}x (${median(sdk).toFixed(0)} ms; ${spread(cli.map((c, i) => c / sdk[i]))})`, '<= 0.6x', vsSdk <= 0.6);
  const words = 200_000;
  const cliStream = [], sdkStream = [];
  for (let i = 0; i < 3; i++) {
    cliStream.push((await timed(process.execPath, [BIN, 'chat', '--model', 'local/lorem', `write ${words} words`], { env })).ms);
    sdkStream.push((await timed(process.execPath, ['--input-type=module', '-e', script(true, words)])).ms);
  }
  const r = median(sdkStream) / median(cliStream);
  report(`router chat stream throughput / openai npm streaming loop (${words} words)`, `${r.toFixed(2)} (${median(cliStream).toFixed(0)} vs ${median(sdkStream).toFixed(0)} ms)`, '>= 2.5', r >= 2.5);
};

sections.batchCreate = async (emu) => {
  const { createWriteStream, statSync } = await import('node:fs');
  const { join } = await import('node:path');
  const admin = (path, body) => fetch(`${emu.api_root}/_emulator/${path}`, { method: 'POST', headers: { authorization: `Bearer ${path === 'credits' ? emu.management_key : emu.operator_key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  // Keep the created batches validating, so that their processing does not load the machine.
  await admin('batches', { delay_ms: 3_600_000 });
  const jsonl = join(WORK, 'big.jsonl');
  const body = join(WORK, 'big.json');
  const filler = 'lorem ipsum dolor sit amet '.repeat(1500);
  const lines = 4900;
  const out = createWriteStream(jsonl);
  const whole = createWriteStream(body);
  whole.write('{"endpoint":"/v1/chat/completions","model":"local/echo","completion_window":"24h","requests":[');
  for (let i = 0; i < lines; i++) {
    const line = JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `${i} ${filler}` }] } });
    out.write(line + '\n');
    whole.write((i ? ',' : '') + line);
  }
  whole.write(']}');
  await Promise.all([new Promise((r) => out.end(r)), new Promise((r) => whole.end(r))]);
  const mb = statSync(jsonl).size / 1024 / 1024;
  const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.api_key };
  const curl = [];
  const cli = [];
  let rss = 0;
  for (let i = 0; i < ROUNDS; i++) {
    curl.push((await timed('curl', ['-s', '-o', '/dev/null', '-H', `Authorization: Bearer ${emu.api_key}`, '-H', 'content-type: application/json', '--data-binary', `@${body}`, `${emu.api_root}/v1/batches`])).ms);
    const r = await timed(process.execPath, [BIN, 'batch', 'create', jsonl, '--model', 'local/echo', '--yes'], { env });
    cli.push(r.ms);
    rss = Math.max(rss, r.rssKiB);
  }
  const ratio = median(curl) / median(cli);
  report(`batch create ${mb.toFixed(0)} MB JSONL rate / curl --data-binary`, `${ratio.toFixed(2)} (${median(cli).toFixed(0)} vs ${median(curl).toFixed(0)} ms; ${spread(curl.map((c, i) => c / cli[i]))})`, '>= 0.95', ratio >= 0.95);
  report('batch create peak RSS', `${(rss / 1024).toFixed(0)} MB`, '<= 150 MB', rss / 1024 <= 150);
  await admin('batches', { delay_ms: 0 });
};

sections.batchResults = async (emu) => {
  const { writeFileSync, statSync } = await import('node:fs');
  const { join } = await import('node:path');
  await fetch(`${emu.api_root}/_emulator/batches`, { method: 'POST', headers: { authorization: `Bearer ${emu.operator_key}`, 'content-type': 'application/json' }, body: JSON.stringify({ delay_ms: 0 }) });
  const filler = 'results '.repeat(3400);
  const lines = Array.from({ length: 4000 }, (_, i) => JSON.stringify({ custom_id: `r${i}`, body: { messages: [{ role: 'user', content: `${i} ${filler}` }] } }));
  const file = join(WORK, 'results-src.jsonl');
  writeFileSync(file, lines.join('\n'));
  const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.api_key };
  const created = await timed(process.execPath, [BIN, 'batch', 'create', file, '--model', 'local/echo', '--watch', '--interval', '0.5', '--quiet'], { env });
  void created;
  const out = join(WORK, 'results.jsonl');
  const r = await timed(process.execPath, [BIN, 'batch', 'get', (await lastBatchId(emu)), '--results', out], { env });
  const mb = statSync(out).size / 1024 / 1024;
  report(`batch get --results of ${mb.toFixed(0)} MB: peak RSS`, `${(r.rssKiB / 1024).toFixed(0)} MB (${r.ms.toFixed(0)} ms)`, '<= 200 MB (results >= 100 MB)', r.rssKiB / 1024 <= 200 && mb >= 100);
};

async function lastBatchId(emu) {
  const res = await fetch(`${emu.api_root}/v1/batches?limit=1`, { headers: { authorization: `Bearer ${emu.api_key}` } });
  return (await res.json()).data[0].id;
}

sections.speak = async (emu) => {
  const text = (words) => Array.from({ length: words }, (_, i) => `word${i % 37}`).join(' ');
  const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.management_key, ROUTER_NO_LOG: '1' };
  const body = (words) => JSON.stringify({ model: 'local/tts', voice: 'alloy', input: text(words), response_format: 'mp3' });
  const url = `${emu.api_root}/v1/audio/speech`;
  await throughput('router speak (mp3)', { short: 50, long: 300, unit: 'words', floor: 'node', goal: 0.95 }, {
    curl: (words) => timed('curl', ['-s', '-H', `Authorization: Bearer ${emu.management_key}`, '-H', 'content-type: application/json', '-d', body(words), url], { stdout: 'null' }),
    router: (words) => timed(process.execPath, [BIN, 'speak', text(words), '--voice', 'alloy', '--model', 'local/tts'], { env, stdout: 'null' }),
    node: (words) => timed(process.execPath, ['-e', bareNodeReader(url, emu.management_key, body(words))], { stdout: 'null' }),
    undici: (words) => timed(process.execPath, ['-e', bareUndiciReader(url, emu.management_key, body(words))], { stdout: 'null' }),
  });
};

/** A node program that posts `body` with node:http and reads the answer, counting nothing: the floor of any node client. */
function bareNodeReader(url, key, body) {
  return `require('node:http').request(${JSON.stringify(url)}, { method: 'POST', headers: { authorization: 'Bearer ${key}', 'content-type': 'application/json' } }, (r) => r.resume()).end(${JSON.stringify(body)})`;
}

/**
 * The best bare undici reader: dispatch() with a raw handler (no body stream, nothing parsed), under the
 * flag the launcher sets (bin/router.cjs): the floor of the CLI's own transport.
 */
function bareUndiciReader(url, key, body) {
  const undici = JSON.stringify(`${ROOT}/node_modules/undici`);
  const u = new URL(url);
  return `require('node:v8').setFlagsFromString('--liftoff-only'); const { Agent } = require(${undici}); const a = new Agent();
    a.dispatch({ origin: ${JSON.stringify(u.origin)}, path: ${JSON.stringify(u.pathname)}, method: 'POST', headers: { authorization: 'Bearer ${key}', 'content-type': 'application/json' }, body: ${JSON.stringify(body)} },
      { onConnect() {}, onHeaders() { return true; }, onData() { return true; }, onComplete() { a.close(); }, onError(e) { console.error(e); process.exitCode = 1; } });`;
}

/**
 * The rate at which curl, the CLI and the bare node readers take in an answer, from the difference between a long
 * and a short one: start-up, a fixed cost that the start-up rows measure, falls out. Interleaved rounds;
 * the ratio of medians, with the spread of the per-round ratios and the wall-time ratio printed beside.
 */
async function throughput(name, { short, long, unit, floor, goal }, readers) {
  const ms = Object.fromEntries(Object.keys(readers).map((k) => [k, { short: [], long: [] }]));
  for (let i = 0; i < ROUNDS; i++) {
    for (const [reader, read] of Object.entries(readers)) {
      ms[reader].short.push((await read(short)).ms);
      ms[reader].long.push((await read(long)).ms);
    }
  }
  const slope = (reader) => median(ms[reader].long) - median(ms[reader].short);
  const perRound = (reader) => ms.curl.long.map((_, i) => (ms.curl.long[i] - ms.curl.short[i]) / (ms[reader].long[i] - ms[reader].short[i]));
  const ratio = slope('curl') / slope('router');
  const span = `${(long - short).toLocaleString('en')} ${unit}`;
  const vsFloor = slope(floor) / slope('router');
  const perFloor = ms[floor].long.map((_, i) => (ms[floor].long[i] - ms[floor].short[i]) / (ms.router.long[i] - ms.router.short[i]));
  report(`${name} rate / bare ${floor === 'undici' ? 'undici' : 'node:http'} reading the same (start-up aside)`, `${vsFloor.toFixed(2)} (${slope('router').toFixed(0)} vs ${slope(floor).toFixed(0)} ms per ${span}; ${spread(perFloor)})`, `>= ${goal}`, vsFloor >= goal);
  report('  the same against curl', `${ratio.toFixed(2)} (${spread(perRound('router'))})`, 'info');
  report('  bare node:http / curl (a node floor)', `${(slope('curl') / slope('node')).toFixed(2)} (${spread(perRound('node'))})`, 'info');
  report('  bare undici / curl', `${(slope('curl') / slope('undici')).toFixed(2)} (${spread(perRound('undici'))})`, 'info');
  const wall = median(ms.curl.long) / median(ms.router.long);
  report(`  wall time / curl, start-up included (${long.toLocaleString('en')} ${unit})`, `${wall.toFixed(2)} (${median(ms.router.long).toFixed(0)} vs ${median(ms.curl.long).toFixed(0)} ms)`, 'info');
}

/** Emulator capacity: non-streaming chat at 64 connections / a bare node:http server answering the same bytes. */
sections.capacity = async (emu) => {
  const { spawn } = await import('node:child_process');
  const headers = { authorization: `Bearer ${emu.api_key}`, 'content-type': 'application/json' };
  const body = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hello there' }] });
  const url = `${emu.api_root}/v1/chat/completions`;
  const canned = await (await fetch(url, { method: 'POST', headers, body })).text();
  const bare = spawn(process.execPath, ['-e', `const b=${JSON.stringify(canned)};require('node:http').createServer((q,s)=>{q.resume();q.on('end',()=>{s.writeHead(200,{'content-type':'application/json'});s.end(b)})}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((r) => bare.stdout.once('data', (c) => r(String(c).trim())));
  try {
    // Both servers warmed first (JIT, pools): a long-running server's capacity, not its first second's.
    await rate(`http://127.0.0.1:${port}/`, headers, body, 2);
    await rate(url, headers, body, 2);
    const ratios = [];
    for (let i = 0; i < 5; i++) {
      const b = await rate(`http://127.0.0.1:${port}/`, headers, body);
      const e = await rate(url, headers, body);
      ratios.push(e / b);
      if (process.env.BENCH_DEBUG) console.log(`      round ${i}: bare ${b.toFixed(0)}/s, emulator ${e.toFixed(0)}/s`);
    }
    const r = median(ratios);
    report('emulator chat req/s at 64 connections / bare node:http (autocannon)', `${r.toFixed(2)} (${spread(ratios)})`, '>= 0.5', r >= 0.5);
  } finally {
    bare.kill();
  }
};

/** batch run end to end (split, submit, follow, merge) at 20k, 100k and 200k requests (~1 GB): rate and a flat peak RSS. */
sections.batchRun = async (emu) => {
  const { createWriteStream, statSync } = await import('node:fs');
  const { join } = await import('node:path');
  // A fresh connection: the capacity row before this one leaves pooled sockets the server has closed.
  await fetch(`${emu.api_root}/_emulator/batches`, { method: 'POST', headers: { authorization: `Bearer ${emu.operator_key}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ delay_ms: 0 }) }).catch(() =>
    fetch(`${emu.api_root}/_emulator/batches`, { method: 'POST', headers: { authorization: `Bearer ${emu.operator_key}`, 'content-type': 'application/json', connection: 'close' }, body: JSON.stringify({ delay_ms: 0 }) }),
  );
  const filler = 'lorem ipsum dolor '.repeat(280);
  const write = async (count) => {
    const file = join(WORK, `run-${count}.jsonl`);
    const out = createWriteStream(file);
    for (let i = 0; i < count; i++) {
      if (!out.write(`{"custom_id":"r${i}","body":{"messages":[{"role":"user","content":"${i} ${filler}"}]}}\n`)) await new Promise((r) => out.once('drain', r));
    }
    await new Promise((r) => out.end(r));
    return file;
  };
  const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.api_key, ROUTER_STATE_DIR: join(WORK, 'cli-state') };
  const rss = [];
  for (const count of [20_000, 100_000, 200_000]) {
    const file = await write(count);
    const mb = statSync(file).size / 1024 / 1024;
    const r = await timed(process.execPath, [BIN, 'batch', 'run', file, '--model', 'local/echo', '--watch', '--interval', '0.5', '--results', join(WORK, `run-${count}-out.jsonl`), '--quiet'], { env });
    rss.push(r.rssKiB / 1024);
    console.log(`      batch run ${count.toLocaleString('en-US')} requests (${mb.toFixed(0)} MB): ${(count / (r.ms / 1000)).toFixed(0)} requests/s end to end, peak RSS ${(r.rssKiB / 1024).toFixed(0)} MB`);
  }
  const flat = Math.max(...rss);
  report('batch run peak RSS at 20k / 100k / 200k requests', `${rss.map((x) => x.toFixed(0)).join(' / ')} MB`, '<= 200 MB each', flat <= 200);
};

/** List latency does not grow with the number of stored batches (10,000 seeded vs 100). */
sections.batchList = async () => {
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const latency = async (count) => {
    const state = join(WORK, `list-${count}`);
    for (let i = 0; i < count; i++) {
      const id = `batch_seed${String(i).padStart(6, '0')}`;
      mkdirSync(join(state, 'batches', id), { recursive: true });
      const record = { id, workspace: 'default', endpoint: '/v1/chat/completions', model: 'local/echo', completion_window: '24h', created_at: 1_700_000_000 + i, finalized_at: 1_700_000_100 + i, status: i % 3 ? 'completed' : 'failed', request_counts: { total: 1, completed: 1, failed: 0 }, error: null, usage: null, provider: null, payment_due: null, results_deleted: false };
      writeFileSync(join(state, 'batches', id, 'meta.json'), JSON.stringify(record));
    }
    const emu = await startEmulator(state);
    try {
      const get = async (query) => {
        const t0 = process.hrtime.bigint();
        const res = await fetch(`${emu.api_root}/v1/batches?${query}`, { headers: { authorization: `Bearer ${emu.api_key}` } });
        await res.json();
        return Number(process.hrtime.bigint() - t0) / 1e6;
      };
      const times = [];
      for (let i = 0; i < 40; i++) times.push(await get(i % 2 ? 'limit=20' : 'limit=20&status=failed'));
      return median(times);
    } finally {
      await emu.stop();
    }
  };
  const small = await latency(100);
  const large = await latency(10_000);
  const r = large / small;
  report('batch list latency, 10,000 stored / 100 stored', `${r.toFixed(2)} (${large.toFixed(2)} vs ${small.toFixed(2)} ms)`, '<= 2', r <= 2);
};

/** Local listings over large state: `router usage` over a 1,000,000-line ledger, `conversations list` over 50,000. */
sections.localState = async () => {
  const { createWriteStream, mkdirSync, writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const state = join(WORK, 'local-state');
  mkdirSync(join(state, 'conversations'), { recursive: true });
  const out = createWriteStream(join(state, 'usage.jsonl'));
  const day = Date.now() - 20 * 86_400_000;
  for (let i = 0; i < 1_000_000; i++) {
    const line = JSON.stringify({ time: new Date(day + i * 1700).toISOString(), profile: 'default', command: 'chat', endpoint: '/v1/chat/completions', model: `local/m${i % 7}`, id: `gen-${i}`, prompt_tokens: 12, completion_tokens: 40, total_tokens: 52, cost: 0.00001 });
    if (!out.write(`${line}\n`)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  const message = { role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(20) };
  for (let i = 0; i < 50_000; i++) {
    const id = `c${String(i).padStart(6, '0')}`;
    const at = new Date(day + i * 60_000).toISOString();
    writeFileSync(join(state, 'conversations', `${id}.json`), JSON.stringify({ id, title: `conversation ${i}`, model: 'local/echo', created_at: at, updated_at: at, messages: [message, { role: 'assistant', content: message.content }] }));
  }
  const env = { ...process.env, ROUTER_STATE_DIR: state };
  const usage = await timed(process.execPath, [BIN, 'usage', '--since', '30d'], { env });
  report('router usage over a 1,000,000-line ledger: peak RSS', `${(usage.rssKiB / 1024).toFixed(0)} MB (${(usage.ms / 1000).toFixed(1)} s)`, '<= 100 MB', usage.rssKiB / 1024 <= 100);
  const list = await timed(process.execPath, [BIN, 'conversations', 'list'], { env });
  report('router conversations list over 50,000: peak RSS', `${(list.rssKiB / 1024).toFixed(0)} MB (${(list.ms / 1000).toFixed(1)} s)`, '<= 100 MB', list.rssKiB / 1024 <= 100);
};
/**
 * A 50 MB prompt with no budget (`router chat < FILE`, and piped): peak RSS against the prompt's size. A server
 * here takes the body whole and answers a line (the emulator refuses a body over 32 MiB).
 */
sections.largePrompt = async () => {
  const { createServer } = await import('node:http');
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const server = createServer((req, res) => {
    req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'gen-bench', object: 'chat.completion', created: 1, model: 'local/echo', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  try {
    const file = join(WORK, 'prompt-50mb.txt');
    const words = 'lorem ipsum "dolor" sit amet, consectetur adipiscing elit\n';
    writeFileSync(file, words.repeat(Math.ceil(50e6 / words.length)).slice(0, 50e6));
    const env = { ...process.env, ROUTER_API_ROOT: `http://127.0.0.1:${server.address().port}/api`, ROUTER_API_KEY: 'sk-bench', ROUTER_STATE_DIR: join(WORK, 'large-prompt-state') };
    const args = [BIN, 'chat', '--model', 'local/echo', '--no-stream'];
    const fromFile = [];
    for (let i = 0; i < 3; i++) fromFile.push((await timed(process.execPath, args, { env, stdinFile: file })).rssKiB / 1024);
    const piped = (await timed('/bin/sh', ['-c', 'cat "$0" | "$@"', file, process.execPath, ...args], { env })).rssKiB / 1024;
    const ratio = median(fromFile) / 50;
    report('chat < 50 MB prompt, no budget: peak RSS / prompt', `${ratio.toFixed(2)} (${median(fromFile).toFixed(0)} MB; piped ${piped.toFixed(0)} MB)`, '<= 3', ratio <= 3);
  } finally {
    server.close();
  }
};
Object.assign(sections, hostileSections, driftSections, jqSections, gatewaySections);
// A diagnosis, not a row: only when named (its preload would stay in the processes started after it).
if (only?.split(',').includes('gateway-tail')) Object.assign(sections, tailSections);

const emu = await startEmulator();
try {
  for (const [name, fn] of Object.entries(sections)) {
    if (only && !only.split(",").includes(name)) continue;
    await fn(emu);
  }
} finally {
  await emu.stop();
}
finished = true;
summary();
