// A control for the gateway bench (#43): the least a relay can do, as a launcher for BENCH_GATEWAY_BEFORE
// (`BENCH_GATEWAY_BEFORE=bench/bare-relay.mjs`). It takes `router serve`'s arguments, reads the
// upstream's base_url from --providers and its key from UP_KEY, and passes each chat request on as it
// came (`bench/` models renamed `local/`), its answer relayed chunk for chunk: node:http in front, undici
// behind, no parsing, routing or accounting. What it adds over a direct call is what one more process
// hop costs on the machine; what the gateway adds beyond that is the gateway's.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { Agent } from 'undici';

const args = process.argv.slice(2);
const providers = readFileSync(args[args.indexOf('--providers') + 1], 'utf8');
const upstream = new URL(`${/base_url: (\S+)/.exec(providers)[1]}/chat/completions`);
const agent = new Agent({ connections: 256 });
const KEY = 'sk-bare-relay';

const server = createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    if (req.url.endsWith('/_emulator/credits')) return res.end('{}');
    const body = Buffer.concat(parts).toString().replace('"bench/', '"local/');
    agent.dispatch(
      { origin: upstream.origin, path: upstream.pathname, method: 'POST', headers: { authorization: `Bearer ${process.env.UP_KEY}`, 'content-type': 'application/json' }, body },
      {
        onRequestStart() {},
        onResponseStart(_, status, headers) {
          const out = {};
          for (const k of ['content-type', 'content-length', 'cache-control']) if (headers[k]) out[k] = headers[k];
          res.writeHead(status, out);
        },
        onResponseData(_, chunk) { res.write(chunk); },
        onResponseEnd() { res.end(); },
        onResponseError(_, err) { res.destroy(err); },
      },
    );
  });
});
server.listen(0, '127.0.0.1', () => {
  const root = `http://127.0.0.1:${server.address().port}/api`;
  process.stdout.write(`${JSON.stringify({ api_root: root, api_key: KEY, management_key: KEY })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
