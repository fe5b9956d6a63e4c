/**
 * Runs before every integration test file under scripts/with-keyring.sh: does the Secret Service answer?
 * The session bus starts gnome-keyring-daemon again on demand after a crash, so this normally just works;
 * if it cannot, the file fails with one line that says so and shows the daemon's log, instead of a hundred
 * keychain errors that each look like a bug of ours.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const log = process.env.WITH_KEYRING_LOG;

/** Asks the Secret Service itself: the session bus starts the daemon again if it crashed (D-Bus activation). */
function secretServiceAnswers(): boolean {
  try {
    execFileSync(
      'dbus-send',
      [
        '--session',
        '--print-reply=literal',
        '--reply-timeout=10000',
        '--dest=org.freedesktop.secrets',
        '/org/freedesktop/secrets',
        'org.freedesktop.Secret.Service.ReadAlias',
        'string:default',
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15_000 },
    );
    return true;
  } catch {
    return false;
  }
}

if (log !== undefined) {
  const deadline = Date.now() + 10_000;
  let owned = secretServiceAnswers();
  while (!owned && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    owned = secretServiceAnswers();
  }
  if (!owned) {
    let tail = '';
    try {
      tail = readFileSync(log, 'utf8').trim().split('\n').slice(-15).join('\n');
    } catch {
      tail = '(the log cannot be read)';
    }
    throw new Error(
      `The Secret Service is gone from the test session bus (gnome-keyring-daemon could not be started again); this file's keychain tests cannot run. Daemon log ${log}:\n${tail}`,
    );
  }
}
