/**
 * Runs before every integration test file under scripts/with-keyring.sh: is the Secret Service still on
 * the session bus? If gnome-keyring-daemon died, the file fails with one line that says so and shows the
 * daemon's log, instead of a hundred keychain errors that each look like a bug of ours. The script's
 * watchdog restarts a dead daemon, so a death in one file does not cascade into the next.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const log = process.env.WITH_KEYRING_LOG;

function secretServiceOwned(): boolean {
  try {
    const reply = execFileSync(
      'dbus-send',
      ['--session', '--print-reply=literal', '--reply-timeout=2000', '--dest=org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus.NameHasOwner', 'string:org.freedesktop.secrets'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5_000 },
    );
    return reply.includes('true');
  } catch {
    return false;
  }
}

if (log !== undefined) {
  const deadline = Date.now() + 10_000;
  let owned = secretServiceOwned();
  while (!owned && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    owned = secretServiceOwned();
  }
  if (!owned) {
    let tail = '';
    try {
      tail = readFileSync(log, 'utf8').trim().split('\n').slice(-15).join('\n');
    } catch {
      tail = '(the log cannot be read)';
    }
    throw new Error(`The Secret Service is gone from the test session bus (gnome-keyring-daemon died and was not restarted within 10 s); this file's keychain tests cannot run. Daemon log ${log}:\n${tail}`);
  }
}
