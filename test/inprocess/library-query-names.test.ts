import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.js';
import { RESOURCE_CALLS, RouterClient, ValidationError } from '../../src/client/index.js';
import { emulatorPerFile } from '../support/inprocess-env.js';

// A query object (a listing's filters) named only what the call reads: a mistyped filter was left unread, so
// `batches.list({ stauts: ['failed'] })` listed every batch, and `keys.list({ include_disabled: true })` (the
// service's spelling) silently left the disabled keys out. Each call with a query now checks it against one list
// (RESOURCE_CALLS), the same list it sends the query by, whose names are the spec's.
let emu: Emulator;
emulatorPerFile('router-query-names-', (f) => ({ emu } = f));

const SHARED = resolve(import.meta.dirname, '..', '..', '..', 'shared');

/** Every call taking a query: its label, where the query comes, and its names (ours to the service's). */
function queryCalls() {
  const calls: { name: string; method: string; at: number; names: Readonly<Record<string, string>> }[] = [];
  for (const [name, methods] of Object.entries(RESOURCE_CALLS)) {
    for (const [method, spec] of Object.entries(methods)) {
      if (spec && spec.length === 3) calls.push({ name, method, at: spec[2][0], names: spec[2][1] });
    }
  }
  return calls;
}

/** The call made with `query` and no options: its error, or 'taken' once it went on. */
async function outcome(client: RouterClient, name: string, method: string, query: object): Promise<string> {
  const resource = (client as unknown as Record<string, Record<string, (...a: unknown[]) => unknown>>)[name]!;
  try {
    const made = resource[method]!(query);
    if (made && typeof made === 'object' && Symbol.asyncIterator in made && !('then' in made)) await (made as AsyncGenerator).next();
    else await made;
    return 'taken';
  } catch (err) {
    return err instanceof ValidationError ? `${err.code}: ${err.message}` : 'taken';
  }
}

describe('a query name a call does not know', () => {
  it('is refused, naming ours for the service\'s spelling, else the nearest, else every one; nothing is sent', async () => {
    const client = new RouterClient({ apiKey: emu.store.firstKeys().managementKey, apiRoot: emu.apiRoot, maxRetries: 0 });
    const before = emu.requestLog.length;
    const cases: [string, string, object, string][] = [
      ['batches', 'list', { stauts: ['failed'] }, 'client.batches.list() has no query name "stauts": did you mean status?'],
      ['batches', 'listAll', { createdAfter: '1' }, 'client.batches.listAll() has no query name "createdAfter": did you mean created_after?'],
      ['keys', 'list', { include_disabled: true }, 'client.keys.list() has no query name "include_disabled": did you mean includeDisabled?'],
      ['keys', 'list', { ofset: 100 }, 'client.keys.list() has no query name "ofset": did you mean offset?'],
      ['activity', 'list', { api_key_hash: 'abc' }, 'client.activity.list() has no query name "api_key_hash": did you mean apiKeyHash?'],
      ['activity', 'list', { day: '2026-01-01' }, 'client.activity.list() has no query name "day"; it takes date, apiKeyHash, userId, workspaceId, groupBy'],
    ];
    for (const [name, method, query, message] of cases) expect(await outcome(client, name, method, query)).toBe(`invalid_request: ${message}: nothing was sent`);
    expect(emu.requestLog.length).toBe(before);
    // Every call with a query is among those checked.
    expect(queryCalls().map((c) => `${c.name}.${c.method}`)).toEqual(['batches.list', 'batches.listAll', 'keys.list', 'activity.list']);
    await client.close();
  });

  it('each name a call takes is sent as the service spells it, and a mistyped one filters nothing any more', async () => {
    const client = new RouterClient({ apiKey: emu.store.firstKeys().managementKey, apiRoot: emu.apiRoot, maxRetries: 0 });
    const values: Record<string, unknown> = { limit: 5, after: 'batch_x', status: ['failed'], created_after: '1', created_before: '2', offset: 0, includeDisabled: true, workspaceId: '00000000-0000-4000-8000-000000000000', date: '2026-01-01', apiKeyHash: 'abc', userId: 'user_x', groupBy: 'workspace' };
    for (const call of queryCalls()) {
      for (const [ours, wire] of Object.entries(call.names)) {
        const from = emu.requestLog.length;
        expect(await outcome(client, call.name, call.method, { [ours]: values[ours] }), `${call.name}.${call.method} ${ours}`).toBe('taken');
        const sent = emu.requestLog.slice(from).map((r) => r.query[wire]);
        expect(sent.length, `${call.name}.${call.method} ${ours}`).toBeGreaterThan(0);
        expect(sent[0], `${call.name}.${call.method} ${ours}`).toEqual([values[ours]].flat().map(String));
      }
    }
    // A disabled key is listed only with includeDisabled (and its service's spelling is refused, no longer read as none).
    const made = await client.keys.create({ name: 'query-names-disabled' });
    await client.keys.update(made.data.hash, { disabled: true });
    expect((await client.keys.list()).some((k) => k.hash === made.data.hash)).toBe(false);
    expect((await client.keys.list({ includeDisabled: true })).some((k) => k.hash === made.data.hash)).toBe(true);
    await expect(client.keys.list({ include_disabled: true } as never)).rejects.toThrow(ValidationError);
    await client.close();
  });

  it('the names sent are those the spec gives each call', () => {
    // api.md's table of the batch listing's query parameters; the official OpenAPI's for the keys and the activity.
    const api = readFileSync(resolve(SHARED, 'spec', 'api.md'), 'utf8');
    const table = api.slice(api.indexOf('### GET `{base_url}/batches`'), api.indexOf('### GET `{base_url}/batches/{id}`'));
    const batchNames = [...table.matchAll(/^\| ([a-z_]+) \|/gm)].map((m) => m[1]);
    const openapi = readFileSync(resolve(SHARED, 'reference', 'openrouter-openapi.yaml'), 'utf8');
    // One path's part of the description, parsed alone (the whole of it takes seconds).
    const paramsOf = (path: string) => {
      const from = openapi.indexOf(`\n  ${path}:\n`);
      const part = openapi.slice(from + 1, openapi.indexOf('\n  /', from + 1));
      const route = (YAML.parse(part) as Record<string, { get: { parameters: { in: string; name: string }[] } }>)[path]!;
      return route.get.parameters.filter((p) => p.in === 'query').map((p) => p.name);
    };
    const wire = (name: string, method: string) => Object.values(queryCalls().find((c) => c.name === name && c.method === method)!.names);
    expect(wire('batches', 'list').sort()).toEqual(batchNames.sort());
    expect(wire('batches', 'listAll').sort()).toEqual(batchNames.sort());
    expect(wire('keys', 'list').sort()).toEqual(paramsOf('/keys').sort());
    expect(wire('activity', 'list').sort()).toEqual(paramsOf('/activity').sort());
  });
});
