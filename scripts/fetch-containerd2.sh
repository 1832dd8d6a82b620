#!/usr/bin/env bash
# fetch-containerd2.sh [--refresh] [DIR]
#
# Gets containerd 2.x for the tests, privately: Debian 12 ships containerd
# 1.6; Debian's unstable suite ("sid") has containerd 2.x, Go binaries that
# need only glibc >= 2.34 and so run on Debian 12. This script downloads that
# one package with apt-get through a PRIVATE sources list, list state and
# cache (nothing is added to /etc/apt, nothing is installed: the system's
# packages and its apt state are untouched) and unpacks it with `dpkg -x`
# into DIR/root. Its runtime is the system's runc.
#
# The archive is the one the machine's own apt configuration uses for its
# main Debian suite (the `URIs:` of the deb822 stanza in
# /etc/apt/sources.list.d/*.sources, or the `deb` line of /etc/apt/sources.list,
# whose suite is the system's codename), with suite sid, component main,
# signed by the system's debian-archive-keyring (scripts/lib/private-apt.sh,
# shared with fetch-lib64-glibc.sh).
#
# DIR defaults to /var/cache/oci-decorator-ci/containerd2 ($OCID_CONTAINERD2_DIR).
# Idempotent: an unpacked package that runs is reused (--refresh downloads
# again). On success the last line on stdout is the directory of the
# binaries (DIR/root/usr/bin); what it did goes to stderr. Root only (apt's
# download sandbox). Exit 1 with one line naming what failed.
set -euo pipefail

refresh=0
if [[ ${1:-} == --refresh ]]; then refresh=1; shift; fi
DIR=${1:-${OCID_CONTAINERD2_DIR:-/var/cache/oci-decorator-ci/containerd2}}
PACKAGE=containerd

say() { echo "fetch-containerd2: $*" >&2; }
fail() { echo "fetch-containerd2: error: $*" >&2; exit 1; }
# shellcheck source=lib/private-apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/private-apt.sh"

[[ $(id -u) -eq 0 ]] || fail "must run as root (apt-get's download sandbox)"
[[ -f $KEYRING ]] || fail "no $KEYRING (apt-get install debian-archive-keyring)"
command -v apt-get >/dev/null && command -v dpkg >/dev/null || fail "apt-get and dpkg are needed"

BIN=$DIR/root/usr/bin

# runs_here: the unpacked containerd and ctr start on this machine and are 2.x.
runs_here() {
  local v
  v=$("$BIN/containerd" --version 2>/dev/null) || return 1
  "$BIN/ctr" --version >/dev/null 2>&1 || return 1
  [[ $v =~ \ v?2\.[0-9]+ ]]
}

if ((!refresh)) && [[ -f $DIR/VERSION ]] && runs_here; then
  say "reusing $PACKAGE $(cat "$DIR/VERSION") in $DIR/root ($("$BIN/containerd" --version))"
  echo "$BIN"
  exit 0
fi

# --- the machine's main Debian archive, suite sid, through a private apt ----------------------
URI=$(debian_archive_uri)
private_apt_download "$DIR" "deb [signed-by=$KEYRING] $URI sid main" "$PACKAGE"
version=$DEB_VERSION
deb=$DEB

rm -rf "$DIR/root.new"
dpkg -x "$deb" "$DIR/root.new" || fail "dpkg -x $deb failed"
rm -rf "$DIR/root"
mv "$DIR/root.new" "$DIR/root"
runs_here || fail "the unpacked $BIN/containerd ($version) does not run here or is not 2.x: $("$BIN/containerd" --version 2>&1 | head -1)"
echo "$version" >"$DIR/VERSION"
say "$PACKAGE $version from $URI sid, unpacked in $DIR/root ($("$BIN/containerd" --version))"
echo "$BIN"
