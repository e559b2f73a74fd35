import { describe, expect, it } from 'vitest';
import { nearestModel } from '../../src/cli/service/model-hint.js';
import { editDistance as distance } from '../../src/internal/did-you-mean.js';

const KNOWN = ['local/echo', 'local/lorem', 'local/embed', 'local/tts', 'local/judge', 'local/unavailable'];

describe('the model meant by a mistyped id', () => {
  it('edit distance counts a swap of neighbours as one', () => {
    expect(distance('echo', 'echo')).toBe(0);
    expect(distance('ech', 'echo')).toBe(1);
    expect(distance('ecoh', 'echo')).toBe(1);
    expect(distance('', 'abc')).toBe(3);
    expect(distance('kitten', 'sitting')).toBe(3);
  });

  it('suggests a near id, a case slip included, and nothing for one far from every id', () => {
    expect(nearestModel('local/ech', KNOWN)).toBe('local/echo');
    expect(nearestModel('local/ecoh', KNOWN)).toBe('local/echo');
    expect(nearestModel('Local/Echo', KNOWN)).toBe('local/echo');
    expect(nearestModel('local/lorm', KNOWN)).toBe('local/lorem');
    expect(nearestModel('openai/gpt-4o', KNOWN)).toBeUndefined();
    // A known id refused for its kind (a chat model given to embed) is not suggested back.
    expect(nearestModel('local/echo', ['local/echo'])).toBeUndefined();
  });
});
