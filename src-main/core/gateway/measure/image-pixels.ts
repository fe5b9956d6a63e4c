/**
 * The one named exception to "every forwarded byte counts" (docs/ARCHITECTURE.md §11): an image's base64 data is
 * not text a model reads; a provider decodes it and bills its pixels. So an image block whose source is base64 of a
 * type the Messages API takes (PNG, JPEG, GIF, WebP) AND whose bytes parse as that type is bounded by its pixels;
 * any other source, or bytes that do not parse as what they claim, count byte by byte like the rest. The base64 must
 * be canonical (nothing but its alphabet, padded to a multiple of 4): Buffer.from skips stray characters, so 2 MB of
 * them after a small PNG would otherwise pass as the PNG.
 *
 * The pixel bound: no model in the catalogue spends more than a token per 28 × 28 patch (Qwen2-VL's, the finest
 * known; Anthropic scales to about 1.15 megapixels and charges w × h / 750, OpenAI and Gemini tile larger), for every
 * frame a decoder may read (image-header.ts), and never less than IMAGE_TOKENS_BOUND, which covers every image up to
 * 5 megapixels.
 */
import { imagePixels } from './image-header.js';

/** Tokens an image is held at, at least. */
export const IMAGE_TOKENS_BOUND = 6_400;
/** Pixels per token at most: a 28 × 28 patch. */
const PIXELS_PER_TOKEN = 28 * 28;
/** Canonical base64: the alphabet, then at most two '=' of padding. */
const CANONICAL_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** The media types the Messages API takes for an image, and the format each is read as (image-header.ts). */
const MEDIA_TYPES: Readonly<Record<string, string>> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

/**
 * The tokens an image costs at most, or null when it is not an image of the kind it claims (its data then counts
 * byte by byte). `data` is the source's base64 text as the body carries it.
 */
export function imageTokensBound(mediaType: unknown, data: unknown): number | null {
  if (typeof mediaType !== 'string' || typeof data !== 'string' || !Object.hasOwn(MEDIA_TYPES, mediaType)) return null;
  if (data.length % 4 !== 0 || !CANONICAL_BASE64.test(data)) return null;
  const found = imagePixels(MEDIA_TYPES[mediaType] ?? '', Buffer.from(data, 'base64'));
  if (found === null) return null;
  return Math.max(IMAGE_TOKENS_BOUND, Math.ceil((found.width * found.height * found.frames) / PIXELS_PER_TOKEN));
}
