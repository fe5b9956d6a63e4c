/**
 * The gateway's image reader (src-main/core/gateway/measure/image-header.ts): real images (tests/fixtures/images, made by
 * Pillow) read as what they are, at the size a decoder decodes; what only looks like an image, as the third review
 * built it to pass a header sniffer, is not one (its bytes then count).
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { imagePixels } from '../../../../src-main/core/gateway/measure/image-header.js';
import { IMAGE_TOKENS_BOUND, imageTokensBound } from '../../../../src-main/core/gateway/measure/image-pixels.js';

const FIXTURES = path.join(import.meta.dirname, '../../../fixtures/images');
const fixture = (name: string): Buffer => readFileSync(path.join(FIXTURES, name));
const u16be = (n: number) => [n >> 8, n & 0xff];
const u32be = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const junk = (n: number) => Array.from({ length: n }, () => 0x41);

describe('real images, as a decoder reads them', () => {
  it.each([
    ['png.png', 'png', { width: 320, height: 200, frames: 1 }],
    ['jpeg.jpeg', 'jpeg', { width: 320, height: 200, frames: 1 }],
    ['jpeg-progressive.jpeg', 'jpeg', { width: 320, height: 200, frames: 1 }],
    ['gif.gif', 'gif', { width: 320, height: 200, frames: 1 }],
    ['webp.webp', 'webp', { width: 320, height: 200, frames: 1 }],
    ['webp-lossless.webp', 'webp', { width: 320, height: 200, frames: 1 }],
    ['gif-anim.gif', 'gif', { width: 64, height: 48, frames: 3 }],
    ['png-anim.png', 'png', { width: 64, height: 48, frames: 3 }],
    ['webp-anim.webp', 'webp', { width: 64, height: 48, frames: 3 }],
  ] as const)('%s: %s of its size and frames', (name, type, expected) => {
    expect(imagePixels(type, fixture(name))).toEqual(expected);
  });

  it('reads a GIF by its largest frame, not its logical screen (1 × 1 screen, 4000 × 4000 frame: Pillow decodes the frame)', () => {
    expect(imagePixels('gif', fixture('gif-screen-1x1-frame-4000.gif'))).toEqual({ width: 4000, height: 4000, frames: 1 });
    expect(imageTokensBound('image/gif', fixture('gif-screen-1x1-frame-4000.gif').toString('base64'))).toBe(Math.ceil((4000 * 4000) / 784));
  });

  it('holds every frame a decoder may read: three frames of 64 × 48 and one of 320 × 200 both stay under the 6,400 floor', () => {
    expect(imageTokensBound('image/gif', fixture('gif-anim.gif').toString('base64'))).toBe(IMAGE_TOKENS_BOUND);
    expect(imageTokensBound('image/png', fixture('png.png').toString('base64'))).toBe(IMAGE_TOKENS_BOUND);
  });

  it('reads every fixture only as its own type', () => {
    for (const name of readdirSync(FIXTURES).filter((n) => !n.endsWith('.md'))) {
      const own = path.extname(name).slice(1);
      for (const type of ['png', 'jpeg', 'gif', 'webp'].filter((t) => t !== own)) expect(imagePixels(type, fixture(name)), `${name} as ${type}`).toBeNull();
    }
  });
});

describe('what only looks like an image (the third review) is not one', () => {
  const sof = (marker: number, w: number, h: number) => [0xff, marker, ...u16be(11), 8, ...u16be(h), ...u16be(w), 1, 1, 0x11, 0];
  const app0 = [0xff, 0xe0, ...u16be(16), ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0];
  const sos = [0xff, 0xda, ...u16be(8), 1, 1, 0, 0, 0x3f, 0];
  const ihdr = (length: number) => [...u32be(length), ...Buffer.from('IHDR'), ...u32be(8), ...u32be(8), 8, 2, 0, 0, 0];
  const withCrc = (chunk: number[]) => [...chunk, ...u32be(crc32(Buffer.from(chunk.slice(4))))];
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

  it.each([
    ['a JPEG with two frame headers (SOF3 65000², then SOF0 8²)', 'jpeg', [0xff, 0xd8, ...app0, ...sof(0xc3, 65000, 65000), ...sof(0xc0, 8, 8), ...sos]],
    [
      'a JPEG whose segments do not chain (junk, then FF C0 further on)',
      'jpeg',
      [0xff, 0xd8, 0xff, 0xe0, ...u16be(4), 0x41, 0x41, ...junk(5000), ...sof(0xc0, 8, 8), ...sos],
    ],
    ['a JPEG that ends before its scan', 'jpeg', [0xff, 0xd8, ...app0, ...sof(0xc0, 8, 8), 0xff, 0xd9]],
    ['a PNG whose IHDR length is not 13', 'png', [...signature, ...withCrc(ihdr(0x7fffffff)), ...junk(5000)]],
    ['a PNG without its first byte (0x89)', 'png', [0x58, ...signature.slice(1), ...withCrc(ihdr(13)), ...junk(5000)]],
    ['a PNG whose IHDR fails its CRC', 'png', [...signature, ...ihdr(13), 0, 0, 0, 0, ...junk(100)]],
    [
      'a WebP VP8 chunk with no key-frame start code',
      'webp',
      [...Buffer.from('RIFF'), 0xff, 0xff, 0xff, 0x0f, ...Buffer.from('WEBPVP8 '), 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0, 0, 8, 0, 8, 0, ...junk(100)],
    ],
    [
      'a WebP VP8L chunk without its signature',
      'webp',
      [...Buffer.from('RIFF'), 0xff, 0xff, 0xff, 0x0f, ...Buffer.from('WEBPVP8L'), 0xff, 0xff, 0xff, 0x0f, 0x41, 0, 0, 0, 0, ...junk(100)],
    ],
    ['a GIF cut off in its frame', 'gif', [...fixture('gif.gif').subarray(0, 300)]],
  ])('%s', (_what, type, bytes) => {
    expect(imagePixels(type, Buffer.from(bytes))).toBeNull();
  });

  it('counts the data of a real image whose base64 is not canonical byte by byte (a decoder skipping stray characters would find the image)', () => {
    expect(imageTokensBound('image/png', `${fixture('png.png').toString('base64')}!!!!`)).toBeNull();
  });
});
