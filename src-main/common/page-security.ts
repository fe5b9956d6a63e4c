/**
 * The settings page's security rules both of its hosts apply (the window's app:// protocol in
 * src-main/electron and the loopback HTTP host in src-main/ipc), as plain data: the Content-Security-Policy
 * and the file types served. Pure, so either host imports it and tests read it without Electron.
 */

/**
 * The renderer's Content-Security-Policy: its own bundled scripts, styles, images and fonts only;
 * no inline script, no eval, no remote anything, no frames, no forms. It talks to the service
 * through the preload, never over the network.
 */
export function contentSecurityPolicy(options: { meta?: boolean } = {}): string {
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ];
  // A <meta> policy cannot hold frame-ancestors (browsers ignore it there, with a console error); the
  // headers carry it, and the page's <meta> (for file: pages, which have no headers) carries the rest.
  return (options.meta ? policy.filter((directive) => !directive.startsWith('frame-ancestors')) : policy).join('; ');
}

/**
 * The settings page's files, by extension, with the content type both hosts serve them with (the
 * window's app:// protocol and the loopback host); a file of any other kind is never served.
 */
export const PAGE_FILE_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};
