import { describe, expect, it } from 'vitest';
import { hideSecrets, redactValue } from '../../src/internal/hide-secrets.js';
import { ChunkRedactor, redactJson, TextRedactor } from '../../src/internal/redact-text.js';

describe('TextRedactor', () => {
  const key = 'sk-rt-v1-0123456789abcdef';
  const text = `a ${key} b sk-rt-v1-0123 c ${key}`;
  it('hides a secret split across two pieces at any point, and holds back only what may begin one', () => {
    for (let at = 0; at <= text.length; at++) {
      const hide = new TextRedactor([key]);
      const shown = hide.push(text.slice(0, at)) + hide.push(text.slice(at)) + hide.end();
      expect(shown).toBe('a **** b sk-rt-v1-0123 c ****');
    }
    const hide = new TextRedactor([key]);
    expect(hide.push('plain text, nothing held')).toBe('plain text, nothing held');
    expect(hide.push('then sk-rt')).toBe('then ');
    expect(hide.end()).toBe('sk-rt');
  });
  it('hides a secret given a character a piece', () => {
    const hide = new TextRedactor([key, 'other-secret-1']);
    let shown = '';
    for (const c of `x${key}other-secret-1${key.slice(0, 5)}`) shown += hide.push(c);
    expect(shown + hide.end()).toBe(`x********${key.slice(0, 5)}`);
  });
});

describe('TextRedactor and redactJson hide a start a cut left as hideSecrets does', () => {
  const key = 'sk-rt-v1-0123456789abcdef0123';
  it('hides 16 or more characters of a key not followed by the rest, wherever the pieces split', () => {
    const text = `a ${key.slice(0, 20)}! b ${key.slice(0, 24)}`;
    for (let at = 0; at <= text.length; at++) {
      const hide = new TextRedactor([key]);
      expect(hide.push(text.slice(0, at)) + hide.push(text.slice(at)) + hide.end()).toBe('a ****! b ****');
    }
    expect(redactJson({ text: `cut ${key.slice(0, 18)}` }, [key])).toEqual({ text: 'cut ****' });
  });
});

describe('ChunkRedactor: chat chunks printed one JSON line each', () => {
  const key = 'sk-rt-v1-0123456789abcdef';
  const chunk = (index: number, content: string | undefined, finish: string | null = null) => ({ id: 'gen-1', object: 'chat.completion.chunk', model: 'm', choices: [{ index, delta: content === undefined ? {} : { content }, finish_reason: finish }] });
  const text = (chunks: { choices: { delta: { content?: string } }[] }[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  it('a key split across chunks at any point: only what may begin it moves to the next chunk, the finishing one takes the rest', () => {
    const answer = `a ${key} b ${key.slice(0, 5)}`;
    for (let at = 0; at <= answer.length; at++) {
      const hide = new ChunkRedactor([key]);
      const out = [hide.push(chunk(0, answer.slice(0, at))), hide.push(chunk(0, answer.slice(at))), hide.push(chunk(0, undefined, 'stop'))];
      expect(text(out)).toBe(`a **** b ${key.slice(0, 5)}`);
      expect(hide.end()).toEqual([]);
      // What the first chunk's text lost to the next is no longer than a key less one character.
      const whole = hideSecrets(answer.slice(0, at), [key]);
      const first = out[0]!.choices[0]!.delta.content!;
      expect(whole.startsWith(first) && whole.length - first.length < key.length).toBe(true);
    }
  });
  it('choices apart; a stream that ended with no finish_reason gives what was held as a chunk of its own', () => {
    const hide = new ChunkRedactor([key]);
    const out = [hide.push(chunk(0, 'x sk-rt')), hide.push(chunk(1, `y ${key.slice(0, 3)}`)), hide.push(chunk(1, key.slice(3)))];
    expect(out.map((c) => c.choices[0]!.delta.content)).toEqual(['x ', 'y ', '****']);
    expect(hide.end()).toEqual([{ id: 'gen-1', object: 'chat.completion.chunk', created: undefined, model: 'm', choices: [{ index: 0, delta: { content: 'sk-rt' }, finish_reason: null }] }]);
  });
  it('the rest of a chunk hidden whole; no secrets: the chunk as it came', () => {
    const c = { ...chunk(0, 'hi'), id: key };
    expect(new ChunkRedactor([key]).push(c).id).toBe('****');
    expect(new ChunkRedactor([]).push(c)).toBe(c);
  });
});

describe('hideSecrets and redactValue: the keys io.addSecret takes', () => {
  it('hide strings wherever they stand in a value, the value itself when none holds one', () => {
    const key = 'sk-rt-v1-0123456789abcdef';
    const value = { a: [`x ${key}`, 1, null], [key]: { b: 'plain' }, c: 'plain' };
    expect(redactValue(value, [key])).toEqual({ a: ['x ****', 1, null], '****': { b: 'plain' }, c: 'plain' });
    const clean = { a: ['x'], b: { c: 'y' } };
    expect(redactValue(clean, [key])).toBe(clean);
    expect(hideSecrets('ab12cd34 and ab12cd3', ['ab12cd34'])).toBe('**** and ab12cd3');
  });
});
