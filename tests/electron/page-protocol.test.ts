/**
 * The settings window's page protocol (app://settings/…): the built renderer's files, each with the CSP,
 * and nothing outside that folder, whatever the URL says. Real files, real Response objects.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../src-main/common/page-security.js';
import { PAGE_URL, createPageHandler, pageFile } from '../../src-main/electron/page-protocol.js';

let dir: string;
let root: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ord-page-protocol-'));
  root = path.join(dir, 'renderer');
  await mkdir(path.join(root, 'assets'), { recursive: true });
  await writeFile(path.join(root, 'index.html'), '<!doctype html><title>settings</title>');
  await writeFile(path.join(root, 'assets', 'index-1.js'), 'export {}');
  await writeFile(path.join(dir, 'secret.txt'), 'outside');
  await writeFile(path.join(root, 'notes.txt'), 'not a page file type');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the page protocol', () => {
  it('serves the page and its assets with the CSP and their types', async () => {
    const handle = createPageHandler(root);
    const page = await handle({ url: PAGE_URL });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>settings</title>');
    expect(page.headers.get('content-security-policy')).toBe(contentSecurityPolicy());
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const script = await handle({ url: 'app://settings/assets/index-1.js' });
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await handle({ url: 'app://settings/' })).status).toBe(200);
  });

  it('serves nothing outside the page folder, nor other hosts, schemes or file types', async () => {
    const handle = createPageHandler(root);
    for (const url of [
      'app://settings/../secret.txt',
      'app://settings/%2e%2e/secret.txt',
      'app://settings/assets/..%2f..%2fsecret.txt',
      'app://settings/..%5csecret.txt',
      'app://other/index.html',
      'file:///etc/passwd',
      'app://settings/notes.txt',
      'app://settings/missing.js',
      'app://settings/%E0%A4%A',
    ]) {
      const answer = await handle({ url });
      expect(answer.status, url).toBe(404);
      expect(await answer.text()).not.toContain('outside');
    }
  });

  it('maps URLs to files under the folder only', () => {
    expect(pageFile(root, PAGE_URL)).toBe(path.join(root, 'index.html'));
    expect(pageFile(root, 'app://settings/assets/index-1.js')).toBe(path.join(root, 'assets', 'index-1.js'));
    expect(pageFile(root, 'not a url')).toBeNull();
  });
});
