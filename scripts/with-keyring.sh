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

# A session bus that can start no services on demand: were our daemon not up yet, a call would otherwise
# D-Bus-activate a second gnome-keyring-daemon that uses the user's real keyrings instead of the scratch one.
cat >"$scratch/session.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:tmpdir=$scratch</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
CONF

# Runs inside the new session bus: start and unlock the keyring under a watchdog, prove it is usable, run
# the command, then stop the daemon.
inner=$(cat <<'INNER'
set -euo pipefail
scratch=$WITH_KEYRING_SCRATCH
unset WITH_KEYRING_SCRATCH
mkdir -m 700 "$scratch/data" "$scratch/run"
log="$scratch/daemon.log"
: >"$log"

fail() {
  echo "with-keyring: $1" >&2
  if [ -s "$log" ]; then sed 's/^/  gnome-keyring-daemon: /' "$log" >&2; fi
  exit 1
}

# One daemon at a time, in the foreground of a watchdog that restarts it if it dies, and in a session of
# its own (setsid): the tests start, signal and kill whole process groups, and a daemon that shared the
# command's process group and session could be hit by a signal meant for them. Its stderr is kept, with
# a line for every start and exit, and shown when anything goes wrong.
# The daemon keeps keyrings under $XDG_DATA_HOME/keyrings and its control socket under $XDG_RUNTIME_DIR;
# both point into the scratch directory for the daemon only, so the command's own paths are unchanged.
# --unlock reads the password on stdin and creates (or, after a restart, opens) the default "login" keyring.
watchdog() {
  local starts=0 code
  while [ ! -e "$scratch/stopping" ]; do
    starts=$((starts + 1))
    echo "[$(date +%T)] start $starts" >>"$log"
    code=0
    # In the background, so its pid is known (setsid execs in place: a background job leads no group).
    XDG_DATA_HOME="$scratch/data" XDG_RUNTIME_DIR="$scratch/run" \
      setsid gnome-keyring-daemon --foreground --unlock --components=secrets \
      < <(printf '%s' 'with-keyring-test-password') >>"$log" 2>&1 &
    echo "$!" >"$scratch/daemon.pid"
    wait "$!" || code=$?
    [ -e "$scratch/stopping" ] && break
    echo "[$(date +%T)] gnome-keyring-daemon exited with status $code" >>"$log"
    echo "with-keyring: gnome-keyring-daemon exited with status $code; restarting it (log below at the end)" >&2
    touch "$scratch/restarted"
    if [ "$starts" -ge 10 ]; then echo "with-keyring: gnome-keyring-daemon died $starts times; giving up" >&2; break; fi
    sleep 0.2
  done
}
watchdog &
watchdog_pid=$!

stop_daemon() {
  touch "$scratch/stopping"
  kill -TERM "$(cat "$scratch/daemon.pid" 2>/dev/null)" 2>/dev/null || true
  wait "$watchdog_pid" 2>/dev/null || true
}

# The daemon claims the Secret Service name on the bus a moment after it starts: wait for it.
claimed=false
for _ in $(seq 100); do
  if dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q true; then
    claimed=true
    break
  fi
  sleep 0.1
done
[ "$claimed" = true ] || { stop_daemon; fail "gnome-keyring-daemon did not register the Secret Service on the session bus within 10 s"; }

# Secret Service clients write to the collection behind the "default" alias; it must exist and be unlocked,
# or keychain tests would fail later with a much less obvious error (or hang on an unlock prompt).
secrets=(dbus-send --session --print-reply=literal --reply-timeout=5000 --dest=org.freedesktop.secrets)
collection=$("${secrets[@]}" /org/freedesktop/secrets org.freedesktop.Secret.Service.ReadAlias string:default 2>&1) ||
  { stop_daemon; fail "the Secret Service does not answer on the session bus: $collection"; }
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
if [ -e "$scratch/restarted" ]; then
  echo "with-keyring: gnome-keyring-daemon died during the run and was restarted; its log:" >&2
  sed 's/^/  gnome-keyring-daemon: /' "$log" >&2
fi
exit "$code"
INNER
)

status=0
WITH_KEYRING_SCRATCH="$scratch" dbus-run-session --config-file="$scratch/session.conf" -- bash -c "$inner" with-keyring "$@" || status=$?
exit "$status"
