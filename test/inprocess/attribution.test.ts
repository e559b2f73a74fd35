import { describe, expect, it } from 'vitest';
import { sharedCliEnv, type CliEnv } from '../support/cli-env.js';

// App attribution (issue 42): an app URL, title and categories from the environment or a profile,
// sent with every call as the deployed service reads them.
let t: CliEnv;
sharedCliEnv((e) => (t = e));

const sentHeaders = () => t.requests().find((q) => q.path === '/v1/chat/completions')!.headers;
const chat = (env: Record<string, string> = {}) => t.run(['chat', '--model', 'local/echo', 'hi'], { env });

describe('attribution headers', () => {
  it('from the environment: HTTP-Referer, X-OpenRouter-Title and X-Title, X-OpenRouter-Categories', async () => {
    const r = await chat({ ROUTER_APP_URL: 'https://example.com/my-app', ROUTER_APP_TITLE: 'My App', ROUTER_APP_CATEGORIES: 'cli-agent, programming-app' });
    expect(r).toMatchObject({ code: 0, stdout: 'hi\n' });
    expect(sentHeaders()).toMatchObject({ 'http-referer': 'https://example.com/my-app', 'x-openrouter-title': 'My App', 'x-title': 'My App', 'x-openrouter-categories': 'cli-agent,programming-app' });
  });

  it('from a profile, the environment going before it; none set, none sent', async () => {
    await chat();
    for (const h of ['http-referer', 'x-openrouter-title', 'x-title', 'x-openrouter-categories']) expect(sentHeaders()[h]).toBeUndefined();
    for (const [k, v] of [['app_url', 'https://example.org'], ['app_title', 'From Profile'], ['app_categories', 'cli-agent']]) {
      expect(await t.run(['config', 'set', k!, v!])).toMatchObject({ code: 0 });
    }
    t.clearRequests();
    await chat();
    expect(sentHeaders()).toMatchObject({ 'http-referer': 'https://example.org', 'x-openrouter-title': 'From Profile', 'x-openrouter-categories': 'cli-agent' });
    t.clearRequests();
    await chat({ ROUTER_APP_TITLE: 'From Env' });
    expect(sentHeaders()).toMatchObject({ 'x-openrouter-title': 'From Env', 'http-referer': 'https://example.org' });
    for (const k of ['app_url', 'app_title', 'app_categories']) await t.run(['config', 'unset', k]);
  });

  it('a value that cannot be sent is refused in one line naming where it came from, nothing sent', async () => {
    expect(await t.run(['config', 'set', 'app_url', 'not a url'])).toMatchObject({ code: 2, stderr: 'error: app_url: "not a url" is not an http(s) URL (e.g. https://example.com/my-app)\n' });
    expect((await t.run(['config', 'set', 'app_categories', 'CLI Agent'])).stderr).toMatch(/^error: app_categories: "CLI Agent" is not a category/);
    const bad = await chat({ ROUTER_APP_TITLE: 'caf\u00e9' });
    expect(bad).toMatchObject({ code: 2, stdout: '', stderr: 'error: ROUTER_APP_TITLE is sent as an HTTP header: use printable ASCII characters only\n' });
    expect(t.requests()).toHaveLength(0);
  });
});
