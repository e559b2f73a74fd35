import { describe, expect, it } from 'vitest';
import { frameJsonTo, sameJson } from '../../src/emulator/routing/json-frame.js';

type Body = Record<string, unknown>;

/** What frameJsonTo adds for `data` parsed and then changed by `change`, joined. */
function framed(data: string, change: (chunk: Body) => void = () => undefined): { got: string; want: string } {
  const chunk = JSON.parse(data) as Body;
  change(chunk);
  let got = '';
  frameJsonTo(chunk, data, (text) => (got += text));
  return { got, want: JSON.stringify(chunk) };
}

/** The relay's changes to a parsed chunk: its model, id and provider (added when it had none), the first's metadata. */
const relay = (chunk: Body): Body => {
  if (chunk.model !== undefined) chunk.model = 'test/m';
  chunk.id = 'gen-own';
  chunk.provider = 'up';
  return chunk;
};
/** A price put in a chunk's usage (priceUsage): its cost, its details anew, a member added. */
const priced = (chunk: Body): void => {
  const usage = relay(chunk).usage as Body | undefined;
  if (!usage || typeof usage !== 'object') return;
  usage.cost = 0.000008;
  usage.cost_details = { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.000005 };
  usage.is_byok = false;
};

const HEAD = '"id":"gen-up-1","object":"chat.completion.chunk","created":1700000000,"model":"m","provider":"up-1"';
const texts = [
  `{${HEAD},"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
  `{${HEAD},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}]}`,
  `{${HEAD},"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":14,"total_tokens":19,"cost":0.0000355,"is_byok":false,"cost_details":{"upstream_inference_cost":null,"upstream_inference_prompt_cost":0.0000025}}}`,
  // No provider, no id: both added at the end; no model: left without one.
  '{"object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"length"}]}',
  '{"object":"chat.completion.chunk","choices":[]}',
  '{}',
  // What stringify writes otherwise: space, other escapes, numbers in other forms, a name twice, an index name first.
  `{ ${HEAD},"choices":[]}`,
  `{${HEAD}, "choices":[]}`,
  `{${HEAD},"choices" :[]}`,
  `{${HEAD},"choices":[ ]}`,
  `{${HEAD},"choices":[{"delta":{"content":"caf\\u00e9 \\/ \\u001f \\ud83d\\ude00 \\ud800"}}]}`,
  `{${HEAD},"choices":[{"delta":{"content":"caf\u00e9 \ud83d\ude00 \\" \\\\ \\n\\t\\r\\b\\f \u2028"}}]}`,
  `{${HEAD},"usage":{"a":1.0,"b":1e-7,"c":1E5,"d":0.0000001,"e":0.000001,"f":-0,"g":-0.5,"h":12345678901234567890,"i":123456789012345,"j":1234567890123456,"k":0.1,"l":0.30000000000000004,"m":100,"n":-0.0,"o":5e0}}`,
  `{${HEAD},"usage":{"cost":0.0000355,"x":0.1234567890123456,"y":1.5,"z":-12.25}}`,
  `{${HEAD},"model":"m2","choices":[]}`,
  `{${HEAD},"choices":[],"choices":[1]}`,
  `{"b":1,"1":2,${HEAD}}`,
  `{${HEAD},"choices":[{"delta":{"b":1,"1":2}}]}`,
  `{${HEAD},"x":true,"y":false,"z":null,"w":[true,false,null,[],{}]}`,
];

describe("the relay's parsed chunks framed from their text", () => {
  it('writes what JSON.stringify writes for each chunk as the relay changes it', () => {
    for (const data of texts) {
      let parsed = true;
      try {
        JSON.parse(data);
      } catch {
        parsed = false;
      }
      if (!parsed) continue;
      for (const change of [relay, priced, () => undefined, (c: Body) => Object.assign(relay(c), { router_metadata: { a: [1, 'b'] } })]) {
        const { got, want } = framed(data, change);
        expect(got, data).toBe(want);
      }
    }
  });

  it('frames from slices of the text, stringifying only the members changed', () => {
    const data = texts[2]!;
    const chunk = JSON.parse(data) as Body;
    priced(chunk);
    const pieces: string[] = [];
    frameJsonTo(chunk, data, (text) => pieces.push(text));
    expect(pieces.join('')).toBe(JSON.stringify(chunk));
    // The values changed stringified, those within usage too; the rest as slices of the text.
    expect(pieces.filter((p) => !data.includes(p))).toEqual(['"gen-own"', '"test/m"', '"up"', '0.000008', '0.000005']);
    expect(pieces.find((p) => p.includes('"usage":{"prompt_tokens":5,"completion_tokens":14,"total_tokens":19,"cost":'))).toBeDefined();
  });

  it('tells a number written as stringify writes it from one written otherwise', () => {
    const same = (text: string) => sameJson(JSON.parse(text), text, 0) === text.length;
    for (const text of ['0', '1', '-1', '100', '0.5', '-0.5', '0.0000355', '0.000001', '123456789012345', '1.5', '0.1']) expect(same(text), text).toBe(true);
    for (const text of ['1.0', '1e-7', '1E5', '0.0000001', '-0', '-0.0', '5e0', '1.50', '12345678901234567890']) expect(same(text), text).toBe(false);
    // Whatever sameJson says same is what stringify writes.
    for (let i = 0; i < 5_000; i++) {
      const digits = Math.floor(Math.random() * 17) + 1;
      const value = Math.floor(Math.random() * 10 ** digits) / 10 ** Math.floor(Math.random() * (digits + 6));
      for (const text of [String(value), value.toFixed(Math.min(20, Math.floor(Math.random() * 20))), value.toPrecision(Math.floor(Math.random() * 17) + 1)]) {
        if (sameJson(JSON.parse(text), text, 0) === text.length) expect(JSON.stringify(JSON.parse(text)), text).toBe(text);
      }
    }
  });
});
