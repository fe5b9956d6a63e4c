/**
 * Opening the settings page in the user's browser (`openrouter-delegate ui`). The page's URL holds its token, and
 * a command line is readable by every user of the machine (`ps`, /proc/<pid>/cmdline), so the token never rides on
 * one: the URL goes into a redirect file, 0600 in the private runtime folder, and the opener is given that file's
 * path (as Jupyter does). The service removes the file when it stops serving the page.
 */
import { spawn } from 'node:child_process';
import { writePrivateFile } from '../../ipc/runtime-dir.js';

export interface Opener {
  command: string;
  args: string[];
}

/**
 * The platform's opener for a file, or why there is none: no display (an SSH session, a server), where a browser
 * window would open nowhere the user sees it.
 */
export function browserOpener(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, file: string): Opener | { none: string } {
  const remote = Boolean(env.SSH_CONNECTION ?? env.SSH_TTY);
  switch (platform) {
    case 'darwin':
      return remote ? { none: 'this is an SSH session' } : { command: 'open', args: [file] };
    case 'win32':
      return { command: 'explorer.exe', args: [file] };
    default:
      if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return { none: 'there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set)' };
      return { command: 'xdg-open', args: [file] };
  }
}

/** A page that sends the browser on to `url` at once; the URL is HTML-escaped (it is ours, but still). */
export function redirectPage(url: string): string {
  const safe = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return [
    '<!doctype html>',
    '<meta charset="utf-8">',
    '<meta name="referrer" content="no-referrer">',
    `<meta http-equiv="refresh" content="0;url=${safe}">`,
    '<title>OpenRouter Delegate settings</title>',
    `<p><a href="${safe}">Open the OpenRouter Delegate settings</a></p>`,
    '',
  ].join('\n');
}

/** Writes the redirect file and hands its path to the opener; resolves once the opener started, or with why it did not. */
export async function openInBrowser(input: {
  url: string;
  file: string;
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
}): Promise<{ opened: true } | { opened: false; why: string }> {
  const opener = browserOpener(input.platform, input.env, input.file);
  if ('none' in opener) return { opened: false, why: opener.none };
  await writePrivateFile(input.file, redirectPage(input.url));
  const child = spawn(opener.command, opener.args, { detached: true, stdio: 'ignore', env: input.env, windowsHide: true });
  return new Promise((resolve) => {
    child.once('spawn', () => {
      child.unref();
      resolve({ opened: true });
    });
    child.once('error', (error) => resolve({ opened: false, why: `${opener.command} could not be started (${error.message})` }));
  });
}
