# shellcheck shell=bash
# Reporting and assertions: the pass/fail tally of a script, and the
# checks that add to it.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

ok()  { IT_PASS=$((IT_PASS + 1)); echo "ok   - $*"; }
nok() { IT_FAIL=$((IT_FAIL + 1)); echo "FAIL - $*"; }
info() { echo "#      $*"; }
skip_all() { echo "SKIP $IT_NAME: $*"; exit 77; }
die() { echo "ERROR $IT_NAME: $*" >&2; exit 1; }

# check DESC CMD...: passes when CMD succeeds.
check() { local d=$1; shift; if "$@"; then ok "$d"; else nok "$d"; fi; }
# check_not DESC CMD...: passes when CMD fails.
check_not() { local d=$1; shift; if "$@"; then nok "$d"; else ok "$d"; fi; }
# quiet CMD...: runs CMD with its output discarded (for check/check_not).
quiet() { "$@" >/dev/null 2>&1; }
assert_eq() {  # DESC EXPECTED ACTUAL (multi-line values are shown as a diff)
  if [[ $2 == "$3" ]]; then
    ok "$1"
  elif [[ $2 == *$'\n'* || $3 == *$'\n'* ]]; then
    nok "$1 (differs, expected < > actual:)"
    diff <(echo "$2") <(echo "$3") | grep '^[<>]' | head -20 | sed 's/^/#        /'
  else
    nok "$1 (expected '$2', got '$3')"
  fi
}
assert_contains() {  # DESC HAYSTACK NEEDLE   (fixed string)
  if grep -qF -- "$3" <<<"$2"; then ok "$1"; else nok "$1 (no '$3' in: $(head -c 600 <<<"$2" | tr '\n' '|'))"; fi
}
assert_not_contains() {  # DESC HAYSTACK NEEDLE
  if grep -qF -- "$3" <<<"$2"; then nok "$1 (found '$3': $(grep -F -- "$3" <<<"$2" | head -3 | tr '\n' '|'))"; else ok "$1"; fi
}
assert_match() {  # DESC HAYSTACK ERE
  if grep -qE -- "$3" <<<"$2"; then ok "$1"; else nok "$1 (no /$3/ in: $(head -c 600 <<<"$2" | tr '\n' '|'))"; fi
}
assert_no_match() {  # DESC HAYSTACK ERE
  if grep -qE -- "$3" <<<"$2"; then nok "$1 (matched /$3/: $(grep -E -- "$3" <<<"$2" | head -3 | tr '\n' '|'))"; else ok "$1"; fi
}

# In the sanitizer build a report from the hook fails the container, but a
# test that only expects a refusal would not notice: any report in the
# runtime's stderr is a failure of its own.
sanitizer_check() {  # TEXT
  [[ ${OCID_SANITIZED:-0} == 1 ]] || return 0
  if grep -qE 'Sanitizer|:[0-9]+: runtime error:' <<<"$1"; then
    nok "no sanitizer report from the hook (${CID:-?})"
    head -40 <<<"$1" | sed 's/^/#      /'
  fi
}
