/** Bounded: the oldest session is forgotten first. */
const MAX_SESSIONS = 10_000;

/** Sticky routing: the provider that last answered a session's model, tried first next time. */
export class Sessions {
  private readonly map = new Map<string, string>();

  get(key: string): string | undefined {
    return this.map.get(key);
  }

  set(key: string, slug: string): void {
    this.map.delete(key);
    this.map.set(key, slug);
    if (this.map.size > MAX_SESSIONS) this.map.delete(this.map.keys().next().value!);
  }
}
