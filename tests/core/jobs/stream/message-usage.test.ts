import { describe, expect, it } from 'vitest';
import { MessageUsage } from '../../../../src-main/core/jobs/stream/message-usage.js';
import { usage } from '../../../support/usage.js';

describe('the usage of a stream’s latest messages', () => {
  it('merges the repeats of a message into its largest reading of each field, and counts it once in the total', () => {
    const messages = new MessageUsage(4);
    messages.add('msg_a', usage(100, 1, 500, 0));
    messages.add('msg_b', usage(10, 2));
    messages.add('msg_a', usage(100, 336, 0, 40));
    expect(messages.byMessage()).toEqual(
      new Map([
        ['msg_b', usage(10, 2)],
        ['msg_a', usage(100, 336, 500, 40)],
      ]),
    );
    expect(messages.total).toEqual(usage(110, 338, 500, 40));
  });

  it('counts each message without an id on its own, never merged with another, whatever that one is called', () => {
    const messages = new MessageUsage(4);
    messages.add(null, usage(5, 1));
    messages.add('(unnamed 1)', usage(7, 1));
    messages.add(null, usage(5, 1));
    expect(messages.byMessage()).toEqual(new Map([['(unnamed 1)', usage(7, 1)]]));
    expect(messages.total).toEqual(usage(17, 3));
  });

  it('remembers the latest messages only, a repeated one among them however long ago it began, and counts a repeat it forgot again', () => {
    const messages = new MessageUsage(3);
    messages.add('msg_long', usage(1, 1));
    for (let i = 0; i < 5; i++) {
      messages.add(`msg_${i}`, usage(1, 1));
      // Seen again (a later snapshot) while the others pass: it stays among the remembered.
      messages.add('msg_long', usage(1, 2 + i));
    }
    expect([...messages.byMessage().keys()]).toEqual(['msg_3', 'msg_4', 'msg_long']);
    expect(messages.byMessage().get('msg_long')).toEqual(usage(1, 6));
    expect(messages.total).toEqual(usage(6, 11));
    // msg_0 is forgotten: its repeat counts again, the safe side for a budget.
    messages.add('msg_0', usage(1, 1));
    expect(messages.total).toEqual(usage(7, 12));
  });
});
