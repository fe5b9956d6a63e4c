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

# Runs inside the new session bus: start and unlock the keyring, prove it is usable, then become the command.
inner=$(cat <<'INNER'
set -euo pipefail
scratch=$WITH_KEYRING_SCRATCH
unset WITH_KEYRING_SCRATCH
mkdir -m 700 "$scratch/data" "$scratch/run"

fail() {
  echo "with-keyring: $1" >&2
  if [ -s "$scratch/daemon.log" ]; then sed 's/^/  gnome-keyring-daemon: /' "$scratch/daemon.log" >&2; fi
  exit 1
}

# The daemon keeps keyrings under $XDG_DATA_HOME/keyrings and its control socket under $XDG_RUNTIME_DIR;
# both point into the scratch directory for the daemon only, so the command's own paths are unchanged.
# --unlock reads the password on stdin and creates the "login" keyring with it (it is the default one).
# (Fed by process substitution, not a pipe: with pipefail, a daemon that ignores stdin would fail the pipe.)
if ! printed=$(XDG_DATA_HOME="$scratch/data" XDG_RUNTIME_DIR="$scratch/run" \
  gnome-keyring-daemon --unlock --components=secrets 2>"$scratch/daemon.log" < <(printf '%s' 'with-keyring-test-password')); then
  fail "gnome-keyring-daemon --unlock failed"
fi
# It prints NAME=value lines (e.g. GNOME_KEYRING_CONTROL) that clients use to find it.
while IFS= read -r line; do
  if [[ "$line" =~ ^[A-Z_][A-Z0-9_]*= ]]; then export "${line?}"; fi
done <<<"$printed"

# The daemon forks and prints before its child has claimed the Secret Service name on the bus: wait for it.
claimed=false
for _ in $(seq 100); do
  if dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q true; then
    claimed=true
    break
  fi
  sleep 0.1
done
[ "$claimed" = true ] || fail "gnome-keyring-daemon did not register the Secret Service on the session bus within 10 s"

# Secret Service clients write to the collection behind the "default" alias; it must exist and be unlocked,
# or keychain tests would fail later with a much less obvious error (or hang on an unlock prompt).
secrets=(dbus-send --session --print-reply=literal --reply-timeout=5000 --dest=org.freedesktop.secrets)
collection=$("${secrets[@]}" /org/freedesktop/secrets org.freedesktop.Secret.Service.ReadAlias string:default 2>&1) ||
  fail "the Secret Service does not answer on the session bus: $collection"
collection=$(echo "$collection" | tr -d '[:space:]')
if [ -z "$collection" ] || [ "$collection" = "/" ]; then fail "the keyring has no default collection"; fi
locked=$("${secrets[@]}" "$collection" org.freedesktop.DBus.Properties.Get \
  string:org.freedesktop.Secret.Collection string:Locked 2>&1) || fail "cannot read the state of $collection: $locked"
case "$locked" in
  *false*) ;;
  *) fail "the keyring $collection is still locked after --unlock ($locked)" ;;
esac

exec "$@"
INNER
)

status=0
WITH_KEYRING_SCRATCH="$scratch" dbus-run-session --config-file="$scratch/session.conf" -- bash -c "$inner" with-keyring "$@" || status=$?
exit "$status"
