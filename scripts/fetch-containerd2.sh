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
# signed by the system's debian-archive-keyring.
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
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
PACKAGE=containerd

say() { echo "fetch-containerd2: $*" >&2; }
fail() { echo "fetch-containerd2: error: $*" >&2; exit 1; }

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

# --- the machine's main Debian archive URI ----------------------------------------------
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n $codename ]] || fail "no VERSION_CODENAME in /etc/os-release"

# deb822 stanzas: the first `deb` stanza whose Suites list the bare codename.
archive_uri_deb822() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk -v code="$codename" '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " code " ") && uris != "") {
          split(uris, u, " "); print u[1]; found = 1; exit
        }
        types = suites = uris = ""
      }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      tolower($1) == "types:"  { $1 = ""; types = $0 }
      tolower($1) == "suites:" { $1 = ""; suites = $0 }
      tolower($1) == "uris:"   { $1 = ""; uris = $0; sub(/^ +/, "", uris) }
      END { if (!found) flush() }
    ' "$f"
  done | head -1
}
# one-line format: the first `deb [opts] URI codename ...` line.
archive_uri_oneline() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    awk -v code="$codename" '
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == code) { print $i; exit }
      }' "$f"
  done | head -1
}
URI=$(archive_uri_deb822)
[[ -n $URI ]] || URI=$(archive_uri_oneline)
[[ -n $URI ]] || fail "found no Debian archive for suite $codename in /etc/apt/sources.list or /etc/apt/sources.list.d"

# --- private apt: sources list, lists, cache -----------------------------------------------
APT=$DIR/apt
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/download"
echo "deb [signed-by=$KEYRING] $URI sid main" >"$APT/sources.list"
apt_opts=(-q -o "Dir::Etc::sourcelist=$APT/sources.list" -o Dir::Etc::sourceparts=/nonexistent
          -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache"
          -o Dir::Etc::preferencesparts=/nonexistent -o APT::Get::List-Cleanup=0)
say "apt-get update of '$URI sid main' (private lists in $APT)"
apt-get "${apt_opts[@]}" update </dev/null >"$APT/update.log" 2>&1 ||
  fail "apt-get update of $URI sid main failed: $(grep -E '^(E|W):' "$APT/update.log" | head -3 | tr '\n' ' ')"
version=$(apt-cache "${apt_opts[@]}" show --no-all-versions "$PACKAGE" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
[[ -n $version ]] || fail "no package $PACKAGE in $URI sid main"

rm -f "$APT/download"/*.deb
# apt's download sandbox runs as _apt: it needs to write the directory.
id _apt >/dev/null 2>&1 && chown _apt "$APT/download"
(cd "$APT/download" && apt-get "${apt_opts[@]}" download "$PACKAGE" </dev/null >"$APT/download.log" 2>&1) ||
  fail "apt-get download $PACKAGE ($version) failed: $(grep -E '^(E|W):' "$APT/download.log" | head -3 | tr '\n' ' ')"
deb=$(ls "$APT/download"/"${PACKAGE}"_*.deb 2>/dev/null | head -1)
[[ -n $deb ]] || fail "apt-get download left no ${PACKAGE}_*.deb in $APT/download"

rm -rf "$DIR/root.new"
dpkg -x "$deb" "$DIR/root.new" || fail "dpkg -x $deb failed"
rm -rf "$DIR/root"
mv "$DIR/root.new" "$DIR/root"
runs_here || fail "the unpacked $BIN/containerd ($version) does not run here or is not 2.x: $("$BIN/containerd" --version 2>&1 | head -1)"
echo "$version" >"$DIR/VERSION"
say "$PACKAGE $version from $URI sid, unpacked in $DIR/root ($("$BIN/containerd" --version))"
echo "$BIN"
