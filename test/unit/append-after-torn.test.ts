import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempFolder } from '../support/temp-folder.js';
import { appendWhole } from '../../src/internal/append-whole.js';
import { indexBatch, indexedRoots } from '../../src/batch/local-index.js';
import { loadHistory } from '../../src/cli/commands/chat/repl-more.js';

// What a writer killed mid-line (or cut off by a full disk, or a power loss) leaves: a last line with
// no end. Every append after it used to glue its own line onto it, so that line was lost too.
const dir = tempFolder('router-append-torn-');

describe('an append after a torn last line', () => {
  it('appendWhole starts a line of its own; a whole file and an empty one get nothing added', () => {
    const torn = join(dir(), 'torn.jsonl');
    writeFileSync(torn, '{"a":1}\n{"b":');
    appendWhole(torn, '{"c":3}\n');
    expect(readFileSync(torn, 'utf8')).toBe('{"a":1}\n{"b":\n{"c":3}\n');
    const whole = join(dir(), 'whole.jsonl');
    writeFileSync(whole, '{"a":1}\n');
    appendWhole(whole, '{"c":3}\n', 0o600, true);
    appendWhole(join(dir(), 'new.jsonl'), '{"c":3}\n');
    expect(readFileSync(whole, 'utf8')).toBe('{"a":1}\n{"c":3}\n');
    expect(readFileSync(join(dir(), 'new.jsonl'), 'utf8')).toBe('{"c":3}\n');
  });

  it('the batches index keeps the batch indexed after a torn line (batch get finds its API root)', () => {
    const env = { ROUTER_STATE_DIR: join(dir(), 'state') };
    mkdirSync(env.ROUTER_STATE_DIR, { recursive: true });
    indexBatch(env, 'http://127.0.0.1:1/api', { id: 'batch_first', status: 'validating', request_counts: { total: 1, completed: 0, failed: 0 } });
    appendFileSync(join(env.ROUTER_STATE_DIR, 'batches.jsonl'), '{"id":"batch_killed","api_ro');
    indexBatch(env, 'http://127.0.0.1:2/api', { id: 'batch_after', status: 'validating', request_counts: { total: 1, completed: 0, failed: 0 } });
    expect([...indexedRoots(env)]).toEqual([['batch_first', 'http://127.0.0.1:1/api'], ['batch_after', 'http://127.0.0.1:2/api']]);
  });

  it('chat -i history keeps the line typed after a torn one', () => {
    const env = { ROUTER_STATE_DIR: join(dir(), 'history-state') };
    mkdirSync(env.ROUTER_STATE_DIR, { recursive: true });
    writeFileSync(join(env.ROUTER_STATE_DIR, 'repl-history'), '"first"\n"cut of');
    appendWhole(join(env.ROUTER_STATE_DIR, 'repl-history'), '"after"\n');
    expect(loadHistory(env)).toEqual(['after', 'first']);
  });
});
