import { describe, expect, it } from 'vitest';
import { emulatorUsers, type User } from '../support/users.js';

// A user of llm (simonw/llm) or aichat (sigoden/aichat) types their flags at router. Their option lists, as their
// sources define them (llm/cli.py, 2026-08; aichat src/cli.rs), each spelling of each option.
const LLM_PROMPT = ['-s', '--system', '-m', '--model', '-d', '--database', '-q', '--query', '-a', '--attachment', '--at', '--attachment-type',
  '-T', '--tool', '--functions', '--td', '--tools-debug', '--ta', '--tools-approve', '--cl', '--chain-limit', '-o', '--option', '--options',
  '--schema', '--schema-multi', '-f', '--fragment', '--sf', '--system-fragment', '-t', '--template', '-p', '--param', '--no-stream', '-n',
  '--no-log', '--log', '-R', '--hide-reasoning', '-c', '--continue', '--cid', '--conversation', '--key', '--save', '--async', '-u', '--usage',
  '-x', '--extract', '--xl', '--extract-last', '--json'];
const LLM_LOGS = ['-n', '--count', '-p', '--path', '-d', '--database', '-m', '--model', '-q', '--query', '-f', '--fragment', '-T', '--tool',
  '--tools', '--schema', '--schema-multi', '-l', '--latest', '--data', '--data-array', '--data-key', '--data-ids', '-t', '--truncate', '-s',
  '--short', '-u', '--usage', '-r', '--response', '-x', '--extract', '--xl', '--extract-last', '-c', '--current', '--cid', '--conversation',
  '--id-gt', '--id-gte', '--json', '-e', '--expand'];
const LLM_EMBED = ['-i', '--input', '-m', '--model', '--store', '-d', '--database', '-c', '--content', '--binary', '--metadata', '-f', '--format'];
const LLM_EMBED_MULTI = ['--format', '--files', '--encoding', '--binary', '--sql', '--attach', '--batch-size', '--prefix', '-m', '--model',
  '--prepend', '--store', '-d', '--database'];
const LLM_SIMILAR = ['-i', '--input', '-c', '--content', '--binary', '-n', '--number', '-p', '--plain', '-d', '--database', '--prefix'];
const AICHAT = ['-m', '--model', '--prompt', '-r', '--role', '-s', '--session', '--empty-session', '--save-session', '-e', '--execute',
  '-c', '--code', '-f', '--file', '-S', '--no-stream', '--dry-run', '--info', '--list-models', '--list-roles', '--list-sessions', '--serve'];

const users = emulatorUsers('router-llm-flags-');
const user = (): User => users.user();

/** commander's refusal of a flag with no word of where to go: what none of these may get. */
const BARE = /^error: unknown option '[^']*'; see "/;

describe("every flag of llm's and aichat's: router's, or refused naming router's", () => {
  const commands: [string[], string[]][] = [
    [['chat'], [...LLM_PROMPT, ...AICHAT]],
    [['responses'], LLM_PROMPT],
    [['logs'], LLM_LOGS],
    [['embed'], LLM_EMBED],
    [['embed-multi', 'docs'], LLM_EMBED_MULTI],
    [['similar', 'docs'], LLM_SIMILAR],
  ];
  for (const [command, flags] of commands) {
    it(`router ${command.join(' ')}`, async () => {
      const u = user();
      const bare: string[] = [];
      for (const flag of flags) {
        const r = await u.run([...command, flag, 'x', 'y']);
        if (BARE.test(r.stderr)) bare.push(flag);
        // No guess that points the other way (--hide-reasoning was "did you mean --show-reasoning?").
        if (/^error: unknown option/.test(r.stderr)) expect(r.stderr, flag).not.toContain('did you mean --show-reasoning');
      }
      expect(bare).toEqual([]);
    });
  }

  it('a flag kept in one spelling says the same in the other (-o and --option, -t and --template)', async () => {
    const u = user();
    const o = await u.run(['chat', '--option', 'temperature', '0.5', 'hi']);
    expect(o).toMatchObject({ code: 2, stdout: '', stderr: `error: unknown option '--option' (llm's -o KEY VALUE is a flag of its own here: --temperature 0.5, --max-tokens 100); see "router chat --help"\n` });
    const t = await u.run(['chat', '--template', 'summarize', 'hi']);
    expect(t.stderr).toBe(`error: unknown option '--template' (llm's -t TEMPLATE is --role NAME here; -t is --temperature); see "router chat --help"\n`);
    const r = await u.run(['chat', '-R', 'hi']);
    expect(r.stderr).toBe(`error: unknown option '-R' (reasoning is not shown here unless --show-reasoning); see "router chat --help"\n`);
  });
});

describe('a prompt given to router itself, as llm and aichat take one: router chat named, nothing sent', () => {
  it('a prompt as the command, llm prompt, and a prompt flag before any command: exit 2, naming router chat', async () => {
    const u = user();
    const cases: [string[], string][] = [
      [['what is 2+2'], `error: unknown command 'what is 2+2' (a prompt is router chat here: router chat "what is 2+2"); see "router --help"\n`],
      [["it's $HOME"], `error: unknown command 'it's $HOME' (a prompt is router chat here: router chat 'it'\\''s $HOME'); see "router --help"\n`],
      [['prompt', 'hi'], `error: unknown command 'prompt' (llm's prompt is router chat here: router chat PROMPT); see "router --help"\n`],
      [['-m', 'local/echo', 'hi'], `error: unknown option '-m' (a prompt is router chat here, its flags after it: router chat -m …); see "router --help"\n`],
      [['-u', 'hi'], `error: unknown option '-u' (a prompt is router chat here, its flags after it: router chat -u …; llm's -u is --usage here); see "router --help"\n`],
      [['--list-roles'], `error: unknown option '--list-roles' (aichat's --list-roles is router roles list here); see "router --help"\n`],
    ];
    for (const [args, line] of cases) {
      const r = await u.run(args);
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: line });
    }
    // Nothing sent: no chat was kept.
    expect((await u.run(['logs', '-n', '0', '--json'])).stdout).toBe('[]\n');
    // Words of its own keep their guess; a long prompt is cut in the hint.
    expect((await u.run(['--verbos', 'chat'])).stderr).toContain('(did you mean --verbose?)');
    expect((await u.run([`${'word '.repeat(30)}end`])).stderr).toContain(`router chat "${'word '.repeat(12)}…"`);
  });

  it('one word given to router that is no command and near none is a prompt too; a typo or a command word keeps its guess', async () => {
    const u = user();
    expect(await u.run(['hello'])).toMatchObject({ code: 2, stdout: '', stderr: `error: unknown command 'hello' (a prompt is router chat here: router chat "hello"); see "router --help"\n` });
    expect((await u.run(['chta'])).stderr).toBe(`error: unknown command 'chta' (did you mean chat?); see "router --help"\n`);
    for (const word of ['ls', 'list', '42', 'a.txt']) expect((await u.run([word])).stderr, word).toBe(`error: unknown command '${word}'; see "router --help"\n`);
    // Below the top, a word is a mistyped subcommand, never a prompt.
    expect((await u.run(['models', 'hello'])).stderr).not.toContain('router chat');
  });

  it("--session is the service's session id: a person at a terminal is told where conversations are, a script is not", async () => {
    const u = user();
    const note = "note: --session is the service's session id (it groups calls; nothing is kept here): a conversation kept here is --conversation NAME, -c goes on with the last (router conversations list)\n";
    const shown = await u.run(['chat', '--session', 's1', '--model', 'local/echo', 'hi'], { tty: { stderr: true } });
    expect(shown).toMatchObject({ code: 0, stdout: 'hi\n' });
    expect(shown.stderr.split(note).length - 1).toBe(1);
    // Piped, as a script that means the service's session runs it: the answer alone, the session id still sent.
    const piped = await u.run(['chat', '--session', 's1', '--model', 'local/echo', '--json', 'hi']);
    expect(piped).toMatchObject({ code: 0, stderr: '' });
    expect((await u.run(['chat', '--session', 's1', '--model', 'local/echo', '--dry-run', 'hi'])).stdout).toContain('"session_id": "s1"');
    // One who names a conversation knows where they are.
    expect((await u.run(['chat', '--session', 's1', '--conversation', 'talk', '--model', 'local/echo', 'hi'], { tty: { stderr: true } })).stderr).not.toContain(note);
  });

  it("every top-level flag of aichat's and llm's prompt names where to go", async () => {
    const u = user();
    const bare: string[] = [];
    for (const flag of [...new Set([...LLM_PROMPT, ...AICHAT])]) {
      const r = await u.run([flag, 'x', 'y']);
      if (BARE.test(r.stderr)) bare.push(flag);
    }
    expect(bare).toEqual([]);
  });
});

describe("llm's logs -r and logs WORD", () => {
  it('logs -r prints the last answer alone, the filters applied; none is exit 5', async () => {
    const u = user();
    const none = await u.run(['logs', '-r']);
    expect(none).toMatchObject({ code: 5, stdout: '', stderr: 'error: no conversations yet: router chat keeps each one (unless --no-log)\n' });
    await u.run(['chat', '--model', 'local/echo', 'pelican one']);
    await u.run(['chat', '--model', 'local/echo', 'walrus two']);
    expect(await u.run(['logs', '-r'])).toMatchObject({ code: 0, stdout: 'walrus two\n', stderr: '' });
    expect((await u.run(['logs', '--response', 'pelican'])).stdout).toBe('pelican one\n');
    expect(await u.run(['logs', '-r', 'zebra'])).toMatchObject({ code: 5, stdout: '', stderr: 'error: no kept turn holds zebra\n' });
    expect((await u.run(['logs', '-r', '--json'])).code).toBe(2);
  });

  it("llm's logs off, path, status: a search that finds nothing says where router has it, piped too", async () => {
    const u = user();
    await u.run(['chat', '--model', 'local/echo', 'hello']);
    const off = await u.run(['logs', 'off']);
    expect(off).toMatchObject({ code: 0, stdout: '', stderr: "note: no kept turn holds off (llm's logs off: logging is a setting here: router config set log off)\n" });
    expect((await u.run(['logs', 'path'])).stderr).toContain("(llm's logs path: conversations are files in the state folder");
    // A search meant as one (-q), or one that finds turns, is no llm word.
    expect((await u.run(['logs', '-q', 'off'])).stderr).toBe('');
    await u.run(['chat', '--model', 'local/echo', 'switch it off']);
    expect((await u.run(['logs', 'off'])).stdout).toContain('switch it off');
  });
});

describe("llm's -p NAME VALUE, which is --profile here", () => {
  it('a profile not found by -p in chat or responses names --param; elsewhere not', async () => {
    const u = user();
    for (const command of ['chat', 'responses']) {
      const r = await u.run([command, '--model', 'local/echo', '-p', 'lang', 'French', 'good morning']);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toBe(`error: no profile "lang": create it with "router login --profile lang" (llm's -p NAME VALUE is --param NAME VALUE here; -p is --profile)\n`);
    }
    const credits = await u.run(['credits', '-p', 'lang']);
    expect(credits.stderr).toBe(`error: no profile "lang": create it with "router login --profile lang"\n`);
  });
});
