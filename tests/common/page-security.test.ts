import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../src-main/common/page-security.js';

describe('contentSecurityPolicy', () => {
  const directives = (): Map<string, string> =>
    new Map(
      contentSecurityPolicy()
        .split('; ')
        .map((d) => [d.split(' ')[0] ?? '', d.split(' ').slice(1).join(' ')]),
    );

  it('allows the bundled files only, and nothing by default', () => {
    expect(Object.fromEntries(directives())).toEqual({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'img-src': "'self' data:",
      'font-src': "'self'",
      'connect-src': "'self'",
      'base-uri': "'none'",
      'form-action': "'none'",
      'frame-ancestors': "'none'",
    });
  });

  it('allows no inline script and no eval', () => {
    expect(contentSecurityPolicy()).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
  });
});
