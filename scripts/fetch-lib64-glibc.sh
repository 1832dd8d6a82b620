#!/usr/bin/env bash
# fetch-lib64-glibc.sh [--refresh] [DIR]
#
# Gets a glibc whose dynamic loader searches lib64 directories, not the
# Debian multiarch ones, for integration.loader_layouts' "lib64 image" (the
# stand-in for a RHEL/UBI image; no registry here). It is Debian's own
# x86-64 glibc for i386 systems, package `libc6-amd64` of architecture i386,
# from the same glibc source as the host's libc6: its files live in /lib64
# (ld-linux-x86-64.so.2, libc.so.6) and its loader's system search path is
# "/lib64:/usr/lib64:/lib:/usr/lib" (`ld-linux-x86-64.so.2 --help` prints
# it; Debian's biarch build adds /lib and /usr/lib to the /lib64:/usr/lib64
# that RHEL's x86_64 glibc has). No /lib/x86_64-linux-gnu nor
# /usr/lib/x86_64-linux-gnu is searched: a library found by that loader
# outside ld.so.cache, in a lib64 directory, is found where a RHEL loader
# finds it.
#
# It downloads that one package with a PRIVATE apt, exactly as
# fetch-containerd2.sh does (scripts/lib/private-apt.sh: own sources list
# for the machine's own Debian archive and suite, own lists and cache,
# apt-get update of its own, APT::Architecture=i386 so that the i386 index
# is read; nothing added to /etc/apt, nothing installed), and unpacks it with
# `dpkg-deb -x` into DIR/root.
#
# DIR defaults to /var/cache/oci-decorator-ci/lib64-glibc ($OCID_LIB64_GLIBC_DIR).
# Idempotent: an unpacked package whose loader runs and searches lib64 is
# reused (--refresh downloads again). On success the last line on stdout is
# DIR/root; what it did goes to stderr. Root only (apt's download sandbox).
# Exit 1 with one line naming what failed.
set -euo pipefail

refresh=0
if [[ ${1:-} == --refresh ]]; then refresh=1; shift; fi
DIR=${1:-${OCID_LIB64_GLIBC_DIR:-/var/cache/oci-decorator-ci/lib64-glibc}}
PACKAGE=libc6-amd64
ARCH=i386

say() { echo "fetch-lib64-glibc: $*" >&2; }
fail() { echo "fetch-lib64-glibc: error: $*" >&2; exit 1; }
# shellcheck source=lib/private-apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/private-apt.sh"

[[ $(id -u) -eq 0 ]] || fail "must run as root (apt-get's download sandbox)"
[[ -f $KEYRING ]] || fail "no $KEYRING (apt-get install debian-archive-keyring)"
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || fail "apt-get and dpkg-deb are needed"

ROOT=$DIR/root
LOADER=$ROOT/lib64/ld-linux-x86-64.so.2

# searches_lib64: the unpacked loader runs here, its libc is beside it, and
# its system search path is lib64 first with no multiarch directory.
searches_lib64() {
  local help dirs
  [[ -f $ROOT/lib64/libc.so.6 ]] || return 1
  help=$("$LOADER" --help 2>/dev/null) || return 1
  dirs=$(sed -n 's/^  \(\/[^ ]*\) (system search path)$/\1/p' <<<"$help" | tr '\n' ':')
  [[ $dirs == /lib64:/usr/lib64:* && $dirs != *x86_64-linux-gnu* ]]
}
search_path() { "$LOADER" --help 2>/dev/null | sed -n 's/^  \(\/[^ ]*\) (system search path)$/\1/p' | tr '\n' ':' | sed 's/:$//'; }

if ((!refresh)) && [[ -f $DIR/VERSION ]] && searches_lib64; then
  say "reusing $PACKAGE:$ARCH $(cat "$DIR/VERSION") in $ROOT (loader search path $(search_path))"
  echo "$ROOT"
  exit 0
fi

# --- the machine's main Debian archive and suite, i386, through a private apt -------------
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
URI=$(debian_archive_uri)
private_apt_download "$DIR" "deb [arch=$ARCH signed-by=$KEYRING] $URI $codename main" "$PACKAGE" \
  -o "APT::Architecture=$ARCH" -o "APT::Architectures=$ARCH"

rm -rf "$ROOT.new"
dpkg-deb -x "$DEB" "$ROOT.new" || fail "dpkg-deb -x $DEB failed"
rm -rf "$ROOT"
mv "$ROOT.new" "$ROOT"
searches_lib64 ||
  fail "the unpacked $LOADER ($PACKAGE:$ARCH $DEB_VERSION) does not run here, has no libc.so.6 beside it, or does not search /lib64:/usr/lib64 first (search path: $(search_path))"
echo "$DEB_VERSION" >"$DIR/VERSION"
say "$PACKAGE:$ARCH $DEB_VERSION from $URI $codename, unpacked in $ROOT (loader search path $(search_path))"
echo "$ROOT"
