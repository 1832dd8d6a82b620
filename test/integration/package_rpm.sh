#!/bin/bash
# The RPM packages (RHEL, Rocky, Alma 8 and 9), end to end, without touching
# the host's packages: `cpack -G RPM` in the build dir (configured with
# CMAKE_INSTALL_PREFIX=/usr, else a separate build under $T); the packages as
# files (rpm -qpl/-qpi/-qpR: the .deb's layout, modes and ownership, the
# inventory %config(noreplace), no library requirement for the static hook,
# rpmlint clean with packaging/rpmlint.toml); `rpm --root` into an empty root
# with its own database (the hook's package WITHOUT --nodeps: it needs
# nothing); the installed hook run by real runc (its hooks entries point at
# $ROOT/usr/libexec/oci/hooks.d/oci-decorator with --config-dir at the
# installed inventories) against the simulated Onload: a container that asks
# gets Onload, one that does not is untouched. Then upgrades keep an edited
# inventory: release 2 ships the same inventory (rpm keeps the edit, no
# .rpmnew), release 3 a changed one (edit kept, the new one as .rpmnew); the
# installed hook still works on the edited file; `rpm -e` leaves it as
# .rpmsave and nothing else. The device plugin's package likewise (its
# library requirements found by rpm).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64
command -v rpmbuild >/dev/null 2>&1 || die "rpmbuild is missing (apt-get install rpm; test/integration/PACKAGES)"
command -v rpmlint >/dev/null 2>&1 || die "rpmlint is missing (apt-get install rpmlint; test/integration/PACKAGES)"
command -v cpack >/dev/null 2>&1 || die "cpack is missing (apt-get install cmake)"

PKG=oci-decorator
PPKG=oci-decorator-device-plugin
BIN=/usr/libexec/oci/hooks.d/oci-decorator
CONFFILE=/etc/oci-decorator/oci-decorator.d/onload.json
ROOT=$T/root
mkdir -m 0755 "$ROOT"
# rpm_root ARGS...: rpm on $ROOT, its database where RHEL keeps it.
rpm_root() { rpm --root "$ROOT" --dbpath /var/lib/rpm "$@" 2> >(grep -v 'should not be used directly\|assuming you know' >&2); }
mode_of() { stat -c '%F %a %U:%G' "$1" 2>&1; }

# --- build the packages
package_build_dir
cmake --build "$BUILD" -j"$(nproc)" >"$T/logs/build.log" 2>&1 \
  || { tail -20 "$T/logs/build.log"; die "build in $BUILD failed"; }
# cpack_rpm N [cpack args]: builds the packages into $T/pkgN; sets RPM and PRPM.
cpack_rpm() {
  local n=$1
  shift
  (cd "$BUILD" && cpack -G RPM -B "$T/pkg$n" "$@") >"$T/logs/cpack$n.log" 2>&1
  assert_eq "cpack -G RPM $* succeeds" 0 "$?"
  RPM=$(find "$T/pkg$n" -maxdepth 1 -name "$PKG-[0-9]*.rpm" | head -1)
  PRPM=$(find "$T/pkg$n" -maxdepth 1 -name "$PPKG-[0-9]*.rpm" | head -1)
  [[ -f $RPM ]] || { tail -20 "$T/logs/cpack$n.log"; die "cpack produced no $PKG-*.rpm in $T/pkg$n"; }
}
cpack_rpm 1
RPM1=$RPM
PRPM1=$PRPM
info "package $(basename "$RPM1") from $BUILD"
assert_match "the file name is RHEL's: NAME-VERSION-RELEASE.ARCH.rpm" "$(basename "$RPM1")" \
  "^$PKG-[0-9]+\.[0-9]+\.[0-9]+-1\.x86_64\.rpm$"

# --- the hook's package as a file
EXPECTED_FILES="/etc/oci-decorator
/etc/oci-decorator/oci-decorator.d
$CONFFILE
/usr/bin/oci-decorator
/usr/bin/oci-decorator-runtime
/usr/lib/tmpfiles.d/oci-decorator.conf
/usr/libexec/oci
/usr/libexec/oci/hooks.d
$BIN
/usr/share/bash-completion/completions/oci-decorator
/usr/share/containers/oci
/usr/share/containers/oci/hooks.d
/usr/share/containers/oci/hooks.d/oci-decorator-poststop.json
/usr/share/containers/oci/hooks.d/oci-decorator-prestart.json
/usr/share/doc/oci-decorator
/usr/share/doc/oci-decorator/LICENSE
/usr/share/doc/oci-decorator/README.md
/usr/share/doc/oci-decorator/docs
/usr/share/doc/oci-decorator/docs/README.md
/usr/share/doc/oci-decorator/docs/architecture.md
/usr/share/doc/oci-decorator/docs/clusters.md
/usr/share/doc/oci-decorator/docs/delivery-modes.md
/usr/share/doc/oci-decorator/docs/install.md
/usr/share/doc/oci-decorator/docs/inventories-and-profiles.md
/usr/share/doc/oci-decorator/docs/logs-and-check.md
/usr/share/doc/oci-decorator/docs/speed.md
/usr/share/man/man5/oci-decorator.json.5.gz
/usr/share/man/man8/oci-decorator.8.gz
/usr/share/oci-decorator
/usr/share/oci-decorator/examples
/usr/share/oci-decorator/examples/nvidia.json
/usr/share/oci-decorator/examples/onload.json
/usr/share/oci-decorator/examples/rdma.json
/usr/share/zsh/site-functions/_oci-decorator"
assert_eq "rpm -qpl: the .deb's layout (zsh's site-functions, gzipped man pages), owning only its own dirs" \
  "$EXPECTED_FILES" "$(rpm -qpl "$RPM1" 2>/dev/null)"
# The expected "mode owner:group path" of each: directories (the paths
# others are below) and the hook 755, the two links, everything else 644;
# all root's.
expected_modes=$(while read -r p; do
  if grep -q "^$p/" <<<"$EXPECTED_FILES"; then
    m=drwxr-xr-x
  else
    case $p in
      "$BIN") m=-rwxr-xr-x ;;
      /usr/bin/*) m=lrwxrwxrwx ;;
      *) m=-rw-r--r-- ;;
    esac
  fi
  echo "$m root:root $p"
done <<<"$EXPECTED_FILES")
assert_eq "rpm -qp: modes, and every path root:root" "$expected_modes" \
  "$(rpm -qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILENAMES}\n]' "$RPM1" 2>/dev/null)"
flags=$(rpm -qp --qf '[%{FILEFLAGS:fflags} %{FILENAMES}\n]' "$RPM1" 2>/dev/null)
assert_eq "$CONFFILE is %config(noreplace)" "cn" "$(awk -v f="$CONFFILE" '$2 == f {print $1}' <<<"$flags")"
assert_match "LICENSE is %license" "$(awk '$2 ~ /\/LICENSE$/ {print $1}' <<<"$flags")" "l"
assert_eq "README.md is %doc" "d" "$(awk '$2 ~ /\/oci-decorator\/README.md$/ {print $1}' <<<"$flags")"
assert_eq "docs/*.md are %doc" "d d d d d d d d" \
  "$(awk '$2 ~ /\/oci-decorator\/docs\/.*\.md$/ {print $1}' <<<"$flags" | tr '\n' ' ' | sed 's/ $//')"
assert_eq "only the inventory is a config file" "$CONFFILE" "$(rpm -qpc "$RPM1" 2>/dev/null)"
assert_eq "the package links point into the package" "../libexec/oci/hooks.d/oci-decorator ../libexec/oci/hooks.d/oci-decorator" \
  "$(rpm -qp --qf '[%{FILELINKTOS} ]' "$RPM1" 2>/dev/null | tr -s ' ' | sed 's/^ //; s/ $//')"
info=$(rpm -qpi "$RPM1" 2>/dev/null)
assert_match "rpm -qpi: name" "$info" "^Name *: $PKG$"
assert_match "rpm -qpi: release 1" "$info" "^Release *: 1$"
assert_match "rpm -qpi: license as RHEL 8/9 name it" "$info" "^License *: ASL 2.0$"
assert_eq "not relocatable (the hooks.d entries name absolute paths)" "(none)" \
  "$(rpm -qp --qf '%{PREFIXES}' "$RPM1" 2>/dev/null)"
assert_match "rpm -qpi: a summary" "$info" "^Summary *: OCI runtime hook"
reqs=$(rpm -qpR "$RPM1" 2>/dev/null)
NODEPS=()
if [[ ${OCID_SANITIZED:-} == 1 ]]; then
  info "skipped: the hook's rpm requires nothing (OCID_SANITIZED=1: the sanitizer build's binary is dynamic)"
  NODEPS=(--nodeps)
else
  assert_eq "rpm -qpR: nothing but rpm's own features and the package's own config() (a static binary)" "" \
    "$(grep -vE '^(rpmlib\(|config\(oci-decorator\) = )' <<<"$reqs")"
  assert_no_match "rpm -qpR: no library (libstdc++, libseccomp, libc ...)" "$reqs" '\.so|libstdc|seccomp|rtld'
fi
assert_eq "no scriptlets (as the .deb)" "" "$(rpm -qp --scripts "$RPM1" 2>/dev/null)"

# --- rpmlint, with the RHEL conventions and the explained filters of packaging/rpmlint.toml
if [[ ${OCID_SANITIZED:-} == 1 ]]; then
  info "skipped: rpmlint (OCID_SANITIZED=1: packaging/rpmlint.toml is for the static hook of the normal build)"
else
  lint=$(rpmlint -c "$SRC/packaging/rpmlint.toml" "$RPM1" ${PRPM1:+"$PRPM1"} 2>&1)
  assert_match "rpmlint: no error, no warning" "$lint" " 0 errors, 0 warnings"
  grep -E ': [EW]: ' <<<"$lint" | head -20 | sed 's/^/#      rpmlint: /'
fi

# --- install into an empty root, its own database
rpm_root --initdb
assert_eq "rpm --initdb in $ROOT" 0 "$?"
rpm_root -i "${NODEPS[@]}" "$RPM1" >"$T/logs/rpm-i.log" 2>&1
rc=$?
assert_eq "rpm --root -i ${NODEPS[*]:-(no --nodeps: the hook needs nothing)}" 0 "$rc"
[[ $rc -eq 0 ]] || sed 's/^/#      rpm: /' "$T/logs/rpm-i.log"
assert_match "rpm -q: release 1 installed" "$(rpm_root -q "$PKG" 2>&1)" "^$PKG-[0-9.]+-1\.x86_64$"
assert_eq "rpm -V: the installed files are as packaged" "" "$(rpm_root -V --nodeps "$PKG" 2>&1)"
assert_eq "$BIN: regular file 755 root" "regular file 755 root:root" "$(mode_of "$ROOT$BIN")"
if [[ ${OCID_SANITIZED:-} == 1 ]]; then
  info "skipped: $BIN is statically linked (OCID_SANITIZED=1: the sanitizer build's binary is dynamic)"
else
  assert_match "$BIN is statically linked" "$(ldd "$ROOT$BIN" 2>&1)" "not a dynamic executable|statically linked"
fi
for l in /usr/bin/oci-decorator /usr/bin/oci-decorator-runtime; do
  assert_eq "$l resolves to the hook inside the root" "$ROOT$BIN" "$(readlink -f "$ROOT$l")"
done
for d in /usr/libexec/oci/hooks.d /usr/share/containers/oci/hooks.d /etc/oci-decorator \
         /etc/oci-decorator/oci-decorator.d /usr/share/zsh/site-functions /usr/share/bash-completion/completions; do
  assert_eq "$d: directory 755 root" "directory 755 root:root" "$(mode_of "$ROOT$d")"
done
assert_eq "the installed inventory is the source tree's config/onload.json" \
  "$(host_sha "$SRC/config/onload.json")" "$(host_sha "$ROOT$CONFFILE")"
for stage in prestart poststop; do
  j=$ROOT/usr/share/containers/oci/hooks.d/oci-decorator-$stage.json
  assert_eq "$j: hook.path is the installed binary" "$BIN" "$(jq -r .hook.path "$j" 2>&1)"
done
assert_eq "the bash completion is the build's" "$(host_sha "$BUILD/completions/oci-decorator.bash")" \
  "$(host_sha "$ROOT/usr/share/bash-completion/completions/oci-decorator")"
assert_eq "the zsh completion is the build's" "$(host_sha "$BUILD/completions/_oci-decorator")" \
  "$(host_sha "$ROOT/usr/share/zsh/site-functions/_oci-decorator")"
assert_match "the installed hook's --version" "$("$ROOT/usr/bin/oci-decorator" --version 2>&1)" \
  '^oci-decorator [0-9]+\.[0-9]+\.[0-9]+'
INSTALLED_CONF=$ROOT/etc/oci-decorator/oci-decorator.d
out=$("$ROOT$BIN" --config-dir "$INSTALLED_CONF" --host-root "$HOST_ROOT" check 2>&1)
assert_eq "the installed hook's check passes on the installed inventory (output: $(tr '\n' '|' <<<"$out"))" 0 "$?"

# --- the installed hook under runc, on the installed inventory
OCID_BIN=$ROOT$BIN
run_installed() {  # DESC: OCI_ONLOAD=all gets Onload, no request gets nothing
  make_bundle rpm-all --config-dir "$INSTALLED_CONF" --env OCI_ONLOAD=all -- "$(onload_probe)"
  run_container
  assert_eq "[$1, OCI_ONLOAD=all] runc run exits 0" 0 "$RC"
  [[ $RC -eq 0 ]] || dump_run
  expect_onload all "$1, OCI_ONLOAD=all"
  make_bundle rpm-none --config-dir "$INSTALLED_CONF" -- "$(onload_probe)"
  run_container
  assert_eq "[$1, not asked] runc run exits 0" 0 "$RC"
  expect_onload none "$1, not asked"
  assert_state_dir_empty "[$1]"
}
run_installed "installed rpm"

# --- upgrades keep an edited inventory
jq -c . "$ROOT$CONFFILE" >"$T/edited.json" || die "jq of the installed inventory failed"
cat "$T/edited.json" >"$ROOT$CONFFILE"
EDITED=$(host_sha "$ROOT$CONFFILE")
check_not "the edit changed the file" test "$EDITED" = "$(host_sha "$SRC/config/onload.json")"

cpack_rpm 2 -D CPACK_RPM_PACKAGE_RELEASE=2
rpm_root -U "${NODEPS[@]}" "$RPM" >"$T/logs/rpm-U2.log" 2>&1
assert_eq "rpm -U to release 2 succeeds" 0 "$?"
assert_match "rpm -q: release 2 installed" "$(rpm_root -q "$PKG" 2>&1)" "^$PKG-[0-9.]+-2\.x86_64$"
assert_eq "release 2 (same inventory): the edited inventory is kept" "$EDITED" "$(host_sha "$ROOT$CONFFILE")"
check_not "release 2 (same inventory): no .rpmnew" test -e "$ROOT$CONFFILE.rpmnew"

# Release 3 ships a changed inventory: a newline more, changed in cpack's
# staging tree before the package is made.
cat >"$T/inventory-v3.cmake" <<EOF
file(APPEND "\${CPACK_TEMPORARY_INSTALL_DIRECTORY}/hook$CONFFILE" "\n")
EOF
cpack_rpm 3 -D CPACK_RPM_PACKAGE_RELEASE=3 -D CPACK_PRE_BUILD_SCRIPTS="$T/inventory-v3.cmake"
V3=$( (cat "$SRC/config/onload.json"; echo) | sha256sum | cut -c1-64)
assert_eq "release 3 ships the changed inventory" "$V3" \
  "$(rpm -qp --qf '[%{FILEDIGESTS} %{FILENAMES}\n]' "$RPM" 2>/dev/null | awk -v f="$CONFFILE" '$2 == f {print $1}')"
rpm_root -U "${NODEPS[@]}" "$RPM" >"$T/logs/rpm-U3.log" 2>&1
assert_eq "rpm -U to release 3 succeeds" 0 "$?"
assert_match "rpm -q: release 3 installed" "$(rpm_root -q "$PKG" 2>&1)" "^$PKG-[0-9.]+-3\.x86_64$"
assert_eq "release 3 (changed inventory): the edited inventory is kept" "$EDITED" "$(host_sha "$ROOT$CONFFILE")"
assert_eq "release 3: the new inventory is placed beside it as .rpmnew" "$V3" "$(host_sha "$ROOT$CONFFILE.rpmnew" 2>&1)"
assert_eq "rpm -V after the upgrades: only the edited config differs" \
  "S.5....T.  c $CONFFILE" "$(rpm_root -V --nodeps "$PKG" 2>&1)"
run_installed "upgraded rpm, edited inventory"

# --- the device plugin's package
if [[ -z ${OCID_PLUGIN:-} ]]; then
  info "no device plugin in this build (OCID_DEVICE_PLUGIN=OFF): its package is not checked"
else
  check "cpack produced $PPKG-*.rpm" test -f "$PRPM1"
  preqs=$(rpm -qpR "$PRPM1" 2>/dev/null)
  assert_match "$PPKG requires the gRPC library (found by rpm)" "$preqs" '^libgrpc\+\+\.so'
  assert_match "$PPKG requires the protobuf library" "$preqs" '^libprotobuf\.so'
  plist=$(rpm -qpl "$PRPM1" 2>/dev/null)
  for f in /usr/bin/$PPKG /usr/share/man/man8/$PPKG.8.gz /usr/share/doc/$PPKG/LICENSE \
           /usr/share/bash-completion/completions/$PPKG /usr/share/zsh/site-functions/_$PPKG \
           /usr/share/$PPKG/deploy/kubernetes/daemonset.yaml /usr/share/$PPKG/deploy/nomad/client.hcl; do
    assert_contains "$PPKG ships $f" "$plist" "$f"
  done
  assert_no_match "$PPKG owns no system directory" "$plist" \
    '^/usr/(bin|share|share/man(/man8)?|share/doc|share/bash-completion(/completions)?|share/zsh(/site-functions)?)$'
  assert_eq "$PPKG: every path root:root" "" \
    "$(rpm -qp --qf '[%{FILEUSERNAME}:%{FILEGROUPNAME}\n]' "$PRPM1" 2>/dev/null | grep -v '^root:root$')"
  rpm_root -i --nodeps "$PRPM1" >"$T/logs/rpm-i-plugin.log" 2>&1
  assert_eq "rpm --root -i --nodeps $PPKG (its libraries are the host's)" 0 "$?"
  assert_eq "/usr/bin/$PPKG: regular file 755 root" "regular file 755 root:root" "$(mode_of "$ROOT/usr/bin/$PPKG")"
  assert_match "the installed $PPKG --version" "$("$ROOT/usr/bin/$PPKG" --version 2>&1)" '^[0-9]+\.[0-9]+\.[0-9]+'
  rpm_root -e "$PPKG" >"$T/logs/rpm-e-plugin.log" 2>&1
  assert_eq "rpm -e $PPKG" 0 "$?"
fi

# --- erase: the edited inventory stays as .rpmsave, nothing else of the package
rpm_root -e "$PKG" >"$T/logs/rpm-e.log" 2>&1
assert_eq "rpm -e $PKG succeeds" 0 "$?"
assert_eq "the edited inventory is saved as .rpmsave" "$EDITED" "$(host_sha "$ROOT$CONFFILE.rpmsave" 2>&1)"
left=$(cd "$ROOT" && find . ! -type d | sed 's/^\.//' | grep -v '^/var/lib/rpm/' | sort)
assert_eq "after rpm -e only the saved and the new inventory are left" \
  "$CONFFILE.rpmnew"$'\n'"$CONFFILE.rpmsave" "$left"

it_finish
