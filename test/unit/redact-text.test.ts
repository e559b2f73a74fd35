import { describe, expect, it } from 'vitest';
import { hideSecrets, redactValue } from '../../src/internal/hide-secrets.js';
import { redactJson, TextRedactor } from '../../src/internal/redact-text.js';

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
