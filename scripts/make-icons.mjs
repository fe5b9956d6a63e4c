#!/usr/bin/env node
// Draws the tray icons and the app icon as PNGs, with no dependencies: shapes are signed-distance
// functions, each pixel is supersampled, and a tiny PNG encoder (node:zlib + CRC32) writes the files.
// The output is committed; run `node scripts/make-icons.mjs` again after changing a shape or a colour.
//
//   resources/tray/tray-<state>-dark[@2x].png   dark glyph, for light menu bars and taskbars
//   resources/tray/tray-<state>-light[@2x].png  light glyph, for dark menu bars and taskbars
//   resources/tray/tray-<state>Template[@2x].png  macOS template images: black and alpha only
//   resources/icon-256.png, icon.png (512), icon-1024.png  the app icon
//
// <state> is idle, running or attention (src-main/electron/present/desktop-types.ts TrayIconState).
import { Buffer } from 'node:buffer';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

// ---------------------------------------------------------------------------------------------
// PNG encoding: 8-bit RGBA, filter 0 ("none") on every row; deflate does the rest.

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** `rgba`: width × height × 4 bytes, straight (not premultiplied) alpha. */
export function encodePng(width, height, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type: RGBA
  ihdr[10] = 0; // compression: deflate
  ihdr[11] = 0; // filter method 0
  ihdr[12] = 0; // no interlace
  const stride = width * 4;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0;
    rgba.copy(raw, y * (stride + 1) + 1, y * stride, (y + 1) * stride);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Shapes: signed distance in design units (negative inside).

const circle = (cx, cy, r) => (x, y) => Math.hypot(x - cx, y - cy) - r;

/** A stroke from (ax, ay) to (bx, by) with round caps. */
function capsule(ax, ay, bx, by, width) {
  const dx = bx - ax;
  const dy = by - ay;
  const len2 = dx * dx + dy * dy;
  return (x, y) => {
    const t = Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / len2));
    return Math.hypot(x - (ax + t * dx), y - (ay + t * dy)) - width / 2;
  };
}

/** A rectangle with rounded corners, centred on (cx, cy). */
function roundedRect(cx, cy, halfW, halfH, radius) {
  return (x, y) => {
    const qx = Math.abs(x - cx) - halfW + radius;
    const qy = Math.abs(y - cy) - halfH + radius;
    return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - radius;
  };
}

const union =
  (...shapes) =>
  (x, y) =>
    Math.min(...shapes.map((s) => s(x, y)));

// ---------------------------------------------------------------------------------------------
// The glyph, on a 16 × 16 grid: a terminal window with a prompt chevron (every delegate is a
// headless Claude Code session). Idle is an outline; running fills the window (the prompt cut out
// of it); attention adds a badge in the upper right corner, cut out of the window so it reads even
// in a one-colour template image.

// Edges sit on whole pixels at 16 px and 32 px where they can, so the 1x icons stay crisp.
const WINDOW = { x: 8, y: 9, halfW: 7, halfH: 6, radius: 2.25, stroke: 1.5 };
const STROKE = 1.5;
const BADGE = { x: 13, y: 3.25, r: 2.75, gap: 1.25 };

function glyphParts() {
  const outer = roundedRect(WINDOW.x, WINDOW.y, WINDOW.halfW, WINDOW.halfH, WINDOW.radius);
  const prompt = union(capsule(4.6, 6.6, 7, 9, STROKE), capsule(7, 9, 4.6, 11.4, STROKE), capsule(9.25, 11.5, 11.5, 11.5, STROKE));
  return {
    outline: (x, y) => Math.abs(outer(x, y) + WINDOW.stroke / 2) - WINDOW.stroke / 2,
    filled: outer,
    prompt,
    badge: circle(BADGE.x, BADGE.y, BADGE.r),
    badgeGap: circle(BADGE.x, BADGE.y, BADGE.r + BADGE.gap),
  };
}

/** Paint operations, in order: `color` null erases what is below. */
function trayScene(state, colors) {
  const g = glyphParts();
  const ops =
    state === 'running'
      ? [
          { shape: g.filled, color: colors.running },
          { shape: g.prompt, color: null },
        ]
      : [
          { shape: g.outline, color: colors.glyph },
          { shape: g.prompt, color: colors.glyph },
        ];
  if (state === 'attention') ops.push({ shape: g.badgeGap, color: null }, { shape: g.badge, color: colors.attention });
  return ops;
}

// The app icon: the idle glyph's window, white, on a rounded indigo square (macOS grid: 824 of
// 1024), with a second window behind it: one session handing work to another.
function appScene() {
  const body = roundedRect(8, 8, 6.45, 6.45, 1.45);
  const scale = 0.56;
  const g = glyphParts();
  const place = (shape, dx, dy) => (x, y) => shape((x - 8 - dx) / scale + WINDOW.x, (y - 8 - dy) / scale + WINDOW.y) * scale;
  const top = [99, 102, 241];
  const bottom = [124, 58, 237];
  const gradient = (x, y) => {
    const t = Math.max(0, Math.min(1, (x + y - 3) / 20));
    return [0, 1, 2].map((i) => Math.round(top[i] + (bottom[i] - top[i]) * t)).concat(255);
  };
  const shadow = (x, y) => {
    const d = body(x, y - 0.18);
    const a = Math.max(0, Math.min(1, 1 - (d + 0.1) / 0.45));
    return [0, 0, 0, Math.round(70 * a * a)];
  };
  const white = [255, 255, 255, 255];
  return [
    { shape: (x, y) => body(x, y - 0.18) - 0.45, color: shadow },
    { shape: body, color: gradient },
    { shape: place(g.filled, -1.05, -1.05), color: [255, 255, 255, 110] },
    { shape: (x, y) => place(g.filled, 0.55, 0.55)(x, y) - 0.32, color: gradient },
    { shape: place(g.filled, 0.55, 0.55), color: white },
    { shape: place(g.prompt, 0.55, 0.55), color: gradient },
  ];
}

// ---------------------------------------------------------------------------------------------
// Rasterising: `samples` × `samples` points per pixel, premultiplied average.

function render(ops, size, samples, designSize = 16) {
  const out = Buffer.alloc(size * size * 4);
  const unit = designSize / size;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < samples; sy++) {
        for (let sx = 0; sx < samples; sx++) {
          const x = (px + (sx + 0.5) / samples) * unit;
          const y = (py + (sy + 0.5) / samples) * unit;
          let color = null;
          for (const op of ops) {
            if (op.shape(x, y) > 0) continue;
            if (op.color === null) color = null;
            else {
              const c = typeof op.color === 'function' ? op.color(x, y) : op.color;
              color = color && c[3] < 255 ? over(c, color) : c;
            }
          }
          if (color) {
            const alpha = color[3] / 255;
            r += color[0] * alpha;
            g += color[1] * alpha;
            b += color[2] * alpha;
            a += alpha;
          }
        }
      }
      const i = (py * size + px) * 4;
      const n = samples * samples;
      if (a > 0) {
        out[i] = Math.round(r / a);
        out[i + 1] = Math.round(g / a);
        out[i + 2] = Math.round(b / a);
        out[i + 3] = Math.round((a / n) * 255);
      }
    }
  }
  return out;
}

/** `top` over `bottom`, straight alpha. */
function over(top, bottom) {
  const ta = top[3] / 255;
  const ba = bottom[3] / 255;
  const a = ta + ba * (1 - ta);
  if (a === 0) return [0, 0, 0, 0];
  const mix = (i) => Math.round((top[i] * ta + bottom[i] * ba * (1 - ta)) / a);
  return [mix(0), mix(1), mix(2), Math.round(a * 255)];
}

// ---------------------------------------------------------------------------------------------

export const TRAY_STATES = ['idle', 'running', 'attention'];

const VARIANTS = {
  dark: { glyph: [32, 33, 36, 255], running: [79, 70, 229, 255], attention: [229, 62, 52, 255] },
  light: { glyph: [255, 255, 255, 255], running: [165, 180, 252, 255], attention: [255, 112, 98, 255] },
  Template: { glyph: [0, 0, 0, 255], running: [0, 0, 0, 255], attention: [0, 0, 0, 255] },
};

/** Every file this script writes, relative to the resources folder, with its pixel size. */
export function iconFiles() {
  const files = [];
  for (const state of TRAY_STATES) {
    for (const variant of Object.keys(VARIANTS)) {
      const base = variant === 'Template' ? `tray/tray-${state}Template` : `tray/tray-${state}-${variant}`;
      files.push({ file: `${base}.png`, size: 16, kind: 'tray', state, variant });
      files.push({ file: `${base}@2x.png`, size: 32, kind: 'tray', state, variant });
    }
  }
  files.push(
    { file: 'icon-256.png', size: 256, kind: 'app' },
    { file: 'icon.png', size: 512, kind: 'app' },
    { file: 'icon-1024.png', size: 1024, kind: 'app' },
  );
  return files;
}

export async function makeIcons(outDir) {
  await mkdir(path.join(outDir, 'tray'), { recursive: true });
  for (const entry of iconFiles()) {
    const pixels =
      entry.kind === 'tray' ? render(trayScene(entry.state, VARIANTS[entry.variant]), entry.size, 8) : render(appScene(), entry.size, entry.size > 512 ? 3 : 4);
    await writeFile(path.join(outDir, entry.file), encodePng(entry.size, entry.size, pixels));
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const outDir = process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, 'resources');
  await makeIcons(outDir);
  console.log(`Wrote ${iconFiles().length} icons to ${outDir}`);
}
