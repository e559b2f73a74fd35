import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { buildProgram, main } from '../../src/cli/main.js';
import { testStreams } from '../support/inprocess.js';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';
import { attachmentFromBytes, attachmentReference } from '../../src/kit/attachments.js';
import { runCommand } from '../../src/kit/command-tool.js';

// The CLI's edges closing note 14 left (task c7): each said in one line, with the way out.
let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

/** Every command's words, as `router WORDS --help` takes them (the root's too). */
async function commandPaths(): Promise<string[][]> {
  const paths: string[][] = [[]];
  const walk = (cmd: Awaited<ReturnType<typeof buildProgram>>, path: string[]) => {
    for (const c of cmd.commands) {
      if (c.name() === 'help' || (c as unknown as { _hidden: boolean })._hidden) continue;
      paths.push([...path, c.name()]);
      walk(c, [...path, c.name()]);
    }
  };
  walk(await buildProgram(), []);
  return paths;
}

async function helpOf(path: string[], opts: { tty: boolean; columns: number }): Promise<string> {
  const t = testStreams({ tty: { stdout: opts.tty }, columns: opts.columns });
  expect(await main(['node', 'router', ...path, '--help'], t.streams), path.join(' ')).toBe(0);
  return t.stdout();
}

it("every command's help fits the terminal (80, 60 and 40 columns) and, piped, 80 columns; each example one command a line", async () => {
  const paths = await commandPaths();
  expect(paths.length).toBeGreaterThan(40);
  // 40: was each option's description unwrapped beside its term (fewer than 20 columns left), broken mid-word.
  const decideExamples: string[] = [];
  for (const [tty, columns] of [[true, 80], [true, 60], [true, 40], [false, 60]] as const) {
    const width = tty ? columns : 80;
    for (const path of paths) {
      const help = await helpOf(path, { tty, columns });
      const at = `${path.join(' ')} at ${columns}${tty ? '' : ', piped'}`;
      const blocks = help.trimEnd().split('\n\n');
      const examples = blocks.filter((b) => b.startsWith('Examples:\n')).flatMap((b) => b.split('\n').slice(1));
      // Was: notes hand-wrapped at ~100 columns, over the edge of an 80-column terminal (each line broken in two).
      for (const b of blocks.filter((b) => !b.startsWith('Examples:\n'))) for (const line of b.split('\n')) {
          // A word longer than the room left (a URL) goes alone on its line, as wrapping must leave it.
          // The usage line is one, as commander writes it.
          if (!/^\s*\S+$/.test(line) && !line.startsWith('Usage: ')) expect([...line].length, `${at}: ${line}`).toBeLessThanOrEqual(width);
        }
      // Was: decide's example in two lines, the second read as prose; a ` \` line is now followed by one indented under it.
      examples.forEach((line, i) => expect(line, at).toMatch(i > 0 && examples[i - 1]!.endsWith(' \\') ? /^ {6}\S/ : /^ {2}\$ \S/));
      expect(examples.at(-1) ?? '', at).not.toMatch(/\\$/);
      if (path.join(' ') === 'decide') decideExamples.push(...examples);
    }
  }
  // The examples above were found: decide's at each width.
  expect(decideExamples.length).toBeGreaterThanOrEqual(4);
});

it('an editor not found is named by its program and where it came from ($VISUAL, $EDITOR, or vi as the default)', async () => {
  const config = mkdtempSync(join(tmpdir(), 'router-c7-editor-'));
  const edit = async (env: Record<string, string>, tty = false) => {
    const t = testStreams({ env: { ROUTER_CONFIG_DIR: config, VISUAL: '', EDITOR: '', ...env }, tty: { stdin: tty, stdout: tty } });
    expect(await main(['node', 'router', 'roles', 'edit', 'poet'], t.streams)).toBe(1);
    return t.stderr();
  };
  const after = ': set $VISUAL or $EDITOR to one that is installed (nano, vim, code --wait); role poet is not made\n';
  // Was: "the editor (nosuchedit --wait) was not found", the whole command where the program was meant.
  expect(await edit({ EDITOR: 'nosuchedit --wait' })).toBe(`error: the editor nosuchedit (from $EDITOR: nosuchedit --wait) was not found${after}`);
  expect(await edit({ VISUAL: 'nosuchedit', EDITOR: 'nano' })).toBe(`error: the editor nosuchedit (from $VISUAL) was not found${after}`);
  expect(await edit({ EDITOR: 'FOO=1 nosuchedit' })).toBe(`error: the editor command (from $EDITOR: FOO=1 nosuchedit) was not found${after}`);
  expect(await edit({ PATH: config }, true)).toBe(`error: the editor vi (tried as neither $VISUAL nor $EDITOR is set) was not found${after}`);
});

it('counts read in the singular for one: requests with no max_tokens, an attachment of 1 byte, 1 more problem, binary output', async () => {
  const line = (id: string, extra: Record<string, unknown> = {}) => JSON.stringify({ custom_id: id, body: { messages: [{ role: 'user', content: id }], ...extra } });
  const bound = async (lines: string[]) => {
    const file = join(t.dir, `unbounded-${lines.length}.jsonl`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = await run(['batch', 'create', file, '--model', 'local/echo', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    return r.stderr;
  };
  // Was: "; 1 set no max_tokens, each bounded by …".
  expect(await bound([line('a'), line('b', { max_tokens: 5 })])).toMatch(/; 1 request sets no max_tokens, so it is bounded by the model's \d+ tokens\n/);
  expect(await bound([line('a'), line('b')])).toMatch(/; 2 requests set no max_tokens, each bounded by the model's \d+ tokens\n/);
  // Was: "(text/plain, 1 bytes, …)" in the reference the model is sent when a conversation is taken up.
  expect(attachmentReference(await attachmentFromBytes(Buffer.from('x'), { source: 'x.txt' }))).toMatch(/^\[attachment: x\.txt \(text\/plain, 1 byte, sha256:/);
  // Was: "… and 1 more problems" under the 20 shown.
  const bad = join(t.dir, 'bad-21.jsonl');
  writeFileSync(bad, Array.from({ length: 21 }, () => 'not json').join('\n') + '\n');
  const refused = await run(['batch', 'create', bad, '--model', 'local/echo', '--dry-run']);
  expect(refused.stderr).toMatch(/… and 1 more problem\n/);
  // Was: "the output is 1 bytes of binary data".
  const out = await runCommand(['sh', '-c', "printf '\\377'"], '', new AbortController().signal);
  expect(out.output).toBe('[router: the output is 1 byte of binary data, not UTF-8 text: not sent]');
});

it('usage --reconcile asks --limit calls a run, and says how many are left and how to ask them all', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'state-reconcile-120') };
  for (let i = 0; i < 120; i++) expect((await run(['chat', '--model', 'local/echo', `call ${i}`], env)).code).toBe(0);
  const asked = () => t.requests().filter((q) => /\/v1\/generation\b/.test(q.path)).length;
  t.clearRequests();
  const first = await run(['usage', '--reconcile'], env);
  expect(first.code, first.stderr).toBe(0);
  expect(asked()).toBe(50);
  // Was: "70 left: run router usage --reconcile again", which asks 50 of them, then 20.
  expect(first.stderr).toMatch(/; 70 left, 50 a run: run router usage --reconcile --limit 70 to ask them all, or again as it is to ask the next 50\n$/);
  t.clearRequests();
  const second = await run(['usage', '--reconcile', '--limit', '30'], env);
  expect(asked()).toBe(30);
  expect(second.stderr).toMatch(/; 40 left, 30 a run: run router usage --reconcile --limit 40 to ask them all/);
  t.clearRequests();
  const last = await run(['usage', '--reconcile', '--limit', '40'], env);
  expect(asked()).toBe(40);
  expect(last.stderr).toMatch(/^reconciled 40 calls .*; none left\n$/);
});

it('piped listings give amounts as plain numbers: no currency sign, no thousands separator, no padding', async () => {
  const env = { ROUTER_STATE_DIR: join(t.dir, 'state-piped'), ROUTER_MANAGEMENT_KEY: t.managementKey };
  const chat = await run(['chat', '--model', 'local/echo', 'hi', '--json'], env);
  expect(chat.code, chat.stderr).toBe(0);
  const id = JSON.parse(chat.stdout).id as string;
  const listings = [['usage'], ['usage', '--by', 'model'], ['usage', '--activity'], ['generation', id], ['credits'], ['keys', 'list'], ['keys', 'current'], ['models'], ['conversations', 'list'], ['batch', 'list']];
  for (const args of listings) {
    const r = await run(args, env);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    // Was: usage's cost "$0.000008", generation's "cost\t$0.000008".
    for (const line of r.stdout.trim().split('\n')) {
      for (const cell of line.split('\t')) expect(cell, `${args.join(' ')}: ${line}`).not.toMatch(/^\$|^\d{1,3}(,\d{3})+(\.\d+)?$|^\s|\s$/);
    }
  }
});

it('speak -o and batch get --results keep an existing file until the new one is whole; a folder as FILE is one line; help says so', async () => {
  const dir = join(t.dir, 'replace');
  mkdirSync(dir);
  const audio = join(dir, 'old.mp3');
  writeFileSync(audio, 'the old audio');
  const env = { ROUTER_MANAGEMENT_KEY: t.managementKey, ROUTER_STATE_DIR: join(t.dir, 'state-replace') };
  await t.admin('faults', { faults: ['cut,after=2,times=1,path=/v1/audio/speech'] });
  const cut = await run(['speak', 'a sentence long enough to be cut in the middle of it', '--voice', 'alloy', '--model', 'local/tts', '-o', audio], env);
  expect(cut.code).toBe(8);
  expect(readFileSync(audio, 'utf8')).toBe('the old audio');
  expect(readdirSync(dir)).toEqual(['old.mp3']);
  const whole = await run(['speak', 'hello', '--voice', 'alloy', '--model', 'local/tts', '-o', audio], env);
  expect(whole.code, whole.stderr).toBe(0);
  expect(readFileSync(audio, 'utf8')).not.toBe('the old audio');
  // A link to a file not made yet: the file is made, as the shell's > makes it. Was: the link replaced by a file.
  symlinkSync('made.mp3', join(dir, 'link.mp3'));
  expect((await run(['speak', 'hello', '--voice', 'alloy', '--model', 'local/tts', '-o', join(dir, 'link.mp3')], env)).code).toBe(0);
  expect(lstatSync(join(dir, 'link.mp3')).isSymbolicLink()).toBe(true);
  expect(readFileSync(join(dir, 'made.mp3')).length).toBeGreaterThan(100);
  expect(await run(['speak', 'hello', '--voice', 'alloy', '--model', 'local/tts', '-o', dir], env)).toMatchObject({ code: 2, stderr: `error: cannot write ${dir}: is a folder\n` });
  expect(await run(['batch', 'get', 'batch_x', '--results', dir], env)).toMatchObject({ code: 2, stderr: `error: cannot write ${dir}: is a folder\n` });
  // Was: "write the audio here (atomically)": nothing said of a file there already.
  expect((await run(['speak', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('an existing FILE is replaced once the audio is whole (kept on an error or Ctrl-C)');
  expect((await run(['batch', 'get', '--help'])).stdout.replace(/\s+/g, ' ')).toContain('an existing FILE is replaced once they are whole (kept on an error or Ctrl-C)');
});

it('stdin from a file is read into one buffer of its size, whole whether the file grew or was read from its middle', async () => {
  const { readFdBounded } = await import('../../src/cli/io/bounded-read.js');
  const { openSync, closeSync, readSync } = await import('node:fs');
  const file = join(t.dir, 'stdin-file.txt');
  const text = 'x'.repeat(3 * 1024 * 1024 + 17);
  writeFileSync(file, text);
  const read = async (expected: number, skip = 0) => {
    const fd = openSync(file, 'r');
    try {
      if (skip) readSync(fd, Buffer.alloc(skip), 0, skip, null);
      return (await readFdBounded(fd, 'stdin', false, undefined, undefined, expected))!.bytes.toString('utf8');
    } finally {
      closeSync(fd);
    }
  };
  expect(await read(text.length)).toBe(text);
  // Grown since its size was taken: the rest follows.
  expect(await read(1000)).toBe(text);
  // Read from its middle (a while-read loop's file): what is left.
  expect(await read(text.length, 5)).toBe(text.slice(5));
  expect(await read(0)).toBe(text);
});
