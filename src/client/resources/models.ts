import { Resource, type CallOptions } from './shared.js';
import { SHAPES } from '../answer-shape.js';

export interface Model {
  id: string;
  name?: string;
  [key: string]: unknown;
}

/** The models the service routes to (`GET {base_url}/models`, from the official OpenAPI description). */
export class Models extends Resource {
  async list(opts: CallOptions = {}): Promise<Model[]> {
    return (await this.request<{ data: Model[] }>('GET', '/models', opts, {}, SHAPES.modelList)).data;
  }
}
