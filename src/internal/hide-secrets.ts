/** Whether a secret is long enough to hide: a shorter one would hide ordinary words and numbers (docs/keys.md). */
export const hideable = (secret: unknown): secret is string => typeof secret === 'string' && secret.length >= 8;

/** `text` with each secret replaced by `****` (whole secrets only). */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s && out.includes(s)) out = out.split(s).join('****');
  return out;
}

/** The part of a secret that, left in a text cut short (a quoted snippet, a line cut at its width), still gives too much of it away. */
const PREFIX_CHARS = 16;

/** The least of a secret's start hidden where a cut ended it (see CUT_END): as many characters as a secret's least. */
const CUT_CHARS = 8;

/**
 * The kinds real keys start with, which tell nothing of a key (docs/keys.md): OpenRouter's and router's own,
 * OpenAI's, Anthropic's, Groq's, xAI's and other providers', Stripe's, GitHub's. The longest one a key starts with is
 * its kind.
 */
const KINDS = [
  'sk-or-v1-', 'sk-rt-v1-', 'sk-rt-mgmt-', 'sk-rt-op-',
  'sk-proj-', 'sk-svcacct-', 'sk-admin-', 'sk-ant-api03-', 'sk-ant-admin01-', 'sk-ant-oat01-', 'sk-',
  'gsk_', 'xai-', 'pplx-', 'csk-', 'nvapi-', 'fw_', 'hf_', 'r8_', 'tgp_v1_',
  'sk_live_', 'sk_test_', 'rk_live_', 'rk_test_', 'ghp_', 'github_pat_',
].sort((a, b) => b.length - a.length);

/**
 * A key's kind, which every key of its kind starts with and which tells nothing of the key (`sk-or-v1-`, `sk-proj-`,
 * `gsk_`): the longest known kind (KINDS) it starts with and is longer than; none for a key of no known kind, whose
 * first word may as well be secret (`ab3_` in `sk-proj-ab3_…` is).
 */
export const keyKind = (secret: string): string => KINDS.find((kind) => secret.length > kind.length && secret.startsWith(kind)) ?? '';

/** The longest known kind (KINDS) `text` starts with, all of it maybe: a kind as a key mark keeps it, written by an older router or not. */
export const leadingKind = (text: string): string => KINDS.find((kind) => text.startsWith(kind)) ?? '';

/** How much of a secret's start a cut must leave to give some of it away: 8 characters, and one past its kind. */
export const cutStartFloor = (secret: string): number => Math.max(CUT_CHARS, keyKind(secret).length + 1);

/**
 * What follows a text cut short: its end, a line's, a column's (tab), a closing quote, router's "…" (a title or a preview
 * cut when it was kept). Not three dots: `sk-or-v1-abc...wxyz` is how a service labels a key on purpose (GET /v1/key).
 */
const CUT_END = /^(?:$|[\r\n\t"'`…])/;

/**
 * `text` with each secret shown as `****`: whole; where a cut left only its start, that start too: 16 characters or
 * more of a secret longer than 20 wherever they are, and 8 or more of any secret where the text shows it was cut there
 * (the text, a line or a column ends, or a closing quote follows: a title, a preview, a quoted value), as long as they
 * reach past the key's kind: `sk-or-v1` or `sk-or-v1-` ending a line is every such key's start, not this one's.
 */
export function hideSecrets(text: string, secrets: readonly string[]): string {
  let out = redactText(text, secrets);
  for (const s of secrets) {
    if (s.length <= 20 || !out.includes(s.slice(0, PREFIX_CHARS))) continue;
    for (let n = s.length - 1; n >= PREFIX_CHARS; n--) out = out.split(s.slice(0, n)).join('****');
  }
  for (const s of secrets) if (s.length > CUT_CHARS && out.includes(s.slice(0, CUT_CHARS))) out = hideCutStarts(out, s);
  return out;
}

/**
 * The start of `text` with its secrets hidden, `n` characters of it at least (or all of it), to be cut from: as little
 * of `text` is read as that takes, and it ends where no secret was cut (a start of one is not left at its end).
 */
export function hiddenStart(text: string, secrets: readonly string[], n: number): string {
  const longest = secrets.reduce((m, s) => Math.max(m, s.length), 0);
  for (let take = n + longest; ; take *= 2) {
    if (take >= text.length) return hideSecrets(text, secrets);
    const hidden = hideSecrets(text.slice(0, take), secrets);
    const kept = hidden.slice(0, hidden.length - Math.max(0, longest - 1));
    if (kept.length >= n) return kept;
  }
}

/** `text` with each start of `secret` (CUT_CHARS or more of it) that a cut ended shown as `****`. */
function hideCutStarts(text: string, secret: string): string {
  const head = secret.slice(0, CUT_CHARS);
  const floor = cutStartFloor(secret);
  let out = '';
  let from = 0;
  for (let at = text.indexOf(head); at >= 0; at = text.indexOf(head, at + 1)) {
    if (at < from) continue;
    let n = CUT_CHARS;
    while (n < secret.length && text.charCodeAt(at + n) === secret.charCodeAt(n)) n++;
    if (n < floor || !CUT_END.test(text.slice(at + n, at + n + 1))) continue;
    out += `${text.slice(from, at)}****`;
    from = at + n;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * Each secret and the forms it takes inside JSON text (`"` and `\` escaped, `/` as `\/` too): for text searched as it
 * came (a body `router api` prints); a value is hidden before it is made JSON (redactValue).
 */
export function withJsonForms(secrets: readonly string[]): string[] {
  const forms = new Set(secrets);
  for (const s of secrets) {
    const json = JSON.stringify(s).slice(1, -1);
    forms.add(json);
    forms.add(json.replaceAll('/', '\\/'));
  }
  return [...forms];
}

/** `value` with each of its strings (keys of objects too) as hideSecrets shows it: the same value when none holds a secret. */
export function redactValue<T>(value: T, secrets: readonly string[]): T {
  if (!secrets.length) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return hideSecrets(v, secrets);
    if (Array.isArray(v)) {
      const out = v.map(walk);
      return out.some((x, i) => x !== v[i]) ? out : v;
    }
    if (v === null || typeof v !== 'object') return v;
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const key = hideSecrets(k, secrets);
      out[key] = walk(x);
      changed ||= key !== k || out[key] !== x;
    }
    return changed ? out : v;
  };
  return walk(value) as T;
}
