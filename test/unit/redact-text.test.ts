import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { hiddenStart, hideSecrets, redactValue, withJsonForms } from '../../src/internal/hide-secrets.js';
import { firstWholeWords, lastWords } from '../../src/internal/key-safe-cut.js';
import { EventRedactor } from '../../src/internal/redact-events.js';
import { IO } from '../../src/cli/io/io.js';
import { table } from '../../src/cli/io/table.js';
import { ChunkRedactor, TextRedactor } from '../../src/internal/redact-text.js';

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

describe('TextRedactor and redactValue hide a start a cut left as hideSecrets does', () => {
  const key = 'sk-rt-v1-0123456789abcdef0123';
  it('hides 16 or more characters of a key not followed by the rest, wherever the pieces split', () => {
    const text = `a ${key.slice(0, 20)}! b ${key.slice(0, 24)}`;
    for (let at = 0; at <= text.length; at++) {
      const hide = new TextRedactor([key]);
      expect(hide.push(text.slice(0, at)) + hide.push(text.slice(at)) + hide.end()).toBe('a ****! b ****');
    }
    expect(redactValue({ text: `cut ${key.slice(0, 18)}` }, [key])).toEqual({ text: 'cut ****' });
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

describe('hideSecrets: a start a cut left, where the text shows the cut', () => {
  const key = 'sk-rt-v1-0123456789abcdef';
  it('8 characters or more of a key, past its kind, at the end of the text, a line, a column or before a closing quote', () => {
    for (const n of [10, 12, 15]) {
      const start = key.slice(0, n);
      expect(hideSecrets(`title ${start}`, [key])).toBe('title ****');
      expect(hideSecrets(`a ${start}\nb ${start}\tc "${start}" '${start}'`, [key])).toBe('a ****\nb ****\tc "****" \'****\'');
      // Inside a text, an ellipsis after it (a service's own label of a key): as it was, under 16 characters.
      expect(hideSecrets(`a ${start} b ${start}...cdef`, [key])).toBe(`a ${start} b ${start}...cdef`);
    }
    expect(hideSecrets(`short ${key.slice(0, 7)}`, [key])).toBe(`short ${key.slice(0, 7)}`);
  });
  it("a key's kind alone is every such key's start, not this one's: shown, at a line's end too", () => {
    // Hidden before: "keys start with ****".
    const key = 'sk-or-v1-0123456789abcdef0123456789abcdef';
    const text = 'keys start with sk-or-v1\nor with sk-or-v1-\t"sk-or-v1-"';
    expect(hideSecrets(text, [key])).toBe(text);
    expect(hideSecrets('one past it: sk-or-v1-0\n', [key])).toBe('one past it: ****\n');
    for (const [k, kind] of [['sk-rt-mgmt-00112233445566778899', 'sk-rt-mgmt-'], ['sk_live_abcdefghijkl', 'sk_live_'], ['sk-ant-api03-AbCdEfGhIj', 'sk-ant-api03-']] as const) {
      expect(hideSecrets(`${kind}\n`, [k])).toBe(`${kind}\n`);
      expect(hideSecrets(`${k.slice(0, kind.length + 1)}\n`, [k])).toBe('****\n');
    }
    // A key of no kind: 8 characters, as before.
    expect(hideSecrets('password\n', ['password1234'])).toBe('****\n');
  });
  it('withJsonForms: a key as JSON text writes it (`"`, `\\`, `/` escaped)', () => {
    const quoted = 'sk-rt-"a\\b/c-0123456789';
    const text = `{"a":${JSON.stringify(quoted)},"b":"${JSON.stringify(quoted).slice(1, -1).replaceAll('/', '\\/')}"}`;
    expect(hideSecrets(text, withJsonForms([quoted]))).toBe('{"a":"****","b":"****"}');
    expect(hideSecrets(text, [quoted])).toBe(text);
  });
});

describe('EventRedactor: Responses events printed one JSON line each', () => {
  const key = 'sk-rt-v1-0123456789abcdef';
  const delta = (n: number, text: string, content_index = 0) => ({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index, delta: text, sequence_number: n });
  const done = (n: number, text: string) => ({ type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text, sequence_number: n });
  type Ev = { type: string; delta?: string; text?: string; sequence_number: number };
  it('a key split across two deltas at any point: every event printed once, in order, its own sequence_number', () => {
    const answer = `a ${key} b ${key.slice(0, 5)}`;
    for (let at = 0; at <= answer.length; at++) {
      const hide = new EventRedactor([key]);
      const out = [delta(0, answer.slice(0, at)), delta(1, answer.slice(at)), done(2, answer), { type: 'response.completed', sequence_number: 3 }].flatMap((e) => hide.push(e)) as Ev[];
      expect(out.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3]);
      expect(out.slice(0, 2).map((e) => e.delta).join('')).toBe(`a **** b ${key.slice(0, 5)}`);
      expect(out[2]!.text).toBe(`a **** b ${key.slice(0, 5)}`);
      expect(hide.end()).toEqual([]);
    }
  });
  it("an event whose delta may begin a key waits, the events after it behind it; a stream cut before .done gives it what was held", () => {
    const hide = new EventRedactor([key]);
    expect(hide.push(delta(0, 'x sk-rt'))).toEqual([]);
    expect(hide.push({ type: 'response.in_progress', sequence_number: 1 })).toEqual([]);
    const out = hide.push(delta(2, '-v1-0123 y')) as Ev[];
    expect(out.map((e) => [e.sequence_number, e.delta])).toEqual([[0, 'x '], [1, undefined], [2, 'sk-rt-v1-0123 y']]);
    expect(hide.push(delta(3, ` ${key.slice(0, 12)}`))).toEqual([]);
    // 12 characters of a key at the stream's end: a cut key's start, hidden.
    expect((hide.end() as Ev[]).map((e) => [e.sequence_number, e.delta])).toEqual([[3, ' ****']]);
    const none = { type: 'x', sequence_number: 0 };
    expect(new EventRedactor([]).push(none)[0]).toBe(none);
  });
});

describe('IO: stderr', () => {
  it('every write hides the keys the run knows (a line written raw, not only note/info/error)', () => {
    const err = new PassThrough();
    const io = new IO({}, { stdin: new PassThrough(), stdout: new PassThrough(), stderr: err, env: {} });
    io.addSecret('sk-rt-v1-0123456789abcdef');
    io.err('error: /model: sk-rt-v1-0123456789abcdef must look like author/name\n');
    expect(String(err.read())).toBe('error: /model: **** must look like author/name\n');
  });
  it("an error line cut at 1,000 characters: the environment's keys hidden before the cut (old: 14 characters and …)", () => {
    const err = new PassThrough();
    const key = 'sk-rt-mgmt-fedcba98765432100123456789';
    const io = new IO({}, { stdin: new PassThrough(), stdout: new PassThrough(), stderr: err, env: { ROUTER_MANAGEMENT_KEY: key, ROUTER_CONFIG_DIR: '/nonexistent/router-config' } });
    io.error(`${'x'.repeat(985)} ${key} ${'y'.repeat(100)}`);
    const said = String(err.read());
    expect(said).toBe(`error: ${'x'.repeat(985)} **** ${'y'.repeat(9)}…\n`);
    expect(said).not.toContain(key.slice(0, 12));
  });
  it("before any command registered them: the environment's keys, read at the first write", () => {
    const err = new PassThrough();
    const key = 'sk-rt-v1-fedcba9876543210';
    const io = new IO({}, { stdin: new PassThrough(), stdout: new PassThrough(), stderr: err, env: { ROUTER_API_KEY: key, ROUTER_CONFIG_DIR: '/nonexistent/router-config' } });
    io.note(`warning: ${key} left unused`);
    expect(String(err.read())).toBe('warning: **** left unused\n');
  });
});

describe('table: a column cut to fit the terminal', () => {
  it('is cut after its keys are hidden: no start of one left before the "…"', () => {
    const key = 'sk-rt-v1-0123456789abcdef';
    const stdout = Object.assign(new PassThrough(), { columns: 40 });
    const io = new IO({}, { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env: { ROUTER_CONFIG_DIR: '/nonexistent/router-config' }, tty: { stdout: true } });
    io.addSecret(key);
    const shown = table(io, ['id', 'title'], [['c_1', `about ${key} and more words than fit`]], { fit: 1 });
    // Was: "about sk-rt-v1-0123…", the cut before the key was whole.
    expect(shown).toContain('about **** and');
    expect(shown).not.toContain(key.slice(0, 8));
  });
});

describe('cuts made where no key is left in pieces', () => {
  const key = 'sk-rt-v1-0123456789abcdef0123';
  it('hiddenStart: its first n characters are those of the whole text hidden, wherever the key stands', () => {
    for (let at = 0; at < 60; at++) {
      const text = `${'a '.repeat(at)}${key} b ${key}${'c'.repeat(at)}`;
      for (const n of [1, 10, 40, 80]) expect(hiddenStart(text, [key], n).slice(0, n)).toBe(hideSecrets(text, [key]).slice(0, n));
    }
  });
  it('lastWords and firstWholeWords: a word the cut fell in is left out whole', () => {
    const text = `one ${key} two`;
    for (let max = 0; max <= text.length; max++) {
      for (const cut of [lastWords(text, max), firstWholeWords(text, max)]) {
        expect(cut.length).toBeLessThanOrEqual(max);
        expect(cut.includes('sk-') ? cut.includes(key) : !/[0-9a-f]{4}/.test(cut)).toBe(true);
      }
    }
    expect(lastWords(text, 4)).toBe('two');
    expect(lastWords('a  two', 4)).toBe(' two');
    expect(lastWords(text, 5)).toBe('two');
    expect(firstWholeWords(text, 6)).toBe('one');
  });
});
