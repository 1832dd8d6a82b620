#!/usr/bin/env bash
# fuzz.sh [SECONDS]
# fuzz.sh --build-only
#
# Builds the libFuzzer targets of fuzz/ in build-fuzz (clang, with ASan and
# UBSan over the whole tree) and runs each for SECONDS (default 30) on its seed
# corpus (fuzz/corpus/<target>, read only) plus the inputs found by earlier
# runs (build-fuzz/fuzz-corpus/<target>). Exits non-zero on any finding: a
# crash, a sanitizer report, a failed invariant, a leak, a timeout (5 s per
# input) or an input using more than 2 GB. The input that did it is saved in
# build-fuzz/fuzz-artifacts/<target>/, the fuzzer's output in
# build-fuzz/fuzz-logs/<target>.log. Long runs and triage: fuzz/README.md.
#
# --build-only builds the targets and runs none (.ci/run builds them at idle
# priority while the sanitizer tests run, then runs them).
#
# Environment: OCID_FUZZ_BUILD_DIR (default build-fuzz), OCID_FUZZ_TARGETS
# (default every fuzz/*_fuzz.cc), CC/CXX are ignored (libFuzzer is clang's).
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=0
if [[ ${1:-} == --build-only ]]; then build_only=1; shift; fi
budget=${1:-30}
[[ $budget =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [SECONDS] | --build-only" >&2; exit 2; }
BUILD=${OCID_FUZZ_BUILD_DIR:-build-fuzz}
command -v clang++ >/dev/null || { echo "$0: needs clang++ and libclang-rt (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }

targets=()
if [[ -n ${OCID_FUZZ_TARGETS:-} ]]; then
  read -ra targets <<<"$OCID_FUZZ_TARGETS"
else
  for f in fuzz/*_fuzz.cc; do targets+=("$(basename "$f" .cc)"); done
fi

echo "fuzz: building ${targets[*]} in $BUILD"
mkdir -p "$BUILD"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DOCID_FUZZ=ON -DBUILD_TESTING=OFF >"$BUILD/fuzz-configure.log" 2>&1 \
  || { tail -30 "$BUILD/fuzz-configure.log"; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}" >"$BUILD/fuzz-build.log" 2>&1 \
  || { tail -40 "$BUILD/fuzz-build.log"; exit 1; }
if ((build_only)); then echo "fuzz: built ${targets[*]}"; exit 0; fi

# The longest input worth trying per target: a little above the real ones
# (runc's state is ~200 bytes, a runc/docker config.json 3-10 kB, an
# inventory 1-2 kB); longer inputs only slow the search down. The request
# reader feeds each input byte by byte, so its inputs stay shorter.
max_len_of() {
  case $1 in
    oci_state_fuzz) echo 4096 ;;
    bundle_config_fuzz) echo 16384 ;;
    request_reader_fuzz) echo 8192 ;;
    json_stream_fuzz) echo 8192 ;;
    inventory_fuzz) echo 8192 ;;
    *) echo 4096 ;;
  esac
}

failed=()
for t in "${targets[@]}"; do
  bin=$BUILD/fuzz/$t
  [[ -x $bin ]] || { echo "fuzz: $bin was not built" >&2; failed+=("$t"); continue; }
  corpus=$BUILD/fuzz-corpus/$t
  artifacts=$BUILD/fuzz-artifacts/$t
  log=$BUILD/fuzz-logs/$t.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")" "fuzz/corpus/$t"
  args=(-max_total_time="$budget" -max_len="$(max_len_of "$t")" -timeout=5 -rss_limit_mb=2048
        -print_final_stats=1 -artifact_prefix="$artifacts/")
  dict=fuzz/${t%_fuzz}.dict
  [[ -f $dict ]] && args+=(-dict="$dict")
  echo "fuzz: $t for ${budget}s"
  rc=0
  "$bin" "${args[@]}" "$corpus" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  if ((rc == 0)); then
    stats=$(grep -E '^stat::(number_of_executed_units|new_units_added|peak_rss_mb)' "$log" \
              | sed 's/^stat:://' | tr -s ' \n' ' ')
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
    echo "fuzz: $t ok ($cov; $stats; corpus $(find "$corpus" -type f | wc -l) inputs)"
  else
    echo "fuzz: $t FOUND SOMETHING (exit $rc); log $log, input(s):"
    find "$artifacts" -type f -newer "$BUILD/fuzz-build.log" -printf '  %p\n'
    grep -E -m1 -A30 'ERROR: |runtime error:|invariant failed|deadly signal' "$log" | head -40 | sed 's/^/  | /'
    failed+=("$t")
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (fuzz/README.md: how to reproduce and minimize)"
  exit 1
fi
echo "fuzz: no findings in ${#targets[@]} targets, ${budget}s each"
