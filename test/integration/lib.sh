# shellcheck shell=bash
# Shared helpers for oci-decorator's root integration tests (sourced, bash).
#
# Environment:
#   OCID_BIN         the oci-decorator binary (set by CTest)
#   OCID_SOURCE_DIR  the source tree (set by CTest; defaults to ../.. of this file)
#   IT_DEBUG=1       run the hook with --log-level debug --log-file, print logs on failure
#   IT_KEEP=1        keep the temp dir (for debugging)
#   OCID_HOOK_WRAPPER  run make_bundle's hooks through this program (see make_bundle)
#
# Each script: source lib.sh; it_setup; ... assertions ...; it_finish
# Exit codes: 0 pass, 1 fail, 77 skip (not root, or runc missing).

IT_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=${OCID_SOURCE_DIR:-$(cd "$IT_LIB_DIR/../.." && pwd)}
IT_PASS=0
IT_FAIL=0
IT_IDS=()
IT_NAME=$(basename "$0" .sh)

# The helpers, one file per concern (lib/; any order would do).
# shellcheck source=lib/report.sh
source "$IT_LIB_DIR/lib/report.sh"      # the tally, ok/nok/check, the assert_* family
# shellcheck source=lib/suite.sh
source "$IT_LIB_DIR/lib/suite.sh"       # it_setup (skip or die), cleanup at exit, it_finish
# shellcheck source=lib/host.sh
source "$IT_LIB_DIR/lib/host.sh"        # mount table, snapshots, cgroups: the host left as found
# shellcheck source=lib/onload_sim.sh
source "$IT_LIB_DIR/lib/onload_sim.sh"  # the simulated Onload install, what a container sees
# shellcheck source=lib/bundle.sh
source "$IT_LIB_DIR/lib/bundle.sh"      # runc bundles (make_bundle), OCI image tarballs
# shellcheck source=lib/runc.sh
source "$IT_LIB_DIR/lib/runc.sh"        # run_container and its output
# shellcheck source=lib/crun.sh
source "$IT_LIB_DIR/lib/crun.sh"
# shellcheck source=lib/podman.sh
source "$IT_LIB_DIR/lib/podman.sh"
# shellcheck source=lib/engines.sh
source "$IT_LIB_DIR/lib/engines.sh"     # private dockerd and containerd
# shellcheck source=lib/shim.sh
source "$IT_LIB_DIR/lib/shim.sh"        # the runtime shim, as containerd drives it
# shellcheck source=lib/plugin.sh
source "$IT_LIB_DIR/lib/plugin.sh"      # the device plugin suites, stand-ins in test/standins
# shellcheck source=lib/package.sh
source "$IT_LIB_DIR/lib/package.sh"     # the package tests' build dir
