import { describe, expect, it } from 'vitest';
import { UsageMeter } from '../../../../src-main/core/gateway/measure/usage-meter.js';

const encoder = new TextEncoder();
const stream = [
  'event: message_start\r\n',
  'data: {"type":"message_start","message":{"id":"gen-1","model":"m","provider":"DeepInfra","usage":{"input_tokens":120,"output_tokens":1,"cache_read_input_tokens":30}}}\r\n\r\n',
  ': keep-alive comment\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"type":"text_delta","text":"héllo"}}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":42}}\n\n',
].join('');

describe('the usage meter', () => {
  it('reads usage, id, model and provider from a stream cut anywhere, multi-byte characters included', () => {
    const bytes = encoder.encode(stream);
    for (const size of [1, 2, 7, 64, bytes.length]) {
      const meter = new UsageMeter(true);
      for (let at = 0; at < bytes.length; at += size) meter.push(bytes.subarray(at, at + size));
      expect(meter.end()).toEqual({
        usage: { inputTokens: 120, outputTokens: 42, cacheReadTokens: 30, cacheWriteTokens: 0 },
        generationId: 'gen-1',
        model: 'm',
        provider: 'DeepInfra',
        error: null,
      });
    }
  });

  it('says when the usage moves, and reads a last event without its blank line', () => {
    const seen: number[] = [];
    const meter = new UsageMeter(true, (answer) => seen.push(answer.usage.outputTokens));
    meter.push(encoder.encode(stream.replace(/\n\n$/, '')));
    meter.end();
    expect(seen).toEqual([1, 42]);
  });

  it('notes an error event, and ignores what is not JSON', () => {
    const meter = new UsageMeter(true);
    meter.push(encoder.encode('data: {not json\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'));
    expect(meter.end()).toMatchObject({ error: 'Overloaded', usage: { inputTokens: 0 } });
  });

  it('reads a non-streaming answer from its body', () => {
    const meter = new UsageMeter(false);
    meter.push(encoder.encode('{"id":"gen-2","type":"message","model":"m","usage":{"input_tokens":5,'));
    meter.push(encoder.encode('"output_tokens":6,"cache_creation_input_tokens":7}}'));
    expect(meter.end()).toMatchObject({ generationId: 'gen-2', usage: { inputTokens: 5, outputTokens: 6, cacheWriteTokens: 7 } });
  });
});

describe('what the meter reads', () => {
  it('reads no text delta (they carry no usage), and every event that is not named', () => {
    const meter = new UsageMeter(true);
    meter.push(encoder.encode('event: content_block_delta\ndata: {"usage":{"input_tokens":999}}\n\n'));
    meter.push(encoder.encode('data: {"type":"message_delta","usage":{"output_tokens":5}}\n\n'));
    expect(meter.end().usage).toEqual({ inputTokens: 0, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 });
  });
});
