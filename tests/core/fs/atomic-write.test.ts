import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeFsError, readFileIfExists, writeFileAtomic } from '../../../src-main/core/fs/atomic-write.js';

const posix = process.platform !== 'win32';
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'atomic-write-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('writes a new file and replaces an existing one', async () => {
    const file = path.join(dir, 'a.json');
    await writeFileAtomic(file, 'first');
    await writeFileAtomic(file, Buffer.from('second'));
    expect(await readFile(file, 'utf8')).toBe('second');
  });

  it('leaves no temporary file behind', async () => {
    const file = path.join(dir, 'a.json');
    await writeFileAtomic(file, 'one');
    await writeFileAtomic(file, 'two');
    expect(await readdir(dir)).toEqual(['a.json']);
  });

  it.skipIf(!posix)('creates missing directories as private (0700)', async () => {
    const file = path.join(dir, 'x', 'y', 'a.json');
    await writeFileAtomic(file, 'data');
    expect(await readFile(file, 'utf8')).toBe('data');
    expect((await stat(path.join(dir, 'x'))).mode & 0o777).toBe(0o700);
  });

  it.skipIf(!posix)('gives the file exactly the requested mode, whatever the umask', async () => {
    const file = path.join(dir, 'a.json');
    const previous = process.umask(0o077);
    try {
      await writeFileAtomic(file, 'data', { mode: 0o640 });
    } finally {
      process.umask(previous);
    }
    expect((await stat(file)).mode & 0o777).toBe(0o640);
  });

  it.skipIf(!posix)('keeps the mode of the file it replaces when no mode is given', async () => {
    const file = path.join(dir, 'a.json');
    await writeFileAtomic(file, 'one', { mode: 0o644 });
    await writeFileAtomic(file, 'two');
    expect((await stat(file)).mode & 0o777).toBe(0o644);
  });

  it('removes its temporary file and names the target when the rename fails', async () => {
    // A non-empty directory where the file should go: the temp file is written, the rename fails.
    const file = path.join(dir, 'occupied');
    await mkdir(file);
    await writeFile(path.join(file, 'inside'), 'x');
    await expect(writeFileAtomic(file, 'data')).rejects.toThrow(file);
    expect(await readdir(dir)).toEqual(['occupied']);
  });

  it('says which directory it could not create', async () => {
    await writeFile(path.join(dir, 'plain-file'), 'x');
    const file = path.join(dir, 'plain-file', 'sub', 'a.json');
    await expect(writeFileAtomic(file, 'data')).rejects.toThrow(/Could not create the directory .*plain-file/);
  });

  it('never lets a reader see a partly written file', async () => {
    const file = path.join(dir, 'big.txt');
    const versions = ['a', 'b'].map((c) => c.repeat(1 << 20));
    await writeFileAtomic(file, versions[0] ?? '');
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 20; i++) await writeFileAtomic(file, versions[i % 2] ?? '');
      writing = false;
    })();
    const seen = new Set<string>();
    while (writing) {
      const text = await readFile(file, 'utf8');
      seen.add(versions.includes(text) ? 'whole' : `partial (${text.length} chars)`);
    }
    await writer;
    expect([...seen]).toEqual(['whole']);
  });
});

describe('describeFsError', () => {
  const errno = (code: string) => Object.assign(new Error(`${code}: raw`), { code });

  it.each([
    ['ENOSPC', 'disk full'],
    ['EROFS', 'read-only file system'],
    ['EACCES', 'permission denied'],
  ])('says %s means "%s" and names the file', (code, words) => {
    expect(describeFsError(errno(code), '/cfg/settings.json')).toBe(`Could not write /cfg/settings.json: ${words} (${code})`);
  });

  it('falls back to the original message for other errors', () => {
    expect(describeFsError(errno('EIO'), '/cfg/settings.json')).toBe('Could not write /cfg/settings.json: EIO: raw');
  });
});

describe('readFileIfExists', () => {
  it('returns undefined for a missing file', async () => {
    expect(await readFileIfExists(path.join(dir, 'missing.json'))).toBeUndefined();
  });

  it('returns the text of an existing file', async () => {
    await writeFile(path.join(dir, 'a.json'), '{"x":1}');
    expect(await readFileIfExists(path.join(dir, 'a.json'))).toBe('{"x":1}');
  });

  it('throws, naming the path, when the path cannot be read', async () => {
    await expect(readFileIfExists(dir)).rejects.toThrow(`Could not read ${dir}`);
  });
});
