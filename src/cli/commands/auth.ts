/** `router auth status`: which key the settings give, and what the service says of it (gh's name). */
import { defineCommand, defineGroup } from '../define.js';
import { jsonFlags } from '../setup-flags.js';
import { checkKey, dollars, limitText } from '../key-check.js';

const status = defineCommand({
  name: 'status',
  summary:
    'check the API key the settings give (flags > environment > profile) against the service: GET /v1/key, or a one-item batch listing where the service has no such route; exit 3 when it is refused',
  flags: jsonFlags('print {profile, api_root, api_root_from, key, key_from, checked_with, details}'),
  examples: ['router auth status', 'router auth status --json'],
  run: async ({ io, opts, connect }) => {
    const { client, settings } = await connect();
    const { maskKey, sourceName } = await import('../../config/settings.js');
    const rootFrom = settings.from.apiRoot ? sourceName(settings.from.apiRoot) : 'the default';
    const keyFrom = sourceName(settings.from.apiKey!);
    try {
      const { route, info } = await checkKey(client, `: check the API key ${settings.from.apiKey!.kind === 'profile' ? `of profile "${settings.profile}"` : `in ${keyFrom}`}`);
      const key = maskKey(settings.apiKey);
      if (opts.json) return io.json({ profile: settings.profile, api_root: client.core.apiRoot, api_root_from: rootFrom, key, key_from: keyFrom, checked_with: route, details: info ?? null });
      const rows: [string, string][] = [
        ['profile', settings.profile],
        ['api root', `${client.core.apiRoot} (${rootFrom})`],
        ['key', `${key} from ${keyFrom} (accepted by ${route})`],
      ];
      if (info) {
        rows.push(['label', info.label], ['limit', limitText(info)], ['usage', dollars(info.usage)]);
        if (info.is_management_key) rows.push(['kind', 'management key']);
        if (info.expires_at) rows.push(['expires', info.expires_at]);
      } else rows.push(['details', 'this service has no GET /v1/key: no label, limits or usage to show']);
      io.out(rows.map(([k, v]) => `${k.padEnd(9)} ${v}\n`).join(''));
    } finally {
      await client.close();
    }
  },
});

export const auth = defineGroup({
  name: 'auth',
  summary: 'auth status: is the key accepted, its label, limits and usage',
  description: 'The API key in use: is it accepted, and what are its label, limits and usage.',
  commands: [status],
});
