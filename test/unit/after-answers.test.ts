import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { afterAnswers, answerJson } from '../../src/emulator/http/http.js';
import { SETTLE } from '../support/until.js';

let server: Server | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  server?.close();
  server = undefined;
});

/** A server whose every answer is followed by work that throws, then work that counts itself done. */
async function throwingAfterAnswers(done: string[]): Promise<string> {
  server = createServer((req, res) => {
    answerJson(res, 200, JSON.stringify({ url: req.url }), 'req_1');
    afterAnswers(() => {
      throw new Error(`keeping ${req.url} failed`);
    });
    afterAnswers(() => done.push(req.url ?? ''));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('afterAnswers (work after an answer went out)', () => {
  it('contains a throw: one stderr line, the answer whole, the work after it and the next request fine', async () => {
    const said: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((text: string | Uint8Array) => (said.push(String(text)), true));
    const done: string[] = [];
    const root = await throwingAfterAnswers(done);
    for (const path of ['/a', '/b']) {
      const res = await fetch(`${root}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ url: path });
    }
    await vi.waitFor(() => expect(done).toEqual(['/a', '/b']), SETTLE);
    const lines = said.filter((l) => l.includes('failed'));
    expect(lines).toEqual(['emulator: internal error after an answer went out: keeping /a failed\n', 'emulator: internal error after an answer went out: keeping /b failed\n']);
  });

  it('contains a throw of work run at once (no answer waiting)', () => {
    const said: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((text: string | Uint8Array) => (said.push(String(text)), true));
    expect(() =>
      afterAnswers(() => {
        throw new Error('at once');
      }),
    ).not.toThrow();
    expect(said).toEqual(['emulator: internal error after an answer went out: at once\n']);
  });
});
