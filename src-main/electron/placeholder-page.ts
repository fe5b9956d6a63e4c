/**
 * The settings window's page until the real one (Svelte, the next issue) exists: one static HTML
 * document, loaded as a data: URL so there is no file to ship or to find. Its CSP rides in a <meta>
 * tag (a data: URL has no response headers) and allows nothing at all to load or run: the page has
 * no script, no style and no image.
 */
import { SETTINGS_WINDOW_TITLE } from '../contract/present/window-options.js';

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function placeholderPageHtml(csp: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(SETTINGS_WINDOW_TITLE)}</title>
</head>
<body>
<h1>OpenRouter Delegate</h1>
<p>The settings pages are not in this version yet: they come with the next one.</p>
<p>Until then, everything can be set from a terminal:</p>
<ul>
<li><code>openrouter-mcp-config</code> — key, mode, models, budgets and limits, interactively;</li>
<li><code>openrouter-delegate status</code> and <code>openrouter-delegate doctor</code> — what runs, and what to fix;</li>
<li>the tray menu — balance, running jobs, kill all, delegation mode.</li>
</ul>
</body>
</html>
`;
}

/** A data: URL is one opaque document: nothing it could link to or load is "the same page". */
export function placeholderPageUrl(csp: string): string {
  return `data:text/html;charset=utf-8,${encodeURIComponent(placeholderPageHtml(csp))}`;
}
