import { Buffer } from 'node:buffer';
import { describe, expect, it, vi } from 'vitest';
import { MAX_FRAME_BYTES, ServiceError } from '../../src-main/contract/protocol.js';
import { encodeFrame, FrameDecoder } from '../../src-main/ipc/framing.js';
import type { DecodedFrame } from '../../src-main/ipc/framing.js';

function values(frames: DecodedFrame[]): unknown[] {
  return frames.map((f) => (f.ok ? f.value : { error: f.code }));
}

function feedBytewise(decoder: FrameDecoder, bytes: Buffer): DecodedFrame[] {
  const out: DecodedFrame[] = [];
  for (let i = 0; i < bytes.length; i += 1) out.push(...decoder.push(bytes.subarray(i, i + 1)));
  return out;
}

describe('encodeFrame', () => {
  it('is one line of JSON ending in a newline', () => {
    const text = encodeFrame({ type: 'event', event: 'x', data: 'line1\nline2' });
    expect(text.endsWith('\n')).toBe(true);
    expect(text.slice(0, -1)).not.toContain('\n');
    expect(JSON.parse(text)).toEqual({ type: 'event', event: 'x', data: 'line1\nline2' });
  });

  it('refuses a frame over the cap, counting bytes rather than characters', () => {
    // 400 three-byte characters: 400 UTF-16 units but 1,200 bytes (+2 quotes).
    const text = '€'.repeat(400);
    expect(() => encodeFrame(text, 1_000)).toThrow(ServiceError);
    try {
      encodeFrame(text, 1_000);
    } catch (error) {
      expect((error as ServiceError).code).toBe('frame_too_large');
    }
    expect(encodeFrame(text, 1_202)).toBe(`"${text}"\n`);
  });

  it('refuses by default anything over MAX_FRAME_BYTES', () => {
    expect(() => encodeFrame('a'.repeat(MAX_FRAME_BYTES))).toThrow(/limit is 1 MiB/);
    expect(() => encodeFrame('a'.repeat(MAX_FRAME_BYTES - 2))).not.toThrow();
  });

  it('refuses values with no JSON form', () => {
    expect(() => encodeFrame(undefined)).toThrow(ServiceError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => encodeFrame(cycle)).toThrow(ServiceError);
  });
});

describe('FrameDecoder', () => {
  it('decodes several frames delivered in one chunk', () => {
    const decoder = new FrameDecoder();
    const frames = decoder.push(Buffer.from('{"a":1}\n{"b":2}\n[3]\n'));
    expect(values(frames)).toEqual([{ a: 1 }, { b: 2 }, [3]]);
  });

  it('decodes a frame delivered one byte at a time, including multi-byte characters split across chunks', () => {
    const decoder = new FrameDecoder();
    const text = '{"text":"héllo wörld € 🎉"}\n';
    const frames = feedBytewise(decoder, Buffer.from(text, 'utf8'));
    expect(values(frames)).toEqual([{ text: 'héllo wörld € 🎉' }]);
    expect(decoder.pendingBytes).toBe(0);
  });

  it('keeps an incomplete frame until its newline arrives', () => {
    const decoder = new FrameDecoder();
    expect(decoder.push(Buffer.from('{"a":'))).toEqual([]);
    expect(decoder.pendingBytes).toBe(5);
    expect(values(decoder.push(Buffer.from('1}\n{"b"')))).toEqual([{ a: 1 }]);
    expect(values(decoder.push(Buffer.from(':2}\n')))).toEqual([{ b: 2 }]);
  });

  it('ignores empty lines and accepts CRLF line ends', () => {
    const decoder = new FrameDecoder();
    expect(values(decoder.push(Buffer.from('\n\n{"a":1}\r\n\r\n  \n{"b":2}\n')))).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('reports malformed JSON as bad_frame and goes on with the next frame', () => {
    const decoder = new FrameDecoder();
    const frames = decoder.push(Buffer.from('{"token":"secret-value",\n{"ok":true}\n'));
    expect(values(frames)).toEqual([{ error: 'bad_frame' }, { ok: true }]);
    // The error never quotes the input (it may hold a secret).
    expect(JSON.stringify(frames[0])).not.toContain('secret-value');
  });

  it('reports invalid UTF-8 as bad_frame', () => {
    const decoder = new FrameDecoder();
    const frames = decoder.push(Buffer.concat([Buffer.from('"'), Buffer.from([0xff, 0xfe]), Buffer.from('"\n{"n":1}\n')]));
    expect(values(frames)).toEqual([{ error: 'bad_frame' }, { n: 1 }]);
  });

  it('accepts a line of exactly the cap and refuses one byte more', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 10 });
    const exact = `"${'x'.repeat(8)}"`; // 10 bytes
    expect(values(decoder.push(Buffer.from(`${exact}\n`)))).toEqual(['x'.repeat(8)]);
    const over = `"${'x'.repeat(9)}"`; // 11 bytes
    expect(values(decoder.push(Buffer.from(`${over}\n`)))).toEqual([{ error: 'frame_too_large' }]);
  });

  it('reports an over-long line arriving in one chunk once, then decodes what follows', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 16 });
    const frames = decoder.push(Buffer.from(`${'y'.repeat(100)}\n{"after":1}\n`));
    expect(values(frames)).toEqual([{ error: 'frame_too_large' }, { after: 1 }]);
  });

  it('reports an over-long line spread over many chunks once, discards it up to its newline, then decodes what follows', () => {
    const decoder = new FrameDecoder({ maxFrameBytes: 16 });
    const frames: DecodedFrame[] = [];
    frames.push(...decoder.push(Buffer.from('{"a":"')));
    for (let i = 0; i < 50; i += 1) frames.push(...decoder.push(Buffer.from('zzzzzzzz')));
    // Held memory stays bounded while discarding.
    expect(decoder.pendingBytes).toBe(0);
    frames.push(...decoder.push(Buffer.from('"}\n{"after":2}\n')));
    expect(values(frames)).toEqual([{ error: 'frame_too_large' }, { after: 2 }]);
  });

  it('joins the pieces of a frame once, however many chunks it came in', () => {
    const concat = vi.spyOn(Buffer, 'concat');
    const decoder = new FrameDecoder();
    const payload = Buffer.from(`${JSON.stringify({ data: 'q'.repeat(200_000) })}\n`);
    const frames: DecodedFrame[] = [];
    for (let i = 0; i < payload.length; i += 20) frames.push(...decoder.push(payload.subarray(i, i + 20)));
    expect(frames).toHaveLength(1);
    expect(frames[0]).toEqual({ ok: true, value: { data: 'q'.repeat(200_000) } });
    expect(concat).toHaveBeenCalledTimes(1);
  });

  it('round-trips what encodeFrame produces', () => {
    const decoder = new FrameDecoder();
    const sent = [
      { type: 'request', id: 1, method: 'm', params: { s: 'a\nb\u2028c' } },
      { type: 'event', event: 'e', data: null },
    ];
    const frames = decoder.push(Buffer.from(sent.map((v) => encodeFrame(v)).join(''), 'utf8'));
    expect(values(frames)).toEqual(sent);
  });
});
