import { Resource, type PlainCallOptions } from './shared.js';
import { SHAPES } from '../answer-shape.js';
import { ProtocolError } from '../errors.js';

/** A model as the official OpenAPI describes it; optional here, as a gateway or an older service may leave one out. */
export interface Model {
  id: string;
  name?: string | undefined;
  canonical_slug?: string | undefined;
  created?: number | undefined;
  description?: string | undefined;
  context_length?: number | null | undefined;
  /** USD a token (`prompt`, `completion`), an image, a request, …, as decimal strings. */
  pricing?: { prompt: string; completion: string; [price: string]: string | undefined } | undefined;
  architecture?: { modality?: string | undefined; input_modalities?: string[] | undefined; output_modalities?: string[] | undefined; tokenizer?: string | undefined; instruct_type?: string | null | undefined } | undefined;
  top_provider?: { context_length?: number | null | undefined; max_completion_tokens?: number | null | undefined; is_moderated?: boolean | undefined } | undefined;
  supported_parameters?: string[] | undefined;
  [key: string]: unknown;
}

interface ModelPage {
  data: Model[];
  total_count?: number;
  links?: { next?: string | null };
}

/** More pages than any model list has: a `links.next` that never ends is refused, not followed forever. */
const MAX_PAGES = 1000;

/** The models the service routes to (`GET {base_url}/models`, from the official OpenAPI description). */
export class Models extends Resource {
  /**
   * Every model, page after page (`links.next`, a path from the service's host). The service lists
   * only text models unless asked: `outputModalities` is `all` unless given (`text`, `embeddings`, ...).
   */
  async list(opts: PlainCallOptions & { outputModalities?: string | undefined } = {}): Promise<Model[]> {
    const query = { output_modalities: opts.outputModalities ?? 'all' };
    let page = await this.request<ModelPage>('GET', '/models', opts, { query }, SHAPES.modelList);
    const models = [...page.data];
    const seen = new Set<string>();
    for (let next = page.links?.next; typeof next === 'string' && next !== ''; next = page.links?.next) {
      const url = this.nextPage(next);
      if (seen.has(url) || seen.size >= MAX_PAGES) throw new ProtocolError(`the service's model list does not end: page ${url} ${seen.has(url) ? 'comes again' : `is past ${MAX_PAGES} pages`}`);
      seen.add(url);
      page = await this.request<ModelPage>('GET', '/models', opts, { url }, SHAPES.modelList);
      models.push(...page.data);
    }
    return models;
  }

  /** A next page's link as a URL on the API root's own host (the key is never sent elsewhere). */
  private nextPage(link: string): string {
    const root = new URL(this.core.apiRoot);
    let url: URL;
    try {
      url = new URL(link, root);
    } catch {
      throw new ProtocolError(`the service's model list links to a next page that is no URL: ${link.slice(0, 120)}`);
    }
    if (url.origin !== root.origin) throw new ProtocolError(`the service's model list links to a next page on another host (${url.origin}): not followed`);
    return url.toString();
  }
}
