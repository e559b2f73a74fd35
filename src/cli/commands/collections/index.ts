/** `router collections list|delete|path`: the embedding collections of the profile (llm's collections). */
import { defineCommand, defineGroup } from '../../define.js';
import { visible } from '../../../internal/visible.js';
import { collectionsOf } from './send.js';
import { tabLine } from '../../io/described.js';
import { leftOutDamaged } from '../../io/damaged-note.js';

const list = defineCommand({
  name: 'list',
  jsonFields: ['name', 'model', 'dimensions', 'length', 'count', 'created_at'],
  summary: 'list the collections',
  description: 'list the collections; piped, one tab-separated line each: name, model, entries',
  flags: { json: { flags: '--json', help: 'print them as JSON' } },
  examples: ['router embed "a text" -c scratch --id one --model local/embed', 'router collections list', 'router collections list --json name,count'],
  run: async (ctx) => {
    const { io, opts } = ctx;
    const all = (await collectionsOf(ctx)).list((file, lines) => leftOutDamaged(io, file, lines ? `${lines} ${lines === 1 ? 'entry' : 'entries'}; router embed-multi adds them again` : 'router collections delete removes it'));
    if (opts.json) return io.json(all);
    if (!all.length) return io.info('no collections yet: router embed TEXT -c NAME --id ID, or router embed-multi NAME FILE');
    const rows = all.map((c) => [c.name, c.model, String(c.count)].map((f) => visible(f)));
    if (io.stdoutTTY) return void io.out((await import('../../io/table.js')).table(io, ['name', 'model', 'entries'], rows, { fit: 2 }));
    io.out(rows.map((r) => tabLine(r)).join(''));
  },
});

const remove = defineCommand({
  name: 'delete',
  summary: 'delete a collection and all it keeps',
  args: [{ name: '<name>', help: 'the collection', complete: 'collections' }],
  examples: ['router embed "a text" -c scratch --id one --model local/embed', 'router collections delete scratch'],
  run: async (ctx, name) => {
    await (await collectionsOf(ctx)).delete(name);
    ctx.io.info(`deleted collection ${name}`);
  },
});

const path = defineCommand({
  name: 'path',
  summary: "print the folder of the profile's collections",
  examples: ['router collections path'],
  run: async (ctx) => void ctx.io.out(`${(await collectionsOf(ctx)).dir}\n`),
});

export const collections = defineGroup({
  name: 'collections',
  summary: 'list and delete embedding collections',
  description: 'The embedding collections of the profile: each keeps vectors of one model, under ids, with their text and metadata when asked.',
  commands: [list, remove, path],
  examples: ['router embed "a text" -c notes --id one --model local/embed', 'router collections list', 'router collections delete notes'],
});
