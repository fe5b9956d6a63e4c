/**
 * Which page shows, from the URL fragment: "#account", "#jobs", "#jobs/<id>" … — what the tray's
 * notifications open (src-main/electron/settings-window.ts settingsUrl) and what the back button walks.
 */
export const PAGES = [
  { id: 'account', title: 'Account' },
  { id: 'delegation', title: 'Delegation' },
  { id: 'jobs', title: 'Jobs' },
  { id: 'spend', title: 'Spend' },
  { id: 'claude', title: 'Claude Code' },
  { id: 'about', title: 'About' },
] as const;
export type PageId = (typeof PAGES)[number]['id'];

export interface Route {
  page: PageId;
  /** A job to show in detail (Jobs page only). */
  jobId: string | null;
}

export function parseRoute(hash: string): Route {
  // The loopback host's URL starts with the token ("#token=…&jobs"); the host takes it out, but may not have yet.
  const [head, ...rest] = hash
    .replace(/^#/, '')
    .replace(/^token=[0-9a-f]{64}&?/, '')
    .split('/');
  const page = PAGES.find((p) => p.id === head)?.id ?? 'account';
  const jobId = page === 'jobs' && rest.length > 0 ? decodeURIComponent(rest.join('/')) || null : null;
  return { page, jobId };
}

export function routeHash(route: Route): string {
  return route.jobId ? `#jobs/${encodeURIComponent(route.jobId)}` : `#${route.page}`;
}

class Router {
  current = $state<Route>(parseRoute(window.location.hash));

  constructor() {
    window.addEventListener('hashchange', () => {
      this.current = parseRoute(window.location.hash);
    });
  }

  go(route: Route): void {
    const hash = routeHash(route);
    if (window.location.hash !== hash) window.location.hash = hash;
    this.current = route;
  }
}

export const router = new Router();
