import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post, sharedCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
let mgmt: Record<string, string>;
const sent = sharedCliEnv((e) => {
  t = e;
  mgmt = { ROUTER_MANAGEMENT_KEY: e.managementKey };
});

describe('router decide', () => {
  it('builds questions from flags and prints the answers', async () => {
    const r = await t.run(['decide', '--state-text', 'The soup was cold', '--model', 'local/judge', '--noul', 'spam', 'Is this spam?', '--true', 'spam', '--false', 'not spam', '--choice', 'topic', 'Topic?', '--option', 'food=about food', '--option', 'tech=about tech', '--score', 'mood', 'How positive?', '--level', 'bad', '--level', 'ok', '--level', 'good', '--json'], { env: mgmt });
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(sent('/alpha/decisions')[0]!.body.questions).toEqual({
      spam: { type: 'noul', instructions: 'Is this spam?', criteria: { true: 'spam', false: 'not spam' } },
      topic: { type: 'choice', instructions: 'Topic?', criteria: { food: 'about food', tech: 'about tech' } },
      mood: { type: 'score', instructions: 'How positive?', criteria: ['bad', 'ok', 'good'] },
    });
    const { spam, topic, mood } = res.answers;
    expect(spam.noul).toBeGreaterThanOrEqual(0);
    expect(spam.noul).toBeLessThanOrEqual(1);
    expect(['food', 'tech']).toContain(topic.choice);
    expect(topic.probabilities.food + topic.probabilities.tech).toBeCloseTo(1, 10);
    const p = Object.values(mood.probabilities) as number[];
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
    expect(mood.score).toBeCloseTo(p.reduce((s, pi, i) => s + pi * i, 0), 6);
    expect(mood.legend).toEqual({ 0: 'bad', 1: 'ok', 2: 'good' });
    const k = p.length;
    expect(mood.confidence).toBeCloseTo(Math.min(1, Math.max(0, (Math.max(...p) - 1 / k) / (1 - 1 / k))), 6);
    expect(res.usage.cost).toBeGreaterThan(0);
    const again = JSON.parse((await t.run(['decide', '--state-text', 'The soup was cold', '--model', 'local/judge', '--noul', 'spam', 'Is this spam?', '--true', 'spam', '--false', 'not spam', '--json'], { env: mgmt })).stdout);
    expect(again.answers.spam).toEqual(spam);
  });

  it('reads state from a file and questions from --questions; prints a TSV table off a TTY', async () => {
    const state = join(t.dir, 'ticket.json');
    writeFileSync(state, JSON.stringify({ subject: 'refund', body: 'please' }));
    const qs = join(t.dir, 'q.json');
    writeFileSync(qs, JSON.stringify({ urgent: { type: 'noul', instructions: 'Urgent?' } }));
    const r = await t.run(['decide', '--state', state, '--questions', qs, '--model', 'local/judge'], { env: mgmt });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^urgent\tnoul\tP\(yes\) \d\.\d\d\t\t\n$/);
    expect(sent('/alpha/decisions')[0]!.body.state).toEqual({ subject: 'refund', body: 'please' });
  });

  it('refuses malformed questions before sending, and the service checks shapes too', async () => {
    // spec: decisions.questions
    t.clearRequests();
    for (const [args, msg] of [
      [['--choice', 'c', 'pick'], /give its options with --option/],
      [['--score', 's', 'rate'], /give its levels with --level/],
      [['--noul', 'n', 'yes?', '--true', 'y'], /both --true and --false/],
      [['--level', 'x'], /must follow a --score question/],
      [[], /no questions/],
    ] as [string[], RegExp][]) {
      const r = await t.run(['decide', '--state-text', 's', '--model', 'local/judge', ...args], { env: mgmt });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    expect(t.requests()).toHaveLength(0);
    const r = await post(t, '/alpha/decisions', { model: 'local/judge', state: 'x', questions: { q: { type: 'score', instructions: 'i', criteria: [] } } }, {}, t.managementKey);
    expect(r.status).toBe(400);
    const std = await post(t, '/alpha/decisions', { model: 'local/judge', state: 'x', questions: { q: { type: 'noul', instructions: 'i' } } });
    expect(std.status).toBe(403);
  });

  it('a question of --questions with a blank instruction or description, or an unknown type, is refused before sending as a flag\'s is', async () => {
    const qs = join(t.dir, 'blank-questions.json');
    for (const [question, msg] of [
      [{ type: 'noul', instructions: ' ', criteria: { true: 'y', false: 'n' } }, 'error: --questions: "q": the instructions are blank\n'],
      [{ type: 'choice', instructions: 'pick', criteria: { a: 'one', b: '' } }, 'error: --questions: "q": criterion "b" has a blank description\n'],
      [{ type: 'vote', instructions: 'pick', criteria: {} }, 'error: --questions: "q": type must be noul, choice or score\n'],
    ] as const) {
      writeFileSync(qs, JSON.stringify({ q: question }));
      const r = await t.run(['decide', '--state-text', 's', '--model', 'local/judge', '--questions', qs], { env: mgmt });
      expect(r).toMatchObject({ code: 2, stderr: msg });
    }
    expect(t.requests()).toHaveLength(0);
  });

  it('sends provider routing preferences, as chat and embed do', async () => {
    // spec: decisions.provider
    const q = ['--state-text', 'The soup was cold', '--model', 'local/judge', '--noul', 'spam', 'Is this spam?'];
    const r = await t.run(['decide', ...q, '--provider-only', 'local-alpha', '--provider-order', 'local-alpha,local-beta', '--no-fallbacks', '--json'], { env: mgmt });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(sent('/alpha/decisions')[0]!.body.provider).toEqual({ only: ['local-alpha'], order: ['local-alpha', 'local-beta'], allow_fallbacks: false });
    expect(JSON.parse(r.stdout).provider).toBe('local-alpha');
    // A provider that does not serve the model: the service finds no endpoint (404, exit 5).
    const none = await t.run(['decide', ...q, '--provider-only', 'local-beta'], { env: mgmt });
    expect(none.code).toBe(5);
    expect(none.stderr).toMatch(/^error: .*provider/);
    const plain = await t.run(['decide', ...q], { env: mgmt });
    expect(plain.code).toBe(0);
    expect(sent('/alpha/decisions').at(-1)!.body).not.toHaveProperty('provider');
  });
});
