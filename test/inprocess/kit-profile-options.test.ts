import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ValidationError } from '../../src/client/index.js';
import { clientFromProfile } from '../../src/kit/index.js';

// clientFromProfile('work') (a name, as llm's get_key(name) takes one) was read as a client's options and refused as
// `new RouterClient() has no option "0"`; `{ profile: 5 }` failed in a TypeError ("word.toLowerCase is not a function");
// `{ profile: '' }` took the current profile, where `router --profile ''` is refused. Each is a ValidationError now,
// naming clientFromProfile(), before anything is read.
let dir: string;
let env: Record<string, string>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-kit-profile-options-'));
  // A key and root that would make a client: what is refused is the options' shape, not a missing key.
  env = { ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_KEYCHAIN: 'off', ROUTER_API_KEY: 'sk-rt-v1-0123456789abcdef0123', ROUTER_API_ROOT: 'http://127.0.0.1:9/api' };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refusal = async (make: () => Promise<unknown>) => {
  const err = await make().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return (err as Error).message;
};

it('a profile name given as the options is refused, saying how to give it', async () => {
  expect(await refusal(() => clientFromProfile('work' as never))).toBe('clientFromProfile() takes an object of options: a profile\'s name goes as { profile: "work" }');
  expect(await refusal(() => clientFromProfile(null as never))).toBe('clientFromProfile() takes an object of options, not null');
});

it('a profile that is no name, or an empty one, is refused as router --profile refuses it', async () => {
  expect(await refusal(() => clientFromProfile({ profile: 5 as never, env }))).toBe("clientFromProfile() profile must be a profile's name, not 5");
  // Were "not number", "a list", the profile's JSON ({}, ["work"]): as every check of the kit names what it was given.
  expect(await refusal(() => clientFromProfile(5 as never))).toBe('clientFromProfile() takes an object of options, not 5');
  expect(await refusal(() => clientFromProfile(['work'] as never))).toBe('clientFromProfile() takes an object of options, not an array');
  expect(await refusal(() => clientFromProfile({ profile: ['work'] as never, env }))).toBe("clientFromProfile() profile must be a profile's name, not an array");
  expect(await refusal(() => clientFromProfile({ profile: {} as never, env }))).toBe("clientFromProfile() profile must be a profile's name, not an object");
  expect(await refusal(() => clientFromProfile({ profile: '', env }))).toBe("clientFromProfile() profile must be a profile's name, not empty (without it, the current profile is used)");
});

it('with no profile named, the environment still makes the client', async () => {
  const client = await clientFromProfile({ env });
  await client.close();
});
