/**
 * App attribution: the app's URL, title and categories, sent with every call as the deployed service
 * reads them (HTTP-Referer; X-OpenRouter-Title and its older name X-Title; X-OpenRouter-Categories).
 */
import { SettingsError } from './fields.js';

const CATEGORY = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** A value checked as `config set` stores it, or a SettingsError naming where it came from. */
export function checkAttribution(field: 'app_url' | 'app_title' | 'app_categories', value: string, from: string): string {
  const v = value.trim();
  if (field === 'app_url') {
    let url: URL | undefined;
    try {
      url = new URL(v);
    } catch {
      /* said below */
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new SettingsError(`${from}: "${shown(v)}" is not an http(s) URL (e.g. https://example.com/my-app)`);
    if (url.username || url.password) throw new SettingsError(`${from}: the app URL must not hold a user name or password (it is sent with every call)`);
  }
  // A header value: printable ASCII, one line.
  if (!/^[\x20-\x7e]*$/.test(v)) throw new SettingsError(`${from} is sent as an HTTP header: use printable ASCII characters only`);
  if (v.length > 512) throw new SettingsError(`${from} is longer than 512 characters`);
  if (field === 'app_categories') {
    const bad = v.split(',').map((c) => c.trim()).find((c) => !CATEGORY.test(c));
    if (bad !== undefined) throw new SettingsError(`${from}: "${shown(bad)}" is not a category: give comma-separated lowercase slugs, e.g. cli-agent,programming-app`);
    return v.split(',').map((c) => c.trim()).join(',');
  }
  return v;
}

const shown = (v: string) => (v.length > 40 ? `${v.slice(0, 40)}…` : v);

export interface AttributionSettings {
  appUrl?: string;
  appTitle?: string;
  appCategories?: string;
}

/** The headers of the attribution settings that are set; `name` says where a value came from, for errors. */
export function attributionHeaders(s: AttributionSettings, name: (field: 'app_url' | 'app_title' | 'app_categories') => string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (s.appUrl !== undefined) headers['http-referer'] = checkAttribution('app_url', s.appUrl, name('app_url'));
  if (s.appTitle !== undefined) headers['x-openrouter-title'] = headers['x-title'] = checkAttribution('app_title', s.appTitle, name('app_title'));
  if (s.appCategories !== undefined) headers['x-openrouter-categories'] = checkAttribution('app_categories', s.appCategories, name('app_categories'));
  return headers;
}
