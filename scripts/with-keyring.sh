#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring, so the keychain code is
# tested against a real Secret Service (docs/ARCHITECTURE.md §8), in CI and on a developer's machine alike.
#
#   scripts/with-keyring.sh npx vitest run tests/core/secrets
#
# Needs the Debian packages `dbus` (dbus-run-session, dbus-send) and `gnome-keyring`.
# The keyring lives in a throw-away directory, so a developer's own login keyring is never read or
# changed, and every run starts from an empty, known state.
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 command [args...]" >&2
  exit 2
fi

for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "with-keyring: '$tool' not found. Install it: apt-get install -y dbus gnome-keyring" >&2
    exit 1
  fi
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/with-keyring.XXXXXX")
# Not `exec dbus-run-session`: the scratch directory must be removed after the command ends.
trap 'rm -rf "$scratch"' EXIT
mkdir -m 700 "$scratch/data" "$scratch/run" "$scratch/services"
log="$scratch/daemon.log"
: >"$log"

# gnome-keyring-daemon crashes now and then under the tests (seen: a client that exits while its OpenSession
# is in flight — "gkd_secret_service_get_pkcs11_session: assertion 'client' failed", then a GLib-ERROR and
# SIGTRAP, exit 133). So the daemon is not started once by hand: the session bus starts it on demand (D-Bus
# activation) from our own service file, at the first Secret Service call and again at the first call after
# a crash, holding that call until the new daemon owns the name. Nothing waits in a gap where the name has
# no owner. Only our service folder is searched, so the user's own keyring daemon can never be activated.
#
# The daemon keeps keyrings under $XDG_DATA_HOME/keyrings and its control socket under $XDG_RUNTIME_DIR; both
# point into the scratch directory for the daemon only, so the command's own paths are unchanged. --unlock
# reads the password on stdin and creates (or, after a crash, opens) the default "login" keyring. setsid: the
# tests start, signal and kill whole process groups; the daemon must never share one with them. Its output,
# and a line for every start and exit, go to the log, shown when anything goes wrong.
cat >"$scratch/start-daemon.sh" <<'DAEMON'
#!/usr/bin/env bash
scratch=$(dirname "$0")
echo "[$(date +%T)] start (D-Bus activation)" >>"$scratch/daemon.log"
code=0
XDG_DATA_HOME="$scratch/data" XDG_RUNTIME_DIR="$scratch/run" \
  setsid --wait gnome-keyring-daemon --foreground --unlock --components=secrets \
  < <(printf '%s' 'with-keyring-test-password') >>"$scratch/daemon.log" 2>&1 || code=$?
echo "[$(date +%T)] gnome-keyring-daemon exited with status $code" >>"$scratch/daemon.log"
[ "$code" -eq 0 ] || [ -e "$scratch/stopping" ] || touch "$scratch/crashed"
DAEMON
chmod 700 "$scratch/start-daemon.sh"
cat >"$scratch/services/org.freedesktop.secrets.service" <<SERVICE
[D-BUS Service]
Name=org.freedesktop.secrets
Exec=/usr/bin/env bash $scratch/start-daemon.sh
SERVICE

cat >"$scratch/session.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:tmpdir=$scratch</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$scratch/services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF

# Runs inside the new session bus: start the keyring by asking for it, prove it is usable, run the command,
# then stop the daemon.
inner=$(cat <<'INNER'
set -euo pipefail
scratch=$WITH_KEYRING_SCRATCH
unset WITH_KEYRING_SCRATCH
log="$scratch/daemon.log"

fail() {
  echo "with-keyring: $1" >&2
  if [ -s "$log" ]; then sed 's/^/  gnome-keyring-daemon: /' "$log" >&2; fi
  exit 1
}

stop_daemon() {
  touch "$scratch/stopping"
  local proc
  for proc in /proc/[0-9]*; do
    [ "$(cat "$proc/comm" 2>/dev/null)" = gnome-keyring-d ] || continue
    if tr '\0' '\n' <"$proc/environ" 2>/dev/null | grep -qxF "XDG_RUNTIME_DIR=$scratch/run"; then kill -TERM "${proc#/proc/}" 2>/dev/null || true; fi
  done
}

# Secret Service clients write to the collection behind the "default" alias; it must exist and be unlocked,
# or keychain tests would fail later with a much less obvious error (or hang on an unlock prompt). The first
# call activates the daemon.
secrets=(dbus-send --session --print-reply=literal --reply-timeout=20000 --dest=org.freedesktop.secrets)
collection=$("${secrets[@]}" /org/freedesktop/secrets org.freedesktop.Secret.Service.ReadAlias string:default 2>&1) ||
  { stop_daemon; fail "the Secret Service did not start or does not answer on the session bus: $collection"; }
collection=$(echo "$collection" | tr -d '[:space:]')
if [ -z "$collection" ] || [ "$collection" = "/" ]; then stop_daemon; fail "the keyring has no default collection"; fi
locked=$("${secrets[@]}" "$collection" org.freedesktop.DBus.Properties.Get \
  string:org.freedesktop.Secret.Collection string:Locked 2>&1) || { stop_daemon; fail "cannot read the state of $collection: $locked"; }
case "$locked" in
  *false*) ;;
  *) stop_daemon; fail "the keyring $collection is still locked after --unlock ($locked)" ;;
esac

# Tests read this to tell a dead daemon from a bug (tests/support/keyring-guard.ts).
export WITH_KEYRING_LOG="$log"
code=0
"$@" || code=$?
stop_daemon
if [ -e "$scratch/crashed" ]; then
  echo "with-keyring: gnome-keyring-daemon crashed during the run and was started again on demand; its log:" >&2
  sed 's/^/  gnome-keyring-daemon: /' "$log" >&2
fi
exit "$code"
INNER
)

status=0
WITH_KEYRING_SCRATCH="$scratch" dbus-run-session --config-file="$scratch/session.conf" -- bash -c "$inner" with-keyring "$@" || status=$?
exit "$status"
