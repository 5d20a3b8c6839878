import type { DeliveryTarget } from './contract';

/**
 * Temporal refuses a search-attribute value over 2 KB (`limit.searchAttributesSizeOfValue`):
 * the URL list stays well under it, each URL cut short, as many as fit. Every URL
 * is still in the workflow's input; this list is only for finding workflows by URL.
 */
const URLS_ATTR_MAX_BYTES = 1500;
const URLS_ATTR_MAX_URL_CHARS = 200;

/** The ShiphookWebhookUrls value of a run: distinct masked URLs, each cut short, as many as fit. */
export function urlsAttribute(targets: DeliveryTarget[]): string[] {
  const urls: string[] = [];
  let bytes = 2; // []
  for (const url of new Set(targets.map((t) => t.url.slice(0, URLS_ATTR_MAX_URL_CHARS)))) {
    const size = Buffer.byteLength(JSON.stringify(url)) + 1;
    if (bytes + size > URLS_ATTR_MAX_BYTES) break;
    urls.push(url);
    bytes += size;
  }
  return urls;
}
