import { describe, expect, it } from 'vitest';
import { parseProviders } from '../../src/emulator/providers/config.js';

const file = (url: string) => `providers:\n  - { name: up, base_url: "${url}", models: { a/b: c } }\n`;

describe('a provider base_url the gateway cannot add its paths to, refused when the file is read', () => {
  it.each([
    // Before: asked at http://h/v1?api-version=1/chat/completions (the path inside the query), an upstream 404.
    ['https://h.example/openai/v1?api-version=2024-06-01', 'provider up: base_url must end in its path, without ?query or #fragment (/chat/completions and the others are added at its end)'],
    ['http://127.0.0.1:11434/v1#models', 'provider up: base_url must end in its path, without ?query or #fragment (/chat/completions and the others are added at its end)'],
    // Before: started, then every request asked .../v1/chat/completions/chat/completions: an upstream 404, a 502.
    ['http://127.0.0.1:11434/v1/chat/completions', 'provider up: base_url ends in /chat/completions, which the gateway adds itself: give the root before it, http://127.0.0.1:11434/v1'],
    ['https://api.openai.com/v1/responses/', 'provider up: base_url ends in /responses, which the gateway adds itself: give the root before it, https://api.openai.com/v1'],
    ['http://127.0.0.1:8000/v1/embeddings', 'provider up: base_url ends in /embeddings, which the gateway adds itself: give the root before it, http://127.0.0.1:8000/v1'],
    // Before: the user and password silently dropped by the request, and kept in the file.
    ['https://me:sk-secret@h.example/v1', 'provider up: base_url holds a user or password: keys never go in the file; name an environment variable with api_key_env'],
  ])('%s', (url, said) => {
    expect(() => parseProviders(file(url), {})).toThrow(said);
  });

  it('a path with or without its last slash is taken', () => {
    expect(parseProviders(file('http://127.0.0.1:11434/v1/'), {}).providers[0]!.baseUrl).toBe('http://127.0.0.1:11434/v1');
  });
});
