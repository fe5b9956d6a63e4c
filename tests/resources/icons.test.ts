import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { TrayIconState } from '../../src-main/electron/present/desktop-types.js';
import { trayIconFile } from '../../src-main/electron/present/tray.js';

const RESOURCES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../resources');
const STATES: readonly TrayIconState[] = ['idle', 'running', 'attention'];
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Every tray file with its size: 16 px and 32 px (@2x) of each state in each variant. */
const TRAY_FILES: Array<[string, number]> = STATES.flatMap((state) =>
  [`tray-${state}-dark`, `tray-${state}-light`, `tray-${state}Template`].flatMap((base): Array<[string, number]> => [
    [`tray/${base}.png`, 16],
    [`tray/${base}@2x.png`, 32],
  ]),
);
const APP_FILES: Array<[string, number]> = [
  ['icon-256.png', 256],
  ['icon.png', 512],
  ['icon-1024.png', 1024],
];

interface Png {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  interlace: number;
  chunkTypes: string[];
  badCrc: string[];
  rgba: Buffer;
}

/** Reads what make-icons.mjs writes: 8-bit RGBA, not interlaced, every row with filter 0. */
function readPng(file: string): Png {
  const bytes = readFileSync(path.join(RESOURCES, file));
  if (!bytes.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error(`${file}: not a PNG signature`);
  const chunkTypes: string[] = [];
  const badCrc: string[] = [];
  const idat: Buffer[] = [];
  let ihdr = Buffer.alloc(13);
  for (let offset = 8; offset < bytes.length; ) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const data = bytes.subarray(offset + 8, offset + 8 + length);
    if (crc32(bytes.subarray(offset + 4, offset + 8 + length)) !== bytes.readUInt32BE(offset + 8 + length)) badCrc.push(type);
    chunkTypes.push(type);
    if (type === 'IHDR') ihdr = data;
    if (type === 'IDAT') idat.push(data);
    offset += 12 + length;
  }
  const width = ihdr.readUInt32BE(0);
  const height = ihdr.readUInt32BE(4);
  const raw = inflateSync(Buffer.concat(idat));
  const rgba = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    if (raw[y * (width * 4 + 1)] !== 0) throw new Error(`${file}: row ${y} uses a filter this reader does not undo`);
    raw.copy(rgba, y * width * 4, y * (width * 4 + 1) + 1, (y + 1) * (width * 4 + 1));
  }
  return { width, height, bitDepth: ihdr[8] ?? 0, colorType: ihdr[9] ?? 0, interlace: ihdr[12] ?? 0, chunkTypes, badCrc, rgba };
}

/** Alpha-weighted mean luminance (0 black … 1 white) of what an icon draws. */
function inkLuminance(png: Png): number {
  let sum = 0;
  let weight = 0;
  for (let i = 0; i < png.rgba.length; i += 4) {
    const a = (png.rgba[i + 3] ?? 0) / 255;
    const lum = (0.2126 * (png.rgba[i] ?? 0) + 0.7152 * (png.rgba[i + 1] ?? 0) + 0.0722 * (png.rgba[i + 2] ?? 0)) / 255;
    sum += lum * a;
    weight += a;
  }
  return sum / weight;
}

/** Share of pixels whose alpha differs by more than a quarter between two same-sized icons. */
function shapeDifference(a: Png, b: Png): number {
  let differing = 0;
  for (let i = 3; i < a.rgba.length; i += 4) if (Math.abs((a.rgba[i] ?? 0) - (b.rgba[i] ?? 0)) > 64) differing++;
  return differing / (a.width * a.height);
}

describe('the icon files', () => {
  it.each([...TRAY_FILES, ...APP_FILES])('%s is a valid %i px RGBA PNG', (file, size) => {
    const png = readPng(file);
    expect({ width: png.width, height: png.height, bitDepth: png.bitDepth, colorType: png.colorType, interlace: png.interlace }).toEqual({
      width: size,
      height: size,
      bitDepth: 8,
      colorType: 6,
      interlace: 0,
    });
  });

  it.each([...TRAY_FILES, ...APP_FILES])('%s has IHDR first, IEND last and every checksum right', (file) => {
    const png = readPng(file);
    expect([png.chunkTypes[0], png.chunkTypes.at(-1), png.badCrc]).toEqual(['IHDR', 'IEND', []]);
  });

  it.each(TRAY_FILES.filter(([file]) => file.includes('Template')))('%s is black with alpha only, as macOS template images must be', (file) => {
    const { rgba } = readPng(file);
    const coloured = [];
    for (let i = 0; i < rgba.length; i += 4) if (rgba[i] || rgba[i + 1] || rgba[i + 2]) coloured.push(i / 4);
    expect(coloured).toEqual([]);
  });

  it.each(TRAY_FILES)('%s draws something and leaves a transparent margin', (file) => {
    const { rgba } = readPng(file);
    const alphas = Array.from({ length: rgba.length / 4 }, (_, i) => rgba[i * 4 + 3] ?? 0);
    expect([alphas.some((a) => a === 255), alphas.some((a) => a === 0)]).toEqual([true, true]);
  });
});

describe('the tray icon states', () => {
  it.each(['-dark', '-light', 'Template'])('differ in shape from one another in the %s variant (not only in colour)', (variant) => {
    const [idle, running, attention] = STATES.map((state) => readPng(`tray/tray-${state}${variant}@2x.png`)) as [Png, Png, Png];
    const differences = [shapeDifference(idle, running), shapeDifference(idle, attention), shapeDifference(running, attention)];
    expect(differences.every((d) => d > 0.05)).toBe(true);
  });

  it.each(STATES)('draw %s dark in the dark variant and light in the light one', (state) => {
    const dark = inkLuminance(readPng(`tray/tray-${state}-dark@2x.png`));
    const light = inkLuminance(readPng(`tray/tray-${state}-light@2x.png`));
    expect([dark < 0.35, light > 0.6]).toEqual([true, true]);
  });

  it.each(STATES.flatMap((state) => [
    [state, 'darwin', true],
    [state, 'win32', true],
    [state, 'linux', false],
  ] as Array<[TrayIconState, NodeJS.Platform, boolean]>))('exist for trayIconFile(%s, %s, dark bar %s), at 1x and @2x', (state, platform, darkBar) => {
    const file = trayIconFile(state, platform, darkBar);
    const sizes = [readPng(`tray/${file}`).width, readPng(`tray/${file.replace(/\.png$/, '@2x.png')}`).width];
    expect(sizes).toEqual([16, 32]);
  });
});
