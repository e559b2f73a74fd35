import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulatorUsers } from '../support/users.js';

// A user of the openai SDK or CLI keeps a schema as they sent it: inside chat's response_format, its json_schema
// part, or Responses' text.format. router takes the schema inside (and its name), in chat and responses alike.
const PERSON = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false };
const WRAPPED: Record<string, unknown> = {
  response_format: { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: PERSON } },
  json_schema: { name: 'person', strict: true, schema: PERSON },
  text_format: { type: 'json_schema', name: 'person', strict: true, schema: PERSON },
};

const users = emulatorUsers('router-schema-wrapped-');

describe('--schema given a schema in the wrapper it is sent in', () => {
  for (const [form, value] of Object.entries(WRAPPED)) {
    it(`${form}: the schema inside is sent, named as there, and the answer follows it`, async () => {
      const u = users.user();
      const file = join(u.home, `${form}.json`);
      writeFileSync(file, JSON.stringify(value));
      const before = users.emu.requestLog.length;
      const chat = await u.run(['chat', '--model', 'local/lorem', '--schema', file, 'a person']);
      expect(chat.stderr).toBe('');
      expect(chat.code).toBe(0);
      expect(Object.keys(JSON.parse(chat.stdout) as object).sort()).toEqual(['age', 'name']);
      const sent = users.emu.requestLog.slice(before).find((e) => e.path.endsWith('/chat/completions')) as { body: { response_format: unknown } };
      expect(sent.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'person', schema: PERSON, strict: true } });
      const responses = await u.run(['responses', '--model', 'local/lorem', '--schema', file, 'a person']);
      expect(responses.code).toBe(0);
      expect(Object.keys(JSON.parse(responses.stdout) as object).sort()).toEqual(['age', 'name']);
    });
  }

  it('a wrapper with no schema in it, or JSON mode, is refused saying so, nothing sent', async () => {
    const u = users.user();
    const before = users.emu.requestLog.length;
    const empty = join(u.home, 'empty.json');
    writeFileSync(empty, JSON.stringify({ type: 'json_schema', json_schema: { name: 'person' } }));
    const r = await u.run(['chat', '--model', 'local/lorem', '--schema', empty, 'a person']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('whose "schema" is missing');
    const mode = await u.run(['chat', '--model', 'local/lorem', '--schema', '{"type":"json_object"}', 'a person']);
    expect(mode).toMatchObject({ code: 2, stdout: '' });
    expect(mode.stderr).toContain("chat's JSON mode");
    expect(users.emu.requestLog.length).toBe(before);
  });

  it('a schema whose property is named schema stays a schema', async () => {
    const u = users.user();
    const own = { type: 'object', properties: { schema: { type: 'string' } }, required: ['schema'] };
    const r = await u.run(['chat', '--model', 'local/lorem', '--schema', JSON.stringify(own), 'x']);
    expect(r.code).toBe(0);
    expect(Object.keys(JSON.parse(r.stdout) as object)).toEqual(['schema']);
  });
});
