import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import type { Flavor } from '../../src/emulator/server.js';

// Every keys, activity, credits, models and generation method of the official @openrouter/sdk that
// the emulator serves, against it (both flavours of router serve): each answer parses (the SDK
// validates it), with what was sent.
describe.each<Flavor>(['spec', 'deployed'])('router serve --flavor %s', (flavor) => {
  let t: CliEnv;
  let sdk: (key: string) => import('@openrouter/sdk').OpenRouter;
  beforeAll(async () => {
    t = await startCliEnv({ flavor });
    const { OpenRouter } = await import('@openrouter/sdk');
    sdk = (key) => new OpenRouter({ apiKey: key, serverURL: `${t.apiRoot}/v1`, retryConfig: { strategy: 'none' } });
  });
  afterAll(() => t.close());

  const chat = async (key: string, model: string) => {
    const res = await fetch(`${t.apiRoot}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(200);
    return (await res.json()) as { id: string; usage: { prompt_tokens: number; completion_tokens: number } };
  };

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
      // A workspace is named by a UUID, as the OpenAPI has it (was "default"); its old name is still taken.
      const workspaceId = made.data.workspaceId;
      expect(workspaceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect((await m.apiKeys.list({ includeDisabled: true, workspaceId })).data.find((k) => k.hash === hash)).toMatchObject({ disabled: true, workspaceId });
      expect((await m.apiKeys.list({ includeDisabled: true, workspaceId: 'default' })).data.map((k) => k.hash)).toContain(hash);
      const other = await m.apiKeys.create({ requestBody: { name: 'sdk-ws', workspaceId, creatorUserId: null, limit: null, limitReset: null, expiresAt: null } });
      expect(other.data).toMatchObject({ workspaceId, limit: null, limitReset: null });
      expect(await m.apiKeys.delete({ hash: other.data.hash })).toEqual({ deleted: true });
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
      const { id } = await chat(t.apiKey, 'local/echo');
      expect((await a.generations.getGeneration({ id })).data.id).toBe(id);
    });
  });

  describe("@openrouter/sdk models.list with the OpenAPI's filters and sorts (GET /models)", () => {
    it('keeps the models each filter names; a bound by a fact no local model has keeps none', async () => {
      const a = sdk(t.apiKey);
      const list = async (q: Parameters<typeof a.models.list>[0]) => ids(await a.models.list(q));
      // Before: every query answered the whole list.
      expect(await list({ q: 'ECHO' })).toEqual(['local/echo']);
      expect(await list({ supportedParameters: 'tools' })).toEqual(['local/tools']);
      expect(await list({ supportedParameters: 'tools,reasoning' })).toEqual([]);
      expect(await list({ inputModalities: 'text,image' })).toEqual(['local/vision']);
      expect(await list({ outputModalities: 'all', modelAuthors: 'openai' })).toEqual([]);
      expect(await list({ providers: 'local-beta' })).not.toContain('local/vision');
      expect(await list({ context: 10_000_000 })).toEqual([]);
      expect(await list({ minPrice: 1_000 })).toEqual([]);
      expect(await list({ category: 'programming' })).toEqual([]);
      expect(await list({ minIntelligenceIndex: 1 })).toEqual([]);
      expect(await list({ distillable: 'true' })).toEqual([]);
      const all = await list({});
      expect(await list({ maxPrice: 1_000, zdr: 'true', distillable: 'false', arch: 'other' })).toEqual(all);
      // Sorted by the mean of the prompt and completion prices, ties in the list's order.
      const models: { id: string; pricing: { prompt: string; completion: string } }[] = [];
      for await (const page of await a.models.list()) models.push(...page.result.data);
      const mean = (id: string) => ((p) => Number(p.prompt) + Number(p.completion))(models.find((m) => m.id === id)!.pricing);
      const cheapest = await list({ sort: 'pricing-low-to-high' });
      expect(cheapest).toEqual(all.slice().sort((x, y) => mean(x) - mean(y)));
      expect(cheapest).not.toEqual(all);
      expect(await list({ sort: 'pricing-high-to-low' })).toEqual(all.slice().sort((x, y) => mean(y) - mean(x)));
      // Pages of a filtered list page through what the filter keeps.
      expect(await list({ q: 'o', limit: 2 })).toEqual(all.filter((id) => id.includes('o')));
    });

    it('refuses a value the OpenAPI does not allow with a 400 naming the parameter', async () => {
      for (const [q, said] of [['sort=cheap', /^sort must be one of most-popular, /], ['category=poetry', /^category must be one of programming, /], ['context=lots', /^context must be a whole number/], ['max_price=-1', /^max_price must be a number from 0/]] as const) {
        const res = await fetch(`${t.apiRoot}/v1/models?${q}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
        expect(res.status, q).toBe(400);
        expect(((await res.json()) as { error: { message: string } }).error.message, q).toMatch(said);
      }
    });
  });

  describe('@openrouter/sdk analytics.getUserActivity (GET /activity)', () => {
    it('parses the rows, with each filter the SDK sends: date, api_key_hash, group_by, workspace_id', async () => {
      const m = sdk(t.managementKey);
      const made = await m.apiKeys.create({ requestBody: { name: 'sdk-activity' } });
      const sent = await chat(made.key, 'local/lorem');
      // Completed UTC days only: today's calls show tomorrow.
      expect((await m.analytics.getUserActivity({ apiKeyHash: made.data.hash })).data).toEqual([]);
      t.emu.store.advanceClock(86_400_000);
      const all = (await m.analytics.getUserActivity()).data;
      expect(all.length).toBeGreaterThan(0);
      expect(all[0]).toMatchObject({ date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/), modelPermaslug: expect.any(String), endpointId: expect.any(String), providerName: expect.any(String), byokUsageInference: 0 });
      expect(all.every((r) => r.workspaceId === undefined)).toBe(true);
      const mine = (await m.analytics.getUserActivity({ apiKeyHash: made.data.hash })).data;
      expect(mine.map((r) => [r.model, r.requests, r.promptTokens, r.completionTokens])).toEqual([['local/lorem', 1, sent.usage.prompt_tokens, sent.usage.completion_tokens]]);
      const day = mine[0]!.date;
      expect((await m.analytics.getUserActivity({ date: day, apiKeyHash: made.data.hash })).data).toEqual(mine);
      const split = (await m.analytics.getUserActivity({ groupBy: 'workspace', workspaceId: made.data.workspaceId })).data;
      expect(split.length).toBe(all.length);
      expect(split.every((r) => r.workspaceId === made.data.workspaceId)).toBe(true);
    });

    it("refuses as the SDK's typed errors: a date past the 30 days (400), a standard key (403)", async () => {
      const { BadRequestResponseError, ForbiddenResponseError } = await import('@openrouter/sdk/models/errors');
      await expect(sdk(t.managementKey).analytics.getUserActivity({ date: '2001-01-01' })).rejects.toBeInstanceOf(BadRequestResponseError);
      await expect(sdk(t.apiKey).analytics.getUserActivity()).rejects.toBeInstanceOf(ForbiddenResponseError);
    });
  });
});
