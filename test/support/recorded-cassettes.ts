import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmulator } from '../../src/emulator/server.js';
import { parseProviders } from '../../src/emulator/providers/config.js';

/**
 * A chat of model `t/m` recorded whole and streamed by a gateway of `providers` (a providers file's text) into
 * `<dir>/recorded`: the two cassettes as written, by kind, for a test to edit.
 */
export async function recordedChats(dir: string, providers: string): Promise<{ whole: any; stream: any }> {
  const cassettes = join(dir, 'recorded');
  const e = await startEmulator({ stateDir: join(dir, 'rec'), port: 0, gateway: { config: parseProviders(providers, {}), cassettes: { dir: cassettes, mode: 'record' } } });
  try {
    for (const stream of [false, true]) {
      const res = await fetch(`${e.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${e.store.firstKeys().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 't/m', stream, messages: [{ role: 'user', content: 'hi' }] }) });
      if (res.status !== 200) throw new Error(`recording a chat answered ${res.status}: ${await res.text()}`);
      await res.text();
    }
  } finally {
    await e.close();
  }
  const recorded: Record<string, any> = {};
  for (const f of readdirSync(cassettes)) {
    const c = JSON.parse(readFileSync(join(cassettes, f), 'utf8'));
    recorded[c.response.chunks ? 'stream' : 'whole'] = c;
  }
  return { whole: recorded.whole, stream: recorded.stream };
}
