#!/bin/bash
# Onload profiles (OCI_ONLOAD_PROFILE) in every mode that can or cannot set
# the environment, with real runc and podman, against the SIMULATED install
# (its latency.opf and throughput.opf are straight-line, latency-best.opf has
# an `if`; the shipped onload.json also defines "latency" inline):
#   1. runtime shim (runc): the profile's EF_* are in the container's
#      environment, the container's own EF_* keep their values, and the
#      container's own LD_PRELOAD is kept with libonload after it (both
#      libraries load: a library of the test's own reports itself);
#   2. shim: an .opf that is not straight-line, or an unknown name, refuses
#      the container that named it with one line; config.json unchanged;
#   3. shim: a container that did not ask (only OCI_ONLOAD_PROFILE) is
#      untouched, config.json byte-identical;
#   4. hook mode (runc prestart hook): the container starts, has no EF_*,
#      the hook logs a warning naming the profile; `plan` shows it;
#   6. device plugin: `--profile latency` puts the profile into what the
#      preloading resources deliver and names their CDI device onload-latency;
#      an .opf with `if` makes them unhealthy with its line; a bad name is
#      refused at start;
#   5. podman CDI: `--device KIND=onload-latency` gives the EF_*, and
#      libonload through the mounted /etc/ld.so.preload; a container's own
#      LD_PRELOAD is kept and both libraries load in the same process; what
#      podman 4.3 does to a container's own EF_* of the same name (the spec's
#      value replaces it) is asserted, as documented.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
it_setup lib64

LATENCY="EF_POLL_USEC=100000 EF_TCP_FASTSTART_IDLE=0 EF_TCP_FASTSTART_INIT=0"

# A library of the container's own to preload, reporting that it loaded.
command -v cc >/dev/null 2>&1 || die "cc is missing (see test/integration/PACKAGES)"
cat >"$T/mine.c" <<'EOF'
#include <stdio.h>
__attribute__((constructor)) static void mine(void) { fprintf(stdout, "MINE preloaded\n"); fflush(stdout); }
EOF
cc -shared -fPIC -o "$T/libmine.so" "$T/mine.c" || die "cannot build libmine.so"
mkdir -p "$BASE_ROOTFS/opt/mine"
cp "$T/libmine.so" "$BASE_ROOTFS/opt/mine/libmine.so"

# What the container reports: its EF_* (sorted), LD_PRELOAD, what dyn-hello loads.
PROBE='env | grep "^EF_" | sort | tr "\n" " " | sed "s/^/EF /"; echo; echo "LDP ${LD_PRELOAD:-unset}";
/usr/bin/dyn-hello 2>&1 | sed "s/^/DYN /"; echo END'
ef() { field EF | sed 's/ *$//'; }

# --- the runtime shim ------------------------------------------------------------------
RUNC=$(command -v runc)
mkdir -p "$T/bin"
ln -s "$OCID_BIN" "$T/bin/oci-decorator-runtime"
echo "{\"runtime\": \"$RUNC\", \"log_level\": \"debug\", \"log_file\": \"$T/logs/shim.log\"}" >"$T/runtime.json"
shim() { "$T/bin/oci-decorator-runtime" --ocid-config "$T/runtime.json" --ocid-host-root "$HOST_ROOT" \
         --ocid-config-dir "$CONF_DIR" --root "$RUNC_ROOT" --log "$T/logs/runc-$CID.json" --log-format json "$@"; }
# shim_run: lib.sh's shim_create_start, then the container is deleted.
shim_run() {
  shim_create_start
  runc --root "$RUNC_ROOT" delete -f "$CID" >/dev/null 2>&1
}

echo "# --- 1. shim: profile latency, the container's own EF_* and LD_PRELOAD"
make_bundle shim-lat --no-hook --env OCI_ONLOAD=onload --env OCI_ONLOAD_PROFILE=latency -- "$PROBE"
shim_run
assert_eq "[shim latency] create exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[shim latency] the container has the profile's EF_*" "$LATENCY" "$(ef)"
assert_contains "[shim latency] libonload is preloaded" "$(field DYN)" "SIMULATED libonload: preloaded"

make_bundle shim-own --no-hook --env OCI_ONLOAD=onload --env OCI_ONLOAD_PROFILE=latency \
  --env EF_POLL_USEC=7 --env LD_PRELOAD=/opt/mine/libmine.so -- "$PROBE"
shim_run
assert_eq "[shim own] create exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[shim own] the container's own EF_POLL_USEC wins, the rest is the profile's" \
  "EF_POLL_USEC=7 EF_TCP_FASTSTART_IDLE=0 EF_TCP_FASTSTART_INIT=0" "$(ef)"
assert_eq "[shim own] LD_PRELOAD keeps the container's library, libonload after it" \
  "/opt/mine/libmine.so $IMAGE_LIBDIR/libonload.so" "$(field LDP)"
assert_contains "[shim own] the container's own library is loaded" "$OUT" "MINE preloaded"
assert_contains "[shim own] and libonload too" "$(field DYN)" "SIMULATED libonload: preloaded"
assert_contains "[shim own] the shim logs the variable it kept" "$(cat "$T/logs/shim.log")" \
  "profile variables the container sets itself kept at its values: EF_POLL_USEC"

make_bundle shim-file --no-hook --env OCI_ONLOAD=onload \
  --annotation oci-decorator/OCI_ONLOAD_PROFILE=throughput -- "$PROBE"
shim_run
assert_eq "[shim throughput.opf] create exits 0" 0 "$RC"
assert_eq "[shim throughput.opf] the file's variables (by annotation)" \
  "EF_POLL_USEC=100000 EF_TCP_SNDBUF_MODE=1" "$(ef)"

echo "# --- 2. shim: refused profiles"
make_bundle shim-best --no-hook --env OCI_ONLOAD=onload --env OCI_ONLOAD_PROFILE=latency-best -- 'echo SHOULD-NOT-RUN'
sum=$(sha256sum <"$B/config.json")
shim_run
check_not "[latency-best] create fails" test "$RC" -eq 0
assert_not_contains "[latency-best] the container never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[latency-best] one line with file:line" "$ERR" \
  "$HOST_ROOT/usr/libexec/onload/profiles/latency-best.opf:3:"
assert_contains "[latency-best] and what to do" "$ERR" "define it in the inventory's \"profiles\" instead"
assert_eq "[latency-best] config.json unchanged" "$sum" "$(sha256sum <"$B/config.json")"

make_bundle shim-nope --no-hook --env OCI_ONLOAD=onload --env OCI_ONLOAD_PROFILE=nope -- 'echo SHOULD-NOT-RUN'
shim_run
check_not "[unknown] create fails" test "$RC" -eq 0
assert_contains "[unknown] names the profiles there are" "$ERR" \
  'unknown profile "nope" for inventory'
assert_contains "[unknown] available list" "$ERR" "(available: latency, latency-best, throughput, x4-shared)"

echo "# --- 3. shim: a container that did not ask"
make_bundle shim-notasked --no-hook --env OCI_ONLOAD_PROFILE=nope -- "$PROBE"
sum=$(sha256sum <"$B/config.json")
shim_run
assert_eq "[not asked] create exits 0" 0 "$RC"
assert_eq "[not asked] config.json byte-identical" "$sum" "$(sha256sum <"$B/config.json")"
assert_eq "[not asked] no EF_*" "" "$(ef)"
assert_eq "[not asked] no LD_PRELOAD" unset "$(field LDP)"

# --- hook mode -------------------------------------------------------------------------
echo "# --- 4. hook mode: warns, starts, sets nothing"
IT_DEBUG=1 make_bundle hook-lat --env OCI_ONLOAD=onload --env OCI_ONLOAD_PROFILE=latency -- "$PROBE"
run_container
assert_eq "[hook] container runs" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[hook] no EF_* (a hook cannot set them)" "" "$(ef)"
assert_contains "[hook] libonload is preloaded (ld.so.preload)" "$(field DYN)" "SIMULATED libonload: preloaded"
log=$(cat "$T/logs/$CID.log" 2>/dev/null)
assert_contains "[hook] the log warns, naming the profile" "$log" \
  'profile "latency" (env OCI_ONLOAD_PROFILE=latency) not applied: a hook cannot change'
assert_contains "[hook] and says what to do" "$log" "use the runtime shim or CDI, or set these in the container: EF_POLL_USEC=100000"
plan=$("$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" plan --bundle "$B" 2>/dev/null)
assert_eq "[plan] profile and env" "latency 100000" "$(jq -r '"\(.activated[0].profile) \(.env.EF_POLL_USEC)"' <<<"$plan")"
assert_contains "[plan] the warning" "$(jq -r '.warnings[]' <<<"$plan")" 'profile "latency"'

IT_DEBUG=1 make_bundle hook-best --env OCI_ONLOAD=onload --env OCI_ONLOAD_PROFILE=latency-best -- 'echo SHOULD-NOT-RUN'
run_container
check_not "[hook latency-best] the container that named it is refused" test "$RC" -eq 0
assert_not_contains "[hook latency-best] it never ran" "$OUT" "SHOULD-NOT-RUN"
assert_contains "[hook latency-best] the line" "$ERR$(cat "$T/logs/$CID.log" 2>/dev/null)" "latency-best.opf:3:"

make_bundle hook-notasked --env OCI_ONLOAD_PROFILE=latency-best -- "$PROBE"
run_container
assert_eq "[hook not asked] runs" 0 "$RC"
assert_not_contains "[hook not asked] no libonload" "$(field DYN)" "SIMULATED libonload"

# --- device plugin ---------------------------------------------------------------------
echo "# --- 6. device plugin: --profile is the plugin's choice"
if [[ -n ${OCID_PLUGIN:-} ]]; then
  res=$("$OCID_PLUGIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" --profile latency resources --json 2>/dev/null)
  assert_eq "[plugin latency] onload delivers LD_PRELOAD and the profile, CDI device onload-latency" \
    "amd.com/onload=onload-latency $CDI_LIBONLOAD 100000 0" \
    "$(jq -r '.[] | select(.kubernetes == "amd.com/onload") | "\(.cdi) \(.env.LD_PRELOAD) \(.env.EF_POLL_USEC) \(.env.EF_TCP_FASTSTART_INIT)"' <<<"$res")"
  assert_eq "[plugin latency] zf preloads nothing: no profile" "amd.com/onload=zf {}" \
    "$(jq -c -r '.[] | select(.kubernetes == "amd.com/zf") | "\(.cdi) \(.env)"' <<<"$res")"
  res=$("$OCID_PLUGIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" --profile latency-best resources --json 2>/dev/null)
  assert_contains "[plugin latency-best] onload is unhealthy, with the line" \
    "$(jq -r '.[] | select(.kubernetes == "amd.com/onload") | .why' <<<"$res")" "latency-best.opf:3:"
  out=$("$OCID_PLUGIN" --host-root "$HOST_ROOT" --config-dir "$CONF_DIR" --profile ../x resources 2>&1)
  check_not "[plugin ../x] refused at start" test "$?" -eq 0
  assert_contains "[plugin ../x] says why" "$out" "not a profile name"
else
  info "SKIPPED section 6: the device plugin is not built (OCID_PLUGIN unset)"
fi

# --- podman CDI ------------------------------------------------------------------------
if ! command -v podman >/dev/null 2>&1; then
  info "SKIPPED section 5: podman is not installed"
  it_finish
fi
echo "# --- 5. podman CDI"
podman_setup
RUN_TAG=$(basename "$T" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')
KIND="oci-decorator.test/prof-$RUN_TAG"
SPEC=/etc/cdi/oci-decorator-prof-$RUN_TAG.json
it_track_new_dirs /etc/cdi
cdi_cleanup() { rm -f "$SPEC" /etc/cdi/oci-decorator-prof-"$RUN_TAG".*.preload; }
it_add_cleanup cdi_cleanup
mkdir -p "$T/empty-hooks.d" "$T/cdi-conf"
jq --arg k "$KIND" '.cdi_kind = $k' "$CONF_DIR/onload.json" >"$T/cdi-conf/onload.json"
out=$("$OCID_BIN" --host-root "$HOST_ROOT" --config-dir "$T/cdi-conf" cdi generate --output "$SPEC" 2>&1)
assert_eq "[cdi] generate exits 0" 0 "$?"
assert_eq "[cdi] devices: features, all, one per profile of the preloading feature" \
  "onload,zf,all,onload-latency,onload-throughput,onload-x4-shared" "$(jq -r '[.devices[].name] | join(",")' "$SPEC")"
assert_contains "[cdi] latency-best gets no device, with its line" "$out" "latency-best.opf:3:"

run_podman runc --hooks-dir "$T/empty-hooks.d" -- --device "$KIND=onload-latency" -- "$PROBE"
assert_eq "[cdi onload-latency] podman run exits 0" 0 "$RC"
[[ $RC -eq 0 ]] || dump_run
assert_eq "[cdi onload-latency] the profile's EF_*" "$LATENCY" "$(ef)"
assert_contains "[cdi onload-latency] libonload preloaded" "$(field DYN)" "SIMULATED libonload: preloaded"
assert_eq "[cdi onload-latency] through /etc/ld.so.preload: no LD_PRELOAD" unset "$(field LDP)"

run_podman runc --hooks-dir "$T/empty-hooks.d" -- --device "$KIND=onload-latency" \
  -e EF_POLL_USEC=7 -e LD_PRELOAD=/opt/mine/libmine.so -- "$PROBE"
assert_eq "[cdi own] podman run exits 0" 0 "$RC"
# Documented in oci-decorator(8), CDI: the spec's env replaces a variable of the same name.
assert_eq "[cdi own] podman 4.3 applies the spec's EF_POLL_USEC over the container's" \
  "$LATENCY" "$(ef)"
assert_eq "[cdi own] the container's LD_PRELOAD is kept" "/opt/mine/libmine.so" "$(field LDP)"
assert_contains "[cdi own] dyn-hello loads the container's own library" "$(field DYN)" "MINE preloaded"
assert_contains "[cdi own] and libonload too (/etc/ld.so.preload)" "$(field DYN)" \
  "SIMULATED libonload: preloaded into /usr/bin/dyn-hello"

it_finish
