# shellcheck shell=bash
# One package from Debian's archive, downloaded with a PRIVATE apt: its own
# sources list, list state and cache under a directory of the caller's (no
# file in /etc/apt is read for sources or preferences, nothing is installed,
# the system's apt state is untouched). Sourced by scripts/fetch-*.sh, which
# define say and fail first.
#
#   debian_archive_uri          the URI of the machine's own main Debian archive:
#                               the `URIs:` of the first deb822 stanza in
#                               /etc/apt/sources.list.d/*.sources whose Suites
#                               list the system's codename, else the URI of the
#                               first `deb` line of /etc/apt/sources.list(.d/*.list)
#                               for that codename
#   private_apt_download DIR LINE PACKAGE [APT OPTIONS...]
#                               apt-get update of the one sources LINE with lists
#                               and cache in DIR/apt, then apt-get download
#                               PACKAGE into DIR/apt/download; sets DEB (the
#                               .deb) and DEB_VERSION. Fails with one line.
# The archive is signed by the system's debian-archive-keyring: KEYRING.

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

debian_archive_uri() {
  local codename uri
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [[ -n $codename ]] || fail "no VERSION_CODENAME in /etc/os-release"
  uri=$(_archive_uri_deb822 "$codename")
  [[ -n $uri ]] || uri=$(_archive_uri_oneline "$codename")
  [[ -n $uri ]] || fail "found no Debian archive for suite $codename in /etc/apt/sources.list or /etc/apt/sources.list.d"
  echo "$uri"
}

# deb822 stanzas: the first `deb` stanza whose Suites list the bare codename.
_archive_uri_deb822() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    awk -v code="$1" '
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
_archive_uri_oneline() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] || continue
    awk -v code="$1" '
      $1 == "deb" {
        i = 2
        if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
        if ($(i + 1) == code) { print $i; exit }
      }' "$f"
  done | head -1
}

private_apt_download() {  # DIR LINE PACKAGE [APT OPTIONS...]
  local dir=$1 line=$2 package=$3
  shift 3
  [[ $(id -u) -eq 0 ]] || fail "must run as root (apt-get's download sandbox)"
  [[ -f $KEYRING ]] || fail "no $KEYRING (apt-get install debian-archive-keyring)"
  command -v apt-get >/dev/null && command -v dpkg >/dev/null || fail "apt-get and dpkg are needed"
  local apt=$dir/apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/download"
  echo "$line" >"$apt/sources.list"
  local opts=(-q -o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
              -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
              -o Dir::Etc::preferencesparts=/nonexistent -o APT::Get::List-Cleanup=0 "$@")
  say "apt-get update of '$line' (private lists in $apt)"
  apt-get "${opts[@]}" update </dev/null >"$apt/update.log" 2>&1 ||
    fail "apt-get update of '$line' failed: $(grep -E '^(E|W):' "$apt/update.log" | head -3 | tr '\n' ' ')"
  DEB_VERSION=$(apt-cache "${opts[@]}" show --no-all-versions "$package" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
  [[ -n $DEB_VERSION ]] || fail "no package $package in '$line'"
  rm -f "$apt/download"/*.deb
  # apt's download sandbox runs as _apt: it needs to write the directory.
  id _apt >/dev/null 2>&1 && chown _apt "$apt/download"
  (cd "$apt/download" && apt-get "${opts[@]}" download "$package" </dev/null >"$apt/download.log" 2>&1) ||
    fail "apt-get download $package ($DEB_VERSION) failed: $(grep -E '^(E|W):' "$apt/download.log" | head -3 | tr '\n' ' ')"
  DEB=$(ls "$apt/download"/"${package}"_*.deb 2>/dev/null | head -1)
  [[ -n $DEB ]] || fail "apt-get download left no ${package}_*.deb in $apt/download"
}
