import { describe, expect, it } from 'vitest';
import { oldestProcess } from '../../../../src-main/core/jobs/supervisor/recovery.js';

describe("oldestProcess: which of a job's marked processes is the delegate's root", () => {
  it('is the one whose parent carries no marker, even when a child started in the same clock tick is listed first', () => {
    const marked = [
      { pid: 32152, startTime: 'boot:1703938', ppid: 32150 },
      { pid: 32150, startTime: 'boot:1703938', ppid: 1 },
      { pid: 32160, startTime: 'boot:1703990', ppid: 32152 },
    ];
    expect(oldestProcess(marked)).toEqual({ pid: 32150, startTime: 'boot:1703938', ppid: 1 });
  });

  it('is the oldest when parents are not known (not Linux), and none without a start time', () => {
    expect(
      oldestProcess([
        { pid: 9, startTime: 'b:20' },
        { pid: 7, startTime: 'b:10' },
      ])?.pid,
    ).toBe(7);
    expect(oldestProcess([{ pid: 9, startTime: null }])).toBeNull();
  });
});
