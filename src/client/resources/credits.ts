import { Resource, type PlainCallOptions } from './shared.js';
import type { AnswerShape } from '../answer-shape.js';

export interface AccountCredits {
  /** USD bought. */
  total_credits: number;
  /** USD spent. */
  total_usage: number;
}

const CREDITS: AnswerShape = { what: 'the credits of the account', fields: { data: 'object', 'data.total_credits': 'number', 'data.total_usage': 'number' } };

/** The account's credits (`GET {base_url}/credits`, a management key, as the official OpenAPI description has it). */
export class Credits extends Resource {
  async get(opts: PlainCallOptions = {}): Promise<AccountCredits> {
    return (await this.request<{ data: AccountCredits }>('GET', '/credits', opts, {}, CREDITS)).data;
  }
}
