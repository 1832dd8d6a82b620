#!/bin/bash
# The Debian package, end to end: `cpack -G DEB` in the build dir (configured
# with CMAKE_INSTALL_PREFIX=/usr, else a separate build under $T), `dpkg -i`,
# the installed layout and modes, --version, check, both man pages, the
# installed hooks.d entries naming the installed binary; then real podman
# WITHOUT --hooks-dir (its default hooks dirs include
# /usr/share/containers/oci/hooks.d): a container that does not ask runs
# untouched, one with OCI_ONLOAD=all fails with the hook's line naming the
# missing host path and the installed inventory (this host has no real Onload),
# which proves the installed entry and binary are live. Then `dpkg -r` (the
# conffile stays), `dpkg -P` (all gone), and nothing else left behind.
# Refuses to run when oci-decorator is already installed (package or
# `cmake --install`): the test would replace and then remove it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
command -v dpkg >/dev/null 2>&1 || skip_all "not a Debian system (no dpkg)"
command -v cpack >/dev/null 2>&1 || die "cpack is missing (apt-get install cmake)"
podman_setup

PKG=oci-decorator
BIN=/usr/libexec/oci/hooks.d/oci-decorator
LINK=/usr/bin/oci-decorator
HOOKS=/usr/share/containers/oci/hooks.d
CONFFILE=/etc/oci-decorator/oci-decorator.d/onload.json
NONCONF=("$BIN" "$LINK" "$HOOKS/oci-decorator-prestart.json" "$HOOKS/oci-decorator-poststop.json"
         /usr/share/oci-decorator/examples/onload.json /usr/share/oci-decorator/examples/rdma.json
         /usr/share/oci-decorator/examples/nvidia.json
         /usr/share/man/man8/oci-decorator.8 /usr/share/man/man5/oci-decorator.json.5
         /usr/share/doc/oci-decorator/README.md /usr/share/doc/oci-decorator/LICENSE
         /usr/share/doc/oci-decorator/docs/{README,architecture,clusters,delivery-modes,install}.md
         /usr/share/doc/oci-decorator/docs/{inventories-and-profiles,logs-and-check,speed}.md
         /usr/share/bash-completion/completions/oci-decorator /usr/share/zsh/vendor-completions/_oci-decorator
         /usr/lib/tmpfiles.d/oci-decorator.conf)

status=$(dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null)
if [[ -n $status && $status != *not-installed* ]]; then
  die "package $PKG is already on this machine ($status): remove it first with 'dpkg -P $PKG' (this test installs and purges it)"
fi
for f in "${NONCONF[@]}" "$CONFFILE"; do
  if [[ -e $f || -L $f ]]; then
    die "$f already exists (a 'cmake --install' copy?): remove the installed oci-decorator files first; this test installs and purges the package"
  fi
done

# Listing of the dirs the package touches, and of the hook's default state dir.
WATCH=(/usr/libexec/oci /usr/share/containers/oci/hooks.d /etc/oci-decorator /usr/share/oci-decorator
       /usr/share/doc/oci-decorator /run/oci-decorator)
listing() { local d; for d in "${WATCH[@]}"; do [[ -e $d ]] && find "$d" -printf '%p %y %m\n'; done | sort; ls -la "$LINK" 2>&1 | sed 's/.*\(\/usr\)/\1/'; }
LISTING_BEFORE=$(listing)
it_track_new_dirs /run/oci-decorator

INSTALLED=0
pkg_cleanup() {
  if ((INSTALLED)); then
    dpkg -P "$PKG" >/dev/null 2>&1 || { echo "# warning: dpkg -P $PKG failed" >&2; return 1; }
  fi
  return 0
}
it_add_cleanup pkg_cleanup

# --- build the package
package_build_dir
targets=(oci-decorator)
[[ -n ${OCID_PLUGIN:-} ]] && targets+=(oci-decorator-device-plugin)
cmake --build "$BUILD" --target "${targets[@]}" -j"$(nproc)" >"$T/logs/build.log" 2>&1 \
  || { tail -20 "$T/logs/build.log"; die "build of oci-decorator in $BUILD failed"; }
(cd "$BUILD" && cpack -G DEB -B "$T/pkg") >"$T/logs/cpack.log" 2>&1
assert_eq "cpack -G DEB succeeds" 0 "$?"
DEB=$(find "$T/pkg" -maxdepth 1 -name "${PKG}_*.deb" | head -1)
[[ -f $DEB ]] || { tail -20 "$T/logs/cpack.log"; die "cpack produced no ${PKG}_*.deb in $T/pkg"; }
info "package $(basename "$DEB") from $BUILD"
assert_eq "the package declares the conffile" "$CONFFILE" "$(dpkg-deb -I "$DEB" conffiles 2>&1)"
assert_eq "the package depends on nothing (static binary)" "" "$(dpkg-deb -f "$DEB" Depends 2>&1)"

# --- install
dpkg -i "$DEB" >"$T/logs/dpkg-i.log" 2>&1
rc=$?
INSTALLED=1
assert_eq "dpkg -i succeeds" 0 "$rc"
[[ $rc -eq 0 ]] || sed 's/^/#      dpkg: /' "$T/logs/dpkg-i.log"
assert_eq "dpkg -s: install ok installed" "install ok installed" "$(dpkg-query -W -f='${Status}' "$PKG" 2>&1)"
assert_contains "dpkg registers $CONFFILE as a conffile" "$(dpkg-query -W -f='${Conffiles}' "$PKG" 2>&1)" "$CONFFILE"

# mode_of PATH: "type mode owner" as stat prints it.
mode_of() { stat -c '%F %a %U:%G' "$1" 2>&1; }
assert_eq "$BIN: regular file 755 root" "regular file 755 root:root" "$(mode_of "$BIN")"
if [[ ${OCID_SANITIZED:-} == 1 ]]; then
  info "skipped: $BIN is statically linked (OCID_SANITIZED=1: the sanitizer build's binary is dynamic)"
else
  assert_match "$BIN is statically linked" "$(ldd "$BIN" 2>&1)" "not a dynamic executable|statically linked"
fi
assert_eq "$LINK is a symlink" "symbolic link" "$(stat -c %F "$LINK" 2>&1)"
assert_eq "$LINK resolves to the hook" "$BIN" "$(readlink -f "$LINK")"
for f in "$HOOKS/oci-decorator-prestart.json" "$HOOKS/oci-decorator-poststop.json" "$CONFFILE" \
         /usr/share/oci-decorator/examples/{onload,rdma,nvidia}.json \
         /usr/share/man/man8/oci-decorator.8 /usr/share/man/man5/oci-decorator.json.5 \
         /usr/share/doc/oci-decorator/README.md /usr/share/doc/oci-decorator/LICENSE \
         /usr/share/doc/oci-decorator/docs/{README,architecture,clusters,delivery-modes,install}.md \
         /usr/share/doc/oci-decorator/docs/{inventories-and-profiles,logs-and-check,speed}.md \
         /usr/share/bash-completion/completions/oci-decorator /usr/share/zsh/vendor-completions/_oci-decorator \
         /usr/lib/tmpfiles.d/oci-decorator.conf; do
  assert_eq "$f: regular file 644 root" "regular file 644 root:root" "$(mode_of "$f")"
done
assert_eq "the tmpfiles.d entry makes /run/onload as Onload does (root, 0755)" \
  "d /run/onload 0755 root root -" "$(grep -v '^#' /usr/lib/tmpfiles.d/oci-decorator.conf)"
assert_eq "the bash completion is the build's" "$(host_sha "$BUILD/completions/oci-decorator.bash")" \
  "$(host_sha /usr/share/bash-completion/completions/oci-decorator)"
assert_contains "the bash completion registers oci-decorator" \
  "$(bash -c 'source /usr/share/bash-completion/completions/oci-decorator && complete -p oci-decorator' 2>&1)" \
  "complete -F _oci_decorator oci-decorator"
assert_eq "the zsh completion is a #compdef file" "#compdef oci-decorator" \
  "$(head -1 /usr/share/zsh/vendor-completions/_oci-decorator)"
for d in /usr/libexec/oci/hooks.d "$HOOKS" /etc/oci-decorator /etc/oci-decorator/oci-decorator.d; do
  assert_eq "$d: directory 755 root" "directory 755 root:root" "$(mode_of "$d")"
done
assert_eq "the installed inventory is the source tree's config/onload.json" \
  "$(host_sha "$SRC/config/onload.json")" "$(host_sha "$CONFFILE")"
unowned=$(dpkg -L "$PKG" | while read -r p; do [[ -e $p || -L $p ]] || echo "$p"; done)
assert_eq "every path dpkg -L lists exists" "" "$unowned"
for stage in prestart poststop; do
  j=$HOOKS/oci-decorator-$stage.json
  assert_eq "$j: hook.path is the installed binary" "$BIN" "$(jq -r .hook.path "$j" 2>&1)"
  assert_eq "$j: args" "[\"oci-decorator\",\"hook\",\"$stage\"]" "$(jq -c .hook.args "$j" 2>&1)"
  assert_eq "$j: version 1.0.0, when.always, stages [$stage], explicit env" \
    "1.0.0 true [\"$stage\"] array" \
    "$(jq -r '[.version, (.when.always | tostring), (.stages | tojson), (.hook.env | type)] | join(" ")' "$j" 2>&1)"
done

# --- the commands
v=$("$LINK" --version 2>&1)
assert_eq "oci-decorator --version exits 0" 0 "$?"
assert_match "--version prints a version" "$v" '^oci-decorator [0-9]+\.[0-9]+\.[0-9]+'
# check: 0 ready or 1 not ready (this host has no Onload NIC or install);
# either way it reads the installed inventory and counts the installed
# hooks.d entry as this binary's.
out=$(oci-decorator check 2>&1)
rc=$?
check "oci-decorator check exits 0 or 1 (was $rc; output: $(tr '\n' '|' <<<"$out" | head -c 600))" test "$rc" -le 1
assert_contains "check reads the installed inventory" "$out" "$CONFFILE"
json=$(oci-decorator check --json 2>/dev/null)
assert_eq "check --json: the installed prestart hooks.d entry is set up" true \
  "$(jq -r --arg f "$HOOKS/oci-decorator-prestart.json" '.delivery.hooks[] | select(.file == $f) | .set_up' <<<"$json" 2>&1)"
for m in /usr/share/man/man8/oci-decorator.8 /usr/share/man/man5/oci-decorator.json.5; do
  page=$(MANWIDTH=80 man -l "$m" 2>"$T/logs/man.err")
  assert_eq "man -l $m exits 0" 0 "$?"
  assert_match "man -l $m renders a NAME section" "$page" '^NAME'
  assert_eq "man -l $m prints no warnings" "" "$(cat "$T/logs/man.err")"
done
assert_match "man oci-decorator finds the installed page" "$(MANPAGER=cat MANWIDTH=80 man oci-decorator 2>&1)" 'oci-decorator - '

# --- podman WITHOUT --hooks-dir, runc: the installed hooks.d entries are live.
run_podman runc -- -- 'echo RAN; grep -cE "onload|sfc_char|ld\.so\.preload" /proc/mounts; ls /dev'
echo "# --- podman, default hooks dirs, container that does not ask"
assert_eq "[not asked] podman run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_contains "[not asked] the container ran" "$OUT" "RAN"
assert_eq "[not asked] no onload mount inside" 0 "$(sed -n 2p <<<"$OUT")"
assert_not_contains "[not asked] no /dev/onload inside" "$OUT" "onload"

run_podman runc -- -e OCI_ONLOAD=all -- 'echo SHOULD-NOT-RUN'
echo "# --- podman, default hooks dirs, OCI_ONLOAD=all on a host without Onload"
check_not "[all] podman run fails" test "$RC" -eq 0
assert_not_contains "[all] the container process never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[all] the error is the hook's own line" "$ERR" "oci-decorator: error: container "
assert_contains "[all] the line names the installed inventory" "$ERR" "(inventory $CONFFILE)"
assert_match "[all] the line names the missing host path" "$ERR" \
  'not found on the host \(inventory [^)]*\): /(dev/onload|usr/[^ "]*onload[^ "]*)'
assert_eq "[all] no state left in /run/oci-decorator" "" "$(ls -A /run/oci-decorator 2>/dev/null)"
assert_host_mounts_unchanged "[podman, installed hook]"

# --- remove: the conffile stays; purge: everything goes.
dpkg -r "$PKG" >"$T/logs/dpkg-r.log" 2>&1
assert_eq "dpkg -r succeeds" 0 "$?"
assert_eq "dpkg -s after -r: deinstall ok config-files" "deinstall ok config-files" "$(dpkg-query -W -f='${Status}' "$PKG" 2>&1)"
left=""
for f in "${NONCONF[@]}"; do [[ -e $f || -L $f ]] && left+="$f "; done
assert_eq "dpkg -r removed every non-conffile" "" "$left"
check_not "dpkg -r removed /usr/libexec/oci (only the package's)" test -e /usr/libexec/oci
check_not "dpkg -r removed $HOOKS (only the package's)" test -e "$HOOKS"
check "dpkg -r kept /usr/share/containers (containers-common's)" test -d /usr/share/containers
check "dpkg -r kept the conffile $CONFFILE" test -f "$CONFFILE"
dpkg -P "$PKG" >"$T/logs/dpkg-p.log" 2>&1
assert_eq "dpkg -P succeeds" 0 "$?"
INSTALLED=0
check_not "dpkg -P removed the conffile" test -e "$CONFFILE"
check_not "dpkg -P removed /etc/oci-decorator" test -e /etc/oci-decorator
check_not "dpkg -s after -P: not known" quiet dpkg -s "$PKG"
assert_eq "listing of the package's dirs as before the test" "$LISTING_BEFORE" "$(listing)"

# --- the device plugin's own package (built with the plugin): dynamic,
# its dependencies found by dpkg-shlibdeps, installable beside the hook's.
PPKG=oci-decorator-device-plugin
if [[ -z ${OCID_PLUGIN:-} ]]; then
  info "no device plugin in this build (OCID_DEVICE_PLUGIN=OFF): its package is not checked"
else
  PDEB=$(find "$T/pkg" -maxdepth 1 -name "${PPKG}_*.deb" | head -1)
  check "cpack produced ${PPKG}_*.deb" test -f "$PDEB"
  pstatus=$(dpkg-query -W -f='${Status}' "$PPKG" 2>/dev/null)
  [[ -z $pstatus || $pstatus == *not-installed* ]] || die "package $PPKG is already installed: remove it first"
  assert_match "$PPKG depends on the gRPC and protobuf libraries" \
    "$(dpkg-deb -f "$PDEB" Depends 2>&1)" 'libgrpc\+\+1\.51.*libprotobuf32|libprotobuf32.*libgrpc\+\+1\.51'
  dpkg -i "$PDEB" >"$T/logs/dpkg-i-plugin.log" 2>&1
  rc=$?
  pkg_plugin_cleanup() { dpkg -P "$PPKG" >/dev/null 2>&1 || true; }
  it_add_cleanup pkg_plugin_cleanup
  assert_eq "dpkg -i $PPKG succeeds" 0 "$rc"
  assert_eq "/usr/bin/$PPKG: regular file 755 root" "regular file 755 root:root" \
    "$(mode_of /usr/bin/$PPKG)"
  assert_match "$PPKG --version" "$(/usr/bin/$PPKG --version 2>&1)" '^[0-9]+\.[0-9]+\.[0-9]+'
  m=/usr/share/man/man8/$PPKG.8
  page=$(MANWIDTH=80 man -l "$m" 2>"$T/logs/man.err")
  assert_match "man -l $m renders a NAME section" "$page" '^NAME'
  assert_eq "man -l $m prints no warnings" "" "$(cat "$T/logs/man.err")"
  for f in kubernetes/daemonset.yaml kubernetes/Dockerfile kubernetes/onload-pod.yaml \
           nomad/client.hcl nomad/onload.nomad.hcl; do
    check "the package ships deploy/$f" test -f "/usr/share/$PPKG/deploy/$f"
  done
  for f in kubernetes/nodefeaturerule.yaml; do
    check "the package ships deploy/$f" test -f "/usr/share/$PPKG/deploy/$f"
  done
  # What the image built by deploy/kubernetes/Dockerfile advertises.
  inv=/usr/share/$PPKG/inventories/onload.json
  assert_eq "$inv: regular file 644 root" "regular file 644 root:root" "$(mode_of "$inv")"
  check "$inv is the shipped config/onload.json" cmp -s "$inv" "$SRC/config/onload.json"
  check "the Dockerfile installs $inv into the image's config directory" \
    grep -qF "$inv" "/usr/share/$PPKG/deploy/kubernetes/Dockerfile"
  for f in /usr/share/bash-completion/completions/$PPKG /usr/share/zsh/vendor-completions/_$PPKG; do
    assert_eq "$f: regular file 644 root" "regular file 644 root:root" "$(mode_of "$f")"
  done
  dpkg -P "$PPKG" >"$T/logs/dpkg-p-plugin.log" 2>&1
  assert_eq "dpkg -P $PPKG succeeds" 0 "$?"
  check_not "dpkg -P removed /usr/bin/$PPKG" test -e "/usr/bin/$PPKG"
fi

it_finish
