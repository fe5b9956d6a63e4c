/**
 * A real PNG of `width` × `height` pixels, 1 bit per pixel, all black: signature, IHDR, IDAT and IEND, each chunk with
 * its CRC, so a strict reader (src-main/core/gateway/measure/image-header.ts) and a decoder take it as the image it is. `rows`
 * false leaves out the pixel rows (a header for a huge image, with a token IDAT): what a header reader sees is the same.
 */
import { crc32, deflateSync } from 'node:zlib';

export function png(width: number, height: number, options: { rows?: boolean } = {}): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, 'ascii'), data])));
    return Buffer.concat([length, Buffer.from(type, 'ascii'), data, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(1, 8);
  const row = Buffer.alloc(1 + Math.ceil(width / 8));
  const pixels = deflateSync(options.rows === false ? Buffer.alloc(64) : Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}
