/**
 * `openrouter-delegate ui [--print]`: the running service's settings page (a service started for it when none runs),
 * opened in the browser, or its URL printed when asked to or when there is no display. The URL goes to stdout only:
 * it holds the page's token.
 */
import type { Locations } from '../../platform/locations.js';
import { settingsPageOpenFile } from '../../host/settings-page.js';
import { connectOrStart, err, out } from '../support/command-support.js';
import { openInBrowser } from '../support/open-browser.js';

/** `cliFile` is this CLI's own file, run again to start a service when none runs. */
export async function uiCommand(locations: Locations, cliFile: string, print: boolean): Promise<number> {
  const client = await connectOrStart(locations, cliFile);
  let url: string;
  try {
    ({ url } = await client.call('settingsPage.open', {}));
  } finally {
    client.close();
  }
  out(`Settings page: ${url}`);
  if (print) return 0;
  const opened = await openInBrowser({ url, file: settingsPageOpenFile(locations), platform: process.platform, env: process.env });
  if (opened.opened) err('Opened in your browser. The URL holds a private token: treat it like a password.');
  else err(`Not opening a browser: ${opened.why}. Open the URL above in a browser on this machine (an SSH tunnel to its port works too).`);
  return 0;
}
