import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulatorUsers, type User } from '../support/users.js';

// A user of Simon Willison's llm CLI, doing their everyday things with router.
const users = emulatorUsers('router-llm-habits-');
const user = (): User => users.user();

describe("--schema in llm's concise syntax", () => {
  it('"name, age int" is a schema of those fields, sent strict and the answer checked', async () => {
    const u = user();
    const r = await u.run(['chat', '--model', 'local/lorem', '--schema', 'name, age int, good bool: is it a good dog', 'invent a dog']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const dog = JSON.parse(r.stdout);
    expect(Object.keys(dog)).toEqual(['name', 'age', 'good']);
    expect(typeof dog.name).toBe('string');
    expect(Number.isInteger(dog.age)).toBe(true);
    expect(typeof dog.good).toBe('boolean');
    const sent = await u.run(['chat', '--dry-run', '--model', 'local/lorem', '--schema', 'name\nbio: a bio, short\nweight float', 'a dog']);
    const format = JSON.parse(sent.stdout.slice(0, sent.stdout.lastIndexOf('}') + 1)).response_format;
    expect(format.json_schema.strict).toBe(true);
    expect(format.json_schema.schema).toEqual({
      type: 'object',
      properties: { name: { type: 'string' }, bio: { type: 'string', description: 'a bio, short' }, weight: { type: 'number' } },
      required: ['name', 'bio', 'weight'],
      additionalProperties: false,
    });
  });

  it('a file of that name is still read as the file; a bad type or a bare missing name is one line, exit 2', async () => {
    const u = user();
    const file = join(u.home, 'city, country');
    writeFileSync(file, JSON.stringify({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }));
    const r = await u.run(['chat', '--model', 'local/lorem', '--schema', file, 'a city']);
    expect(Object.keys(JSON.parse(r.stdout))).toEqual(['city']);
    const bad = await u.run(['chat', '--model', 'local/lorem', '--schema', 'name, age integer', 'a dog']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: --schema: field age: unknown type "integer" (str, int, float or bool)\n');
    const bare = await u.run(['chat', '--model', 'local/lorem', '--schema', 'dog', 'a dog']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toBe('error: --schema dog: cannot read it (no such file or folder); a schema of one text field is written "dog str"\n');
    // Was: "cannot read name str extra (no such file or folder)", words taken for a path.
    const words = await u.run(['chat', '--model', 'local/lorem', '--schema', 'name str extra', 'a dog']);
    expect(words.code).toBe(2);
    expect(words.stderr).toBe('error: --schema: "name str extra" is not a field: write NAME [TYPE][: description], as "age int: their age"\n');
  });

  it('a role keeps concise fields as they are, and chat --role uses them from any folder', async () => {
    const u = user();
    expect((await u.run(['roles', 'save', 'dog', '--system', 'Invent a dog.', '--model', 'local/lorem', '--schema', 'name, age int'])).code).toBe(0);
    const r = await u.run(['chat', '--role', 'dog', 'go']);
    expect(r.stderr).toBe('');
    expect(Object.keys(JSON.parse(r.stdout))).toEqual(['name', 'age']);
  });

  it("flags given with --role win over the role's that they cannot go with (its -x, --schema, --schema-multi)", async () => {
    const u = user();
    expect((await u.run(['roles', 'save', 'coder', '--system', 'Code.', '--model', 'local/echo', '-x'])).code).toBe(0);
    expect((await u.run(['roles', 'save', 'dogs', '--system', 'Dogs.', '--model', 'local/lorem', '--schema-multi', 'name, age int'])).code).toBe(0);
    // Was: "give one of --extract and --json", of a flag not typed, exit 2.
    const json = await u.run(['chat', '--role', 'coder', '--json', 'hi']);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout).choices[0].message.content).toBe('hi');
    const last = await u.run(['chat', '--role', 'coder', '--extract-last', '```\na\n```\n```\nb\n```']);
    expect(last.stdout).toBe('b\n');
    const one = await u.run(['chat', '--role', 'dogs', '--schema', 'city str', 'go']);
    expect(Object.keys(JSON.parse(one.stdout))).toEqual(['city']);
    const code = await u.run(['chat', '--role', 'dogs', '--model', 'local/echo', '-x', '```\nx\n```']);
    expect(code.stdout).toBe('x\n');
  });
});

describe('conversations show with no id: the last one, as llm logs -c', () => {
  it('shows the conversation chat -c goes on with; with none yet, one line and exit 5', async () => {
    const u = user();
    const none = await u.run(['conversations', 'show']);
    expect(none.code).toBe(5);
    expect(none.stderr).toBe('error: no conversations yet: router chat keeps each one (unless --no-log)\n');
    await u.run(['chat', '--model', 'local/echo', 'first one']);
    await u.run(['chat', '--model', 'local/echo', 'second one']);
    const last = await u.run(['conversations', 'show']);
    expect(last.stderr).toBe('');
    expect(last.stdout).toBe('user: second one\n\nassistant: second one\n');
    const json = await u.run(['conversations', 'show', '--json', 'messages']);
    expect(JSON.parse(json.stdout).messages).toHaveLength(2);
  });
});

describe('--extract and --extract-last: only the code of a fenced block, as llm -x and --xl', () => {
  const answer = 'Here it is:\n\n```python\nprint(1)\n```\n\nand another:\n\n~~~\necho 2\n~~~\n';

  it('chat and responses, streamed or not: the first block or the last; none: the whole answer and a note', async () => {
    const u = user();
    for (const cmd of ['chat', 'responses']) {
      for (const stream of ['--stream', '--no-stream']) {
        if (cmd === 'responses' && stream === '--no-stream') continue;
        const first = await u.run([cmd, '--model', 'local/echo', stream, '-x', answer]);
        expect(first.stderr).toBe('');
        expect(first.stdout).toBe('print(1)\n');
        const last = await u.run([cmd, '--model', 'local/echo', stream, '--extract-last', answer]);
        expect(last.stdout).toBe('echo 2\n');
      }
    }
    const none = await u.run(['chat', '--model', 'local/echo', '--extract', 'no code here']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('no code here\n');
    expect(none.stderr).toBe('note: the answer holds no fenced code block: printed whole (--extract)\n');
  });

  it('with --json or --schema it is refused before sending, exit 2', async () => {
    const u = user();
    const json = await u.run(['chat', '--model', 'local/echo', '--extract', '--json', 'hi']);
    expect(json.code).toBe(2);
    expect(json.stderr).toBe('error: give one of --extract and --json\n');
    const schema = await u.run(['chat', '--model', 'local/echo', '--extract-last', '--schema', 'name, age int', 'hi']);
    expect(schema.stderr).toBe('error: give one of --extract-last and --schema\n');
    // Was: "give one of --extract and --schema", a flag not typed.
    const multi = await u.run(['chat', '--model', 'local/echo', '-x', '--schema-multi', 'name, age int', 'hi']);
    expect(multi.stderr).toBe('error: give one of --extract and --schema-multi\n');
  });
});

describe("--verbose shows each tool's result, as llm's --td", () => {
  it('the call, then what went back to the model on one line (a long one cut at 200 characters)', async () => {
    const u = user();
    const tools = (command: string) => JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, command }]);
    writeFileSync(join(u.home, 'tools.json'), tools('printf "18C\\nand sunny"'));
    const r = await u.run(['chat', '--verbose', '--model', 'local/tools', '--tools', join(u.home, 'tools.json'), 'weather in Paris']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('tool get_weather {"city":"weather in Paris"} -> exit 0\n  result: 18C\\nand sunny\n');
    writeFileSync(join(u.home, 'long.json'), tools('printf "%0300d" 0'));
    const long = await u.run(['chat', '--verbose', '--model', 'local/tools', '--tools', join(u.home, 'long.json'), 'weather in Paris']);
    expect(long.stderr).toContain(`  result: ${'0'.repeat(200)}… (300 characters)\n`);
    const quiet = await u.run(['chat', '--model', 'local/tools', '--tools', join(u.home, 'tools.json'), 'weather in Paris']);
    expect(quiet.stderr).toBe('');
  });
});

describe('--schema-multi: several values of a schema, as llm --schema-multi', () => {
  it('concise fields or a JSON schema become {"items": [...]} of them; with --schema too, refused', async () => {
    const u = user();
    const r = await u.run(['chat', '--model', 'local/lorem', '--schema-multi', 'name, age int', 'invent 3 dogs']);
    expect(r.stderr).toBe('');
    const { items } = JSON.parse(r.stdout);
    expect(Array.isArray(items)).toBe(true);
    for (const dog of items) expect(Object.keys(dog)).toEqual(['name', 'age']);
    writeFileSync(join(u.home, 'city.json'), JSON.stringify({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }));
    const sent = await u.run(['responses', '--dry-run', '--model', 'local/lorem', '--schema-multi', join(u.home, 'city.json'), 'cities']);
    const format = JSON.parse(sent.stdout.slice(0, sent.stdout.lastIndexOf('}') + 1)).text.format;
    expect(format.schema).toEqual({ type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }, required: ['items'], additionalProperties: false });
    const both = await u.run(['chat', '--model', 'local/lorem', '--schema', 'name', '--schema-multi', 'name, age int', 'dogs']);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('error: give one of --schema and --schema-multi\n');
    const bad = await u.run(['chat', '--model', 'local/lorem', '--schema-multi', 'name, age number', 'dogs']);
    expect(bad.stderr).toBe('error: --schema-multi: field age: unknown type "number" (str, int, float or bool)\n');
  });

  it('a role keeps it', async () => {
    const u = user();
    const saved = await u.run(['roles', 'save', 'dogs', '--system', 'Invent dogs.', '--model', 'local/lorem', '--schema-multi', 'name, bio']);
    expect(saved.stderr).toBe('');
    expect(saved.code).toBe(0);
    const r = await u.run(['chat', '--role', 'dogs', 'two dogs']);
    expect(r.stderr).toBe('');
    for (const dog of JSON.parse(r.stdout).items) expect(Object.keys(dog)).toEqual(['name', 'bio']);
  });
});

describe("llm's words for what router spells otherwise: one line naming router's", () => {
  it('templates, keys set, -o and -T say where to go, exit 2, nothing sent', async () => {
    const u = user();
    const cases: [string[], string][] = [
      [['templates'], `error: unknown command 'templates' (a saved prompt is a role here: router roles list, router roles save NAME --system TEXT); see "router --help"\n`],
      [['keys', 'set', 'openai'], `error: unknown command 'set' (to keep the API key router calls with: router login; router keys manages the workspace's keys); see "router keys --help"\n`],
      [['chat', '-o', 'temperature', '0.5', 'hi'], `error: unknown option '-o' (llm's -o KEY VALUE is a flag of its own here: --temperature 0.5, --max-tokens 100); see "router chat --help"\n`],
      [['chat', '-T', 'simple_eval', 'hi'], `error: unknown option '-T' (tools come from a file here: --tools FILE, each with its command; or --mcp SERVER); see "router chat --help"\n`],
      [['chat', '-t', 'summarize', 'hi'], `error: option '-t, --temperature <t>' argument 'summarize' is invalid: not a number (llm's -t TEMPLATE is --role NAME here; -t is --temperature); see "router chat --help"\n`],
      [['chat', '-n', 'hi'], `error: unknown option '-n' (llm's -n is --no-log here); see "router chat --help"\n`],
      [['chat', '--cid', 'trip', 'hi'], `error: unknown option '--cid' (llm's --cid is --conversation ID here; router conversations list shows them); see "router chat --help"\n`],
      // Was: unknown option '--xl', no word of where to go (n6 added --extract-last, llm's --xl).
      [['chat', '--xl', 'hi'], `error: unknown option '--xl' (llm's --xl is --extract-last here); see "router chat --help"\n`],
      [['responses', '--xl', 'hi'], `error: unknown option '--xl' (llm's --xl is --extract-last here); see "router responses --help"\n`],
      [['chat', '--key', 'sk-x', 'hi'], `error: unknown option '--key' (a key is never an argument: ROUTER_API_KEY, or router login --profile NAME and then --profile NAME); see "router chat --help"\n`],
    ];
    for (const [args, line] of cases) {
      const r = await u.run(args);
      expect(r.stderr).toBe(line);
      expect(r.code).toBe(2);
    }
    // A number out of range is no template name.
    expect((await u.run(['chat', '-t', '5', 'hi'])).stderr).not.toContain('--role');
    // Other misspellings keep their guess.
    expect((await u.run(['keys', 'lst'])).stderr).toContain('(did you mean list?)');
  });
});

describe("llm's `models default`: the default model is a setting here", () => {
  it('router models default matches no model and names config get/set model, exit 1', async () => {
    const r = await user().run(['models', 'default']);
    expect(r).toMatchObject({ code: 1, stdout: '', stderr: 'error: no model matches "default" (the default model is a setting: router config get model; router config set model ID)\n' });
  });

  it("llm's and gh's `models list` matches no model and says no word lists them all, exit 1", async () => {
    for (const word of ['list']) {
      const r = await user().run(['models', word]);
      expect(r).toMatchObject({ code: 1, stdout: '', stderr: `error: no model matches "${word}" (router models with no word lists every model; its words search them)\n` });
    }
  });
});
