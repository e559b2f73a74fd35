/** The providers a request names itself, apart from the rules of provider-rules.ts: who they leave out, and why. */

/** The providers a request names itself (`provider.only`, `ignore`, `order`, `allow_fallbacks`). */
export interface Named {
  only?: string[];
  ignore: string[];
  order: string[];
  allowFallbacks: boolean;
}

/** Why `provider.only` or `ignore` leaves a provider out, or undefined when they keep it. */
export function namedOut(slug: string, named: Named): string | undefined {
  if (named.only && !named.only.includes(slug)) return `${slug}: not named in provider.only`;
  if (named.ignore.includes(slug)) return `${slug}: named in provider.ignore`;
  return undefined;
}

/**
 * A model's providers (already in `order`) kept under `allow_fallbacks: false`: those `order` names, else the
 * first; each other one told to `out` with why. All of them when fallbacks are allowed.
 */
export function withoutFallbacks<T>(list: T[], slugOf: (t: T) => string, named: Named, out: (t: T, why: string) => void): T[] {
  if (named.allowFallbacks) return list;
  const kept = named.order.length ? list.filter((t) => named.order.includes(slugOf(t))) : list.slice(0, 1);
  const why = named.order.length ? 'not in provider.order' : `not the first provider${kept.length ? ` (${slugOf(kept[0]!)})` : ''}`;
  for (const t of list) if (!kept.includes(t)) out(t, `${slugOf(t)}: ${why}, and provider.allow_fallbacks is false`);
  return kept;
}
