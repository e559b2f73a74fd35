import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../src/cli/commander.js';
import { buildProgram } from '../../src/cli/main.js';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';

// docs/reliability.md, damaged files router keeps: every store router writes, found as the commands leave them
// (not a hand-kept list), damaged in turn; every listing the program has (its commands whose summary is "list …")
// run against each: it fails with exit 1 and one line naming the file, or goes on and names the file it left out.
let t: InProcessEnv;
let lists: string[][];
const files: string[] = [];

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** Every command of the program whose summary begins "list", as its words (`fragments list`, `batch jobs`). */
function listings(c: Command, path: string[] = []): string[][] {
  return c.commands.flatMap((s) => [...(/^list\b/.test(s.summary() || s.description()) ? [[...path, s.name()]] : []), ...listings(s, [...path, s.name()])]);
}

beforeAll(async () => {
  t = await startInProcessEnv();
  const must = async (args: string[], stdin?: string) => {
    const r = await t.run(args, stdin === undefined ? {} : { input: stdin });
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  };
  const text = join(t.dir, 'note.txt');
  writeFileSync(text, 'a note to keep\n');
  const items = join(t.dir, 'items.jsonl');
  writeFileSync(items, '{"id":"a","text":"one"}\n{"id":"b","text":"two"}\n');
  const requests = join(t.dir, 'requests.jsonl');
  writeFileSync(requests, '{"custom_id":"r1","body":{"messages":[{"role":"user","content":"hi"}]}}\n');
  await must(['config', 'set', 'model', 'local/echo']);
  await must(['aliases', 'set', 'fast', 'local/echo']);
  await must(['fragments', 'set', 'note', text]);
  await must(['chat', '--model', 'local/echo', '-f', 'note', 'hi']);
  await must(['chat', '--model', 'local/echo', '-c', 'again']);
  await must(['embed-multi', 'docs', items, '--model', 'local/embed']);
  await must(['batch', 'run', requests, '--model', 'local/echo', '--results', join(t.dir, 'results.jsonl'), '--watch', '--interval', '0.05']);
  // The CLI's config and state folders (test/support/cli-env.ts).
  const kept = [join(t.dir, 'config'), join(t.dir, 'cli-state')];
  // Locks, temp files and the pointer to the last conversation hold no entry; roles are files a user writes (input).
  files.push(...kept.flatMap(walk).filter((f) => !/\.lock|\.tmp|\/LAST$|\.md$/.test(f)).sort());
  lists = [...listings(await buildProgram()), ['logs'], ['usage']];
}, 120_000);
afterAll(() => t?.close());

describe('a damaged file of any store', () => {
  it('is found in every store the commands wrote', () => {
    // The stores this test reaches: a new store is damaged here as soon as a command writes it.
    for (const part of ['config.json', 'aliases.json', '/conversations/', '/fragments/', '/fragments/aliases/', '/collections/', '/jobs/', 'usage.jsonl']) expect(files.some((f) => f.includes(part)), part).toBe(true);
    expect(lists.map((l) => l.join(' '))).toEqual(expect.arrayContaining(['fragments list', 'conversations list', 'collections list', 'batch jobs', 'aliases list']));
  });

  it('stops a command with exit 1 naming it, or is left out of a listing with a warning naming it', async () => {
    const base = new Map<string, string>();
    for (const l of lists) base.set(l.join(' '), (await t.run(l)).stdout);
    const wrong: string[] = [];
    for (const file of files) {
      const kept = readFileSync(file);
      writeFileSync(file, file.endsWith('.f32') ? kept.subarray(0, 3) : file.includes('/fragments/aliases/') ? 'not a hash\n' : '{"torn');
      try {
        for (const l of lists) {
          const r = await t.run(l);
          const said = r.stderr.includes(file);
          if (r.code !== 0 && (r.code !== 1 || !said || r.stderr.trim().split('\n').length !== 1)) wrong.push(`${file}: ${l.join(' ')} exit ${r.code}: ${r.stderr.trim()}`);
          if (r.code === 0 && r.stdout !== base.get(l.join(' ')) && !said) wrong.push(`${file}: ${l.join(' ')} left something out unsaid: ${r.stderr.trim()}`);
        }
      } finally {
        writeFileSync(file, kept);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);
});
