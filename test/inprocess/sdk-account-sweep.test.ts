import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// Every keys, credits, models and generation method of the official @openrouter/sdk that the
// emulator serves, against it: each answer parses (the SDK validates it), with what was sent.
let t: CliEnv;
let sdk: (key: string) => import('@openrouter/sdk').OpenRouter;
beforeAll(async () => {
  t = await startCliEnv();
  const { OpenRouter } = await import('@openrouter/sdk');
  sdk = (key) => new OpenRouter({ apiKey: key, serverURL: `${t.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
});
afterAll(() => t.close());

const ids = async (pages: AsyncIterable<{ result: { data: { id: string }[] } }>) => {
  const out: string[] = [];
  for await (const page of pages) out.push(...page.result.data.map((m) => m.id));
  return out;
};

describe('@openrouter/sdk apiKeys', () => {
  it('creates, lists, gets, updates and deletes a key with its limit; reads the current key', async () => {
    const m = sdk(t.managementKey);
    const expiresAt = new Date(Date.now() + 86_400_000);
    const made = await m.apiKeys.create({ requestBody: { name: 'sdk', limit: 3, limitReset: 'weekly', includeByokInLimit: true, expiresAt } });
    expect(made.data).toMatchObject({ name: 'sdk', limit: 3, limitRemaining: 3, limitReset: 'weekly', includeByokInLimit: true, disabled: false });
    expect(made.data.expiresAt?.getTime()).toBe(expiresAt.getTime());
    const hash = made.data.hash;
    expect((await m.apiKeys.list({ includeDisabled: true, offset: 0 })).data.map((k) => k.hash)).toContain(hash);
    expect((await m.apiKeys.get({ hash })).data.name).toBe('sdk');
    const updated = await m.apiKeys.update({ hash, requestBody: { limit: 4, limitReset: null, disabled: true } });
    expect(updated.data).toMatchObject({ limit: 4, limitReset: null, disabled: true });
    expect((await m.apiKeys.list()).data.map((k) => k.hash)).not.toContain(hash);
    const mine = (await sdk(made.key).apiKeys.getCurrentKeyMetadata().catch((e: Error) => e)) as Error;
    expect(mine.message).toContain('API key is disabled');
    expect((await m.apiKeys.getCurrentKeyMetadata()).data.isManagementKey).toBe(true);
    expect(await m.apiKeys.delete({ hash })).toEqual({ deleted: true });
    await expect(m.apiKeys.get({ hash })).rejects.toThrow(/No API key with hash/);
  });
});

describe('@openrouter/sdk credits, models and generations', () => {
  it('answer and parse', async () => {
    expect((await sdk(t.managementKey).credits.getCredits()).data.totalCredits).toBeGreaterThan(0);
    const a = sdk(t.apiKey);
    const listed = await ids(await a.models.list());
    expect(listed).toContain('local/echo');
    expect(await ids(await a.models.listForUser({ bearer: t.apiKey }))).toEqual(listed);
    expect((await a.models.count()).data.count).toBe(listed.length);
    expect((await a.models.get({ author: 'local', slug: 'echo' })).data.id).toBe('local/echo');
    expect((await a.endpoints.list({ author: 'local', slug: 'echo' })).data.endpoints.length).toBe(2);
    expect(await ids(await a.embeddings.listModels())).toEqual(['local/embed']);
    const res = await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }) });
    const { id } = (await res.json()) as { id: string };
    expect((await a.generations.getGeneration({ id })).data.id).toBe(id);
  });
});
