/** `router fragments list|show|set|remove`: the fragments chat -f and --sf keep once by hash (src/kit/fragments.ts), and their aliases. */
import { defineCommand, defineGroup } from '../define.js';
import { PROSE, visible } from '../../internal/visible.js';
import { tabLine } from '../io/described.js';
import { leftOutDamaged } from '../io/damaged-note.js';
import { checkFragmentAlias, FragmentStore, type FragmentSummary } from '../../kit/fragments.js';
import { fragmentFrom } from '../answers/fragments.js';
import { FragmentError } from '../../kit/errors.js';

const REF = { name: '<fragment>', help: 'an alias or a hash (router fragments list shows them)' } as const;

const list = defineCommand({
  name: 'list',
  jsonFields: ['hash', 'aliases', 'source', 'created_at', 'length', 'preview'],
  printsKept: true,
  summary: 'list the kept fragments, most recent first',
  description: 'list the kept fragments, most recent first; piped, one tab-separated line each: hash, aliases, created, source, preview',
  flags: { json: { flags: '--json', help: 'print them as JSON: [{ hash, aliases, source, created_at, length, preview }]' } },
  examples: ['router fragments list', 'router fragments list --json hash,source'],
  run: async ({ io, opts, env }) => {
    const all = new FragmentStore({ env }).list((file) => leftOutDamaged(io, file));
    if (opts.json) return io.json([...all]);
    const fields = (f: FragmentSummary) => [f.hash, f.aliases.join(',') || (io.stdoutTTY ? '-' : ''), f.created_at, f.source, f.preview];
    let any = false;
    // On a terminal a table, as the other lists print there (the preview cut to its width, with "…"); piped, line by line.
    if (io.stdoutTTY) {
      const rows = [...all].map(fields);
      any = rows.length > 0;
      if (any) io.out((await import('../io/table.js')).table(io, ['hash', 'aliases', 'created', 'source', 'preview'], rows, { fit: 4 }));
    } else {
      for (const f of all) {
        any = true;
        if (!io.out(tabLine(fields(f)))) await io.drain();
      }
    }
    if (!any) io.info('no fragments yet: router chat -f FILE|URL|- "prompt" keeps each one');
  },
});

const show = defineCommand({
  name: 'show',
  jsonFields: ['hash', 'source', 'created_at', 'content'],
  printsKept: true,
  summary: 'print a kept fragment\'s text',
  args: [REF],
  flags: { json: { flags: '--json', help: 'print { hash, source, created_at, content }' } },
  examples: ['router fragments set notes notes.txt', 'router fragments show notes', 'router fragments show notes --json source,hash'],
  run: async ({ io, opts, env }, ref) => {
    const f = new FragmentStore({ env }).find(ref);
    if (!f) throw new FragmentError('not_found', ref, 'no fragment has that alias or hash (router fragments list shows them)');
    if (opts.json) return io.json(f);
    io.out(io.stdoutTTY ? visible(f.content, PROSE) : f.content);
    if (f.content && !f.content.endsWith('\n')) io.out('\n');
  },
});

const set = defineCommand({
  name: 'set',
  summary: 'name a fragment (a file, a URL or a kept one)',
  description: 'name a fragment: a file or URL (kept now), or a kept one by alias or hash; chat -f ALIAS then takes it',
  args: [{ name: '<alias>', help: 'the alias: 1 to 64 letters, digits, ".", "_" or "-"' }, { name: '<fragment>', help: 'a file, an http(s) URL, or a kept alias or hash', complete: 'files' }],
  examples: ['router fragments set notes notes.txt', 'router chat -f notes "summarize this" --model local/echo'],
  run: async ({ io, env, flags }, alias, ref) => {
    const store = new FragmentStore({ env });
    // Checked before a URL is fetched: bad input costs nothing.
    checkFragmentAlias(alias);
    const read = await fragmentFrom(ref, store, io, flags);
    const f = store.put(read.content, read.source);
    const before = store.aliasHash(alias);
    store.setAlias(alias, f.hash);
    if (before && before !== f.hash) io.note(`note: alias ${alias} was ${before}; now ${f.hash}`);
    else io.info(`alias ${alias}: ${f.hash} (${f.source})`);
  },
});

const remove = defineCommand({
  name: 'remove',
  summary: 'remove an alias (the fragment stays)',
  description: 'remove an alias (the fragment stays: conversations name it by hash)',
  args: [{ name: '<alias>', help: 'the alias' }],
  examples: ['router fragments set scratch notes.txt', 'router fragments remove scratch'],
  run: async ({ io, env }, alias) => {
    new FragmentStore({ env }).removeAlias(alias);
    io.info(`removed alias ${alias}`);
  },
});

export const fragments = defineGroup({
  name: 'fragments',
  summary: 'list, show and name the fragments chat -f keeps',
  description: 'Fragments are pieces of a prompt chat -f (and --sf, for the system message) takes from a file, a URL or stdin: each kept once by the SHA-256 of its text, the conversation naming it by hash. An alias names one: chat -f ALIAS.',
  commands: [list, show, set, remove],
  examples: ['router fragments set notes notes.txt', 'router chat -f notes "summarize this" --model local/echo', 'router fragments list'],
});
