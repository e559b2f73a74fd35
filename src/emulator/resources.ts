import type { ResourceRoute } from './server.js';
import type { StateStore } from './store.js';

/** The emulator's resource routes beyond chat completions. */
export function routes(_store: StateStore): ResourceRoute[] {
  return [];
}
