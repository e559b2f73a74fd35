/** Embedding collections: kept vectors, embedded in batches and resumed, searched by cosine similarity. */
export { Collections, Collection, contentHash, checkCollectionName, type CollectionEntry, type CollectionMeta, type CollectionSummary, type CollectionsOptions, type EntryWrite } from './store.js';
export { planEmbeds, runPlan, embedInto, embedTexts, embedBody, DEFAULT_BATCH_SIZE, DEFAULT_CONCURRENCY, type EmbedItem, type EmbedPlan, type PlanOptions, type SendOptions } from './embed.js';
export { similarTo, similarToId, type SimilarHit, type SimilarOptions } from './similar.js';
export { itemsFromText, itemsFromFiles, formatOf, globTest, type ItemsFormat } from './items.js';
