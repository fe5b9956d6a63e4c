/**
 * How many pixels an image may make a provider decode, read from its own structure, strictly (docs/ARCHITECTURE.md
 * §11). This decides the one exception to "every forwarded byte counts" (image-pixels.ts), so it must never take for
 * an image what is not one: a header-sniffing library (image-size) accepted a PNG without its first byte, a JPEG whose
 * segments do not chain (it slid forward to the first C0), a GIF whose frame is larger than its screen (Pillow decodes
 * the frame), and let megabytes through at an image's price (the third review). So each format is walked as its
 * specification lays it out, and anything that does not walk is not an image here (its bytes then count):
 *  - PNG: the whole signature, a 13-byte IHDR first with a valid CRC; the chunks before the first IDAT walked for an
 *    APNG's frame count (acTL);
 *  - JPEG: SOI, then segments chained by their lengths up to the first SOS, with exactly one frame header (SOFn);
 *  - GIF: the header, the logical screen, then every block to the trailer: each frame's extent counts, not the screen's;
 *  - WebP: RIFF/WEBP, then a VP8 key frame (start code), a VP8L (signature 0x2f) or a VP8X canvas, its ANMF frames
 *    counted.
 * The answer is width × height × frames at most: a provider that decodes every frame pays that.
 */
import { crc32 } from 'node:zlib';

/** What an image may cost a decoder: the largest frame's extent and how many frames. */
export interface ImagePixels {
  width: number;
  height: number;
  frames: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The pixels of `bytes` read as `type` ('png' | 'jpeg' | 'gif' | 'webp'), or null when they are not that. */
export function imagePixels(type: string, bytes: Buffer): ImagePixels | null {
  const found = type === 'png' ? png(bytes) : type === 'jpeg' ? jpeg(bytes) : type === 'gif' ? gif(bytes) : type === 'webp' ? webp(bytes) : null;
  return found && found.width > 0 && found.height > 0 && found.frames > 0 ? found : null;
}

function png(bytes: Buffer): ImagePixels | null {
  if (bytes.length < 33 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return null;
  if (bytes.readUInt32BE(8) !== 13 || bytes.toString('latin1', 12, 16) !== 'IHDR') return null;
  if (crc32(bytes.subarray(12, 29)) !== bytes.readUInt32BE(29)) return null;
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  if (width > 0x7fffffff || height > 0x7fffffff) return null;
  let frames = 1;
  // The chunks before the image data: an APNG says there how many frames it has.
  for (let at = 33; at + 12 <= bytes.length;) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    if (type === 'IDAT' || type === 'IEND') break;
    if (at + 12 + length > bytes.length) return null;
    if (type === 'acTL' && length >= 8) frames = Math.max(1, bytes.readUInt32BE(at + 8));
    at += 12 + length;
  }
  return { width, height, frames };
}

/** Frame headers: C0–CF but for DHT (C4), JPG (C8) and DAC (CC). */
const isFrameHeader = (marker: number): boolean => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

function jpeg(bytes: Buffer): ImagePixels | null {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return null;
  let frame: ImagePixels | null = null;
  for (let at = 2; ;) {
    if (bytes[at] !== 0xff) return null;
    // Fill bytes (FF) may stand before a marker.
    while (bytes[at] === 0xff) at++;
    const marker = bytes[at];
    if (marker === undefined || at + 3 > bytes.length) return null;
    at++;
    if (marker === 0xda) return frame;
    if (marker === 0xd9 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) return null;
    const length = bytes.readUInt16BE(at);
    if (length < 2 || at + length > bytes.length) return null;
    if (isFrameHeader(marker)) {
      // A second frame header: two readings of one image, and no telling which a decoder takes.
      if (frame !== null || length < 8) return null;
      frame = { height: bytes.readUInt16BE(at + 3), width: bytes.readUInt16BE(at + 5), frames: 1 };
    }
    at += length;
  }
}

function gif(bytes: Buffer): ImagePixels | null {
  const version = bytes.toString('latin1', 0, 6);
  if ((version !== 'GIF87a' && version !== 'GIF89a') || bytes.length < 13) return null;
  let width = bytes.readUInt16LE(6);
  let height = bytes.readUInt16LE(8);
  const flags = bytes[10] ?? 0;
  let at = 13 + (flags & 0x80 ? 3 * 2 ** ((flags & 0x07) + 1) : 0);
  let frames = 0;
  for (;;) {
    const block = bytes[at];
    if (block === 0x3b) return { width, height, frames };
    if (block === 0x21) {
      at = skipSubBlocks(bytes, at + 2);
    } else if (block === 0x2c) {
      if (at + 10 > bytes.length) return null;
      width = Math.max(width, bytes.readUInt16LE(at + 1) + bytes.readUInt16LE(at + 5));
      height = Math.max(height, bytes.readUInt16LE(at + 3) + bytes.readUInt16LE(at + 7));
      frames++;
      const local = bytes[at + 9] ?? 0;
      // The local colour table, the LZW code size, then the image data's sub-blocks.
      at = skipSubBlocks(bytes, at + 10 + (local & 0x80 ? 3 * 2 ** ((local & 0x07) + 1) : 0) + 1);
    } else return null;
    if (at < 0) return null;
  }
}

/** Past a run of sub-blocks (a length byte, that many bytes, … a zero): where the next block starts, or -1. */
function skipSubBlocks(bytes: Buffer, from: number): number {
  let at = from;
  for (;;) {
    const size = bytes[at];
    if (size === undefined) return -1;
    at += 1 + size;
    if (size === 0) return at;
    if (at > bytes.length) return -1;
  }
}

function webp(bytes: Buffer): ImagePixels | null {
  if (bytes.length < 30 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WEBP') return null;
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') {
    // A key frame (bit 0 of the frame tag clear), then the start code.
    if ((bytes[20] ?? 1) & 1 || bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return null;
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff, frames: 1 };
  }
  if (chunk === 'VP8L') {
    if (bytes[20] !== 0x2f) return null;
    const bits = bytes.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, frames: 1 };
  }
  if (chunk !== 'VP8X') return null;
  const width = bytes.readUIntLE(24, 3) + 1;
  const height = bytes.readUIntLE(27, 3) + 1;
  let frames = 0;
  for (let at = 12; at + 8 <= bytes.length;) {
    const size = bytes.readUInt32LE(at + 4);
    if (bytes.toString('latin1', at, at + 4) === 'ANMF') frames++;
    at += 8 + size + (size % 2);
  }
  return { width, height, frames: Math.max(1, frames) };
}
