/**
 * The width and height an image's own header declares, read the way a provider's decoder would read them before it
 * bills the image by its pixels (billing-openrouter.ts, the every-byte and json-dumps modes). Written from the
 * formats' specifications, not from the gateway's code nor any image library's, so the billing oracle shares no
 * assumption with what it checks. Only the header is read: a file that declares 50,000 × 50,000 pixels and carries
 * no pixel data is billed as 50,000 × 50,000, because a provider that sizes the image before decoding it would.
 * Anything that does not parse as the format it is labelled with answers null, and is billed by its bytes.
 */

export interface ImageDimensions {
  width: number;
  height: number;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  return prefix.every((byte, i) => bytes[at + i] === byte);
}

function ascii(text: string): number[] {
  return [...text].map((char) => char.charCodeAt(0));
}

function u16be(bytes: Uint8Array, at: number): number {
  return ((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0);
}
function u16le(bytes: Uint8Array, at: number): number {
  return (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8);
}
function u24le(bytes: Uint8Array, at: number): number {
  return u16le(bytes, at) | ((bytes[at + 2] ?? 0) << 16);
}
function u32be(bytes: Uint8Array, at: number): number {
  return u16be(bytes, at) * 0x10000 + u16be(bytes, at + 2);
}
function u32le(bytes: Uint8Array, at: number): number {
  return u16le(bytes, at) + u16le(bytes, at + 2) * 0x10000;
}

function sized(width: number, height: number): ImageDimensions | null {
  return width > 0 && height > 0 ? { width, height } : null;
}

/** PNG: the signature, then the first chunk, which must be a 13-byte IHDR: width and height, big-endian, at most 2^31−1. */
function png(bytes: Uint8Array): ImageDimensions | null {
  if (!startsWith(bytes, PNG_SIGNATURE) || bytes.length < 8 + 8 + 13) return null;
  if (u32be(bytes, 8) !== 13 || !startsWith(bytes, ascii('IHDR'), 12)) return null;
  const width = u32be(bytes, 16);
  const height = u32be(bytes, 20);
  return width <= 0x7fffffff && height <= 0x7fffffff ? sized(width, height) : null;
}

/** GIF: "GIF87a" or "GIF89a", then the logical screen's width and height, little-endian. */
function gif(bytes: Uint8Array): ImageDimensions | null {
  if (!(startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) || bytes.length < 10) return null;
  return sized(u16le(bytes, 6), u16le(bytes, 8));
}

/** The start-of-frame markers that carry a frame's size: C0–CF but DHT (C4), JPG (C8) and DAC (CC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/**
 * JPEG: SOI, then marker segments until the first start of frame, whose height and width (big-endian, after the
 * sample precision) are the image's. Fill bytes (FF) before a marker are skipped; a scan (SOS) or the end (EOI)
 * before any frame, or a segment that runs past the end, is no JPEG.
 */
function jpeg(bytes: Uint8Array): ImageDimensions | null {
  if (!startsWith(bytes, [0xff, 0xd8])) return null;
  let at = 2;
  while (at + 1 < bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    // Markers that stand alone, without a length: TEM and the restart markers.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === 0xd8 || marker === 0xd9 || marker === 0xda) return null;
    const length = u16be(bytes, at + 2);
    if (length < 2 || at + 2 + length > bytes.length) return null;
    if (isStartOfFrame(marker)) return length >= 7 ? sized(u16be(bytes, at + 7), u16be(bytes, at + 5)) : null;
    at += 2 + length;
  }
  return null;
}

/**
 * WebP: a RIFF container of form "WEBP" whose first chunk is VP8 (lossy: a key frame's start code 9D 01 2A, then
 * 14-bit width and height), VP8L (lossless: signature 2F, then width−1 and height−1 in 14 bits each) or VP8X
 * (extended: the canvas's width−1 and height−1 in 24 bits each).
 */
function webp(bytes: Uint8Array): ImageDimensions | null {
  if (!startsWith(bytes, ascii('RIFF')) || !startsWith(bytes, ascii('WEBP'), 8) || bytes.length < 30) return null;
  if (startsWith(bytes, ascii('VP8 '), 12)) {
    const keyFrame = ((bytes[20] ?? 1) & 1) === 0;
    if (!keyFrame || !startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) return null;
    return sized(u16le(bytes, 26) & 0x3fff, u16le(bytes, 28) & 0x3fff);
  }
  if (startsWith(bytes, ascii('VP8L'), 12)) {
    if (bytes[20] !== 0x2f) return null;
    const bits = u32le(bytes, 21);
    return sized((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (startsWith(bytes, ascii('VP8X'), 12)) return sized(u24le(bytes, 24) + 1, u24le(bytes, 27) + 1);
  return null;
}

const PARSERS: Record<string, (bytes: Uint8Array) => ImageDimensions | null> = {
  'image/png': png,
  'image/gif': gif,
  'image/jpeg': jpeg,
  'image/webp': webp,
};

/** The dimensions `bytes` declare as a `mediaType` image; null for another media type or bytes that are not that format. */
export function imageDimensions(mediaType: string, bytes: Uint8Array): ImageDimensions | null {
  const parse = Object.hasOwn(PARSERS, mediaType) ? PARSERS[mediaType] : undefined;
  return parse ? parse(bytes) : null;
}
