/**
 * How the settings window gets its page: from `app://settings/…`, a privileged scheme of our own that
 * serves the built renderer (dist/renderer) and nothing else. Not `file://`: the packaged app turns
 * the GrantFileProtocolExtraPrivileges fuse off (docs/PACKAGING.md), and a file: page cannot load
 * its own ES modules then; a scheme of our own also gives the page a real origin and lets every
 * response carry the CSP as a header. The handler is a plain function of a URL, tested without Electron.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PAGE_FILE_TYPES, contentSecurityPolicy } from '../common/page-security.js';

export const PAGE_SCHEME = 'app';
const PAGE_HOST = 'settings';
/** The settings page's URL in the window. */
export const PAGE_URL = `${PAGE_SCHEME}://${PAGE_HOST}/index.html`;

/** For protocol.registerSchemesAsPrivileged, before the app is ready: a standard, secure origin. */
export const PAGE_SCHEME_PRIVILEGES = { standard: true, secure: true, supportFetchAPI: false, corsEnabled: false, stream: false } as const;

function notFound(): Response {
  return new Response('Not found.', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}

/** The file under `root` that `url` names, or null when it names nothing there (other host, "..", odd characters). */
export function pageFile(root: string, url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== `${PAGE_SCHEME}:` || parsed.host !== PAGE_HOST) return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(parsed.pathname);
  } catch {
    return null;
  }
  if (pathname === '/') pathname = '/index.html';
  // The URL parser has already folded "/a/../b"; anything still odd is refused rather than interpreted.
  if (/[\\\0]/.test(pathname) || pathname.split('/').some((segment) => segment === '..' || segment === '.')) return null;
  const base = path.resolve(root);
  const file = path.resolve(base, `.${pathname}`);
  return file.startsWith(`${base}${path.sep}`) && PAGE_FILE_TYPES[path.extname(file)] ? file : null;
}

/** protocol.handle's handler for PAGE_SCHEME: the page's files, with the CSP on every response. */
export function createPageHandler(root: string): (request: { url: string }) => Promise<Response> {
  const csp = contentSecurityPolicy();
  return async (request) => {
    const file = pageFile(root, request.url);
    if (!file) return notFound();
    let body: Buffer;
    try {
      body = await readFile(file);
    } catch {
      return notFound();
    }
    return new Response(new Uint8Array(body), {
      status: 200,
      headers: {
        'content-type': PAGE_FILE_TYPES[path.extname(file)] ?? 'application/octet-stream',
        'content-security-policy': csp,
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      },
    });
  };
}
