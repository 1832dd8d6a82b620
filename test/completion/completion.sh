#!/bin/bash
# The shell completion scripts the build generates (build/completions), run
# in the real shells: the bash script is sourced, found through `complete -p`
# and its function called with COMP_WORDS/COMP_CWORD as bash sets them
# (bash splits "--opt=value" at '=', so such words come as "--opt" "=" "value");
# the zsh script is loaded both ways zsh loads it (autoloaded from $fpath as
# a #compdef file, and sourced) and its function called with $words and
# $CURRENT, the completion builtins (compadd, _describe, _files, compset)
# replaced by functions printing what they were given (which words the
# script offers); then zsh's real completion system, compinit in an
# interactive zsh in a pty (zsh_compsys.zsh), is sent LINE<TAB> and what the
# terminal shows is checked. No root needed.
#
# Environment: OCID_COMPLETIONS (the build's completions dir), OCID_PLUGIN
# (set when the device plugin is built: its scripts are checked too).
set -u
PASS=0
FAIL=0
ok()  { PASS=$((PASS + 1)); echo "ok   - $*"; }
nok() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
assert_eq() { if [[ $2 == "$3" ]]; then ok "$1"; else nok "$1 (expected '$2', got '$3')"; fi; }

DIR=${OCID_COMPLETIONS:?OCID_COMPLETIONS is not set: the build directory/completions}
for f in "$DIR/oci-decorator.bash" "$DIR/_oci-decorator"; do
  [[ -s $f ]] || { echo "ERROR: $f is missing or empty (build the oci-decorator-completions target)" >&2; exit 1; }
done
command -v zsh >/dev/null 2>&1 || { echo "ERROR: zsh is missing (see test/integration/PACKAGES)" >&2; exit 1; }
T=$(mktemp -d /tmp/ocid-completion.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/files/inventories.d"

# --- bash
source "$DIR/oci-decorator.bash"
spec=$(complete -p oci-decorator 2>&1)
assert_eq "bash: complete -p oci-decorator registers a function" "complete -F _oci_decorator oci-decorator" "$spec"

# bash_complete WORD...: the words offered for the last WORD, sorted, space-separated.
bash_complete() {
  local fn
  fn=$(complete -p "$1" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  "$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
  printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'
}
LEVELS="debug error info off trace warn"
ENGINES="containerd crio docker podman"
assert_eq "bash: oci-decorator set<TAB>" "setup" "$(bash_complete oci-decorator set)"
assert_eq "bash: oci-decorator <TAB> offers the subcommands (not the hidden completion)" \
  "cdi check hook plan runtime setup" "$(bash_complete oci-decorator '')"
assert_eq "bash: oci-decorator setup <TAB> offers the engines" "$ENGINES" \
  "$(bash_complete oci-decorator setup '')"
assert_eq "bash: oci-decorator setup c<TAB>" "containerd crio" "$(bash_complete oci-decorator setup c)"
assert_eq "bash: oci-decorator --log<TAB>" "--log-file --log-format --log-level --log-target" \
  "$(bash_complete oci-decorator --log)"
assert_eq "bash: oci-decorator --log-target <TAB> offers the targets" "file journald stderr syslog" \
  "$(bash_complete oci-decorator --log-target '')"
assert_eq "bash: oci-decorator --log-format <TAB> offers the formats" "json text" \
  "$(bash_complete oci-decorator --log-format '')"
assert_eq "bash: oci-decorator --log-level <TAB> offers the levels" "$LEVELS" \
  "$(bash_complete oci-decorator --log-level '')"
assert_eq "bash: oci-decorator --log-level=<TAB> ('=' breaks words)" "$LEVELS" \
  "$(bash_complete oci-decorator --log-level =)"
assert_eq "bash: oci-decorator --log-level=d<TAB>" "debug" "$(bash_complete oci-decorator --log-level = d)"
assert_eq "bash: a value is skipped: oci-decorator --log-level debug se<TAB>" "setup" \
  "$(bash_complete oci-decorator --log-level debug se)"
assert_eq "bash: ... and with '=': oci-decorator --log-level = debug s<TAB>" "setup" \
  "$(bash_complete oci-decorator --log-level = debug s)"
assert_eq "bash: oci-decorator --config-dir <TAB> completes file names" "$T/files/inventories.d" \
  "$(bash_complete oci-decorator --config-dir "$T/files/inv")"
setup_opts=$(bash_complete oci-decorator setup --)
for o in --dry-run --runtime-name --runtime-path --config --with-runtime --cdi --cdi-dir --containerd-config; do
  [[ " $setup_opts " == *" $o "* ]] && ok "bash: oci-decorator setup --<TAB> offers $o" \
    || nok "bash: oci-decorator setup --<TAB> offers $o (got: $setup_opts)"
done
[[ " $setup_opts " != *" --log-level "* ]] && ok "bash: setup's options are its own (no --log-level)" \
  || nok "bash: setup's options are its own (got: $setup_opts)"
assert_eq "bash: oci-decorator setup --dry-run <TAB> (a flag takes no value)" "$ENGINES" \
  "$(bash_complete oci-decorator setup --dry-run '')"
assert_eq "bash: oci-decorator hook <TAB> offers the stages" "createRuntime poststop prestart" \
  "$(bash_complete oci-decorator hook '')"
assert_eq "bash: oci-decorator cdi <TAB>" "generate" "$(bash_complete oci-decorator cdi '')"
assert_eq "bash: oci-decorator cdi generate --output<TAB>" "--output --output-dir" \
  "$(bash_complete oci-decorator cdi generate --output)"
assert_eq "bash: oci-decorator plan <TAB> (no positional: its options)" "--bundle --help -h" \
  "$(bash_complete oci-decorator plan '')"

# --- zsh: the same questions, in zsh.
ZSH_STUBS='
_describe() { local a=${@[-1]}; print -rl -- ${${(P)a}%%:*} }
compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -rl -- "$@" }
_files() { print -r -- FILES }
compset() { : }
compdef() { print -r -- "COMPDEF $*" }
'
# zsh_complete FILE WORD...: the words the autoloaded FILE offers for the last WORD.
zsh_complete() {
  local file=$1
  shift
  zsh -f -c "$ZSH_STUBS"'
    fpath=("$1" $fpath)
    autoload -Uz "$2"
    shift 2
    words=("$@")
    CURRENT=$#
    '"${file##*/}"'
  ' zsh "$(dirname "$file")" "${file##*/}" "$@" 2>&1 | sort | tr '\n' ' ' | sed 's/ $//'
}
Z=$DIR/_oci-decorator
out=$(zsh -n "$Z" 2>&1)
assert_eq "zsh -n parses $Z" "" "$out"
assert_eq "zsh: sourced, the script registers itself with compdef" "COMPDEF _oci-decorator oci-decorator" \
  "$(zsh -f -c "$ZSH_STUBS"' source "$1"' zsh "$Z" 2>&1)"
assert_eq "zsh: oci-decorator set<TAB>" "cdi check hook plan runtime setup" "$(zsh_complete "$Z" oci-decorator set)"
assert_eq "zsh: oci-decorator setup <TAB> offers the engines" "$ENGINES" "$(zsh_complete "$Z" oci-decorator setup '')"
assert_eq "zsh: oci-decorator --log-level <TAB>" "$LEVELS" "$(zsh_complete "$Z" oci-decorator --log-level '')"
assert_eq "zsh: oci-decorator --log-level=<TAB>" "$LEVELS" "$(zsh_complete "$Z" oci-decorator --log-level=)"
assert_eq "zsh: a value is skipped: oci-decorator --log-level debug <TAB>" "cdi check hook plan runtime setup" \
  "$(zsh_complete "$Z" oci-decorator --log-level debug '')"
assert_eq "zsh: oci-decorator --config-dir <TAB> completes file names" "FILES" \
  "$(zsh_complete "$Z" oci-decorator --config-dir '')"
assert_eq "zsh: oci-decorator cdi generate --o<TAB> offers cdi generate's options" \
  "--cdi-version --help --inventory --output --output-dir -h -o" "$(zsh_complete "$Z" oci-decorator cdi generate --o)"
assert_eq "zsh: oci-decorator hook <TAB>" "createRuntime poststop prestart" "$(zsh_complete "$Z" oci-decorator hook '')"

# zsh's real completion system (compinit, an interactive zsh in a pty): what
# it lists or inserts for LINE<TAB>, from the #compdef file in $fpath.
# zsh_compsys LINE WORD: the terminal's text up to WORD (empty if it never came).
zsh_compsys() {
  timeout 20 zsh -f "$(dirname "${BASH_SOURCE[0]}")/zsh_compsys.zsh" "$DIR" "$1" "$2" 2>&1 | tail -3
}
out=$(zsh_compsys 'oci-decorator setup ' podman)
for e in $ENGINES; do
  [[ $out == *"$e"* ]] && ok "zsh compsys: oci-decorator setup <TAB> lists $e" \
    || nok "zsh compsys: oci-decorator setup <TAB> lists $e (terminal: $(tr '\n' '|' <<<"$out"))"
done
out=$(zsh_compsys 'oci-decorator --log-level ' warn)
for l in $LEVELS; do
  [[ $out == *"$l"* ]] && ok "zsh compsys: oci-decorator --log-level <TAB> lists $l" \
    || nok "zsh compsys: oci-decorator --log-level <TAB> lists $l (terminal: $(tr '\n' '|' <<<"$out"))"
done
out=$(zsh_compsys 'oci-decorator se' setup)
[[ $out == *"oci-decorator setup"* ]] && ok "zsh compsys: oci-decorator se<TAB> inserts setup" \
  || nok "zsh compsys: oci-decorator se<TAB> inserts setup (terminal: $(tr '\n' '|' <<<"$out"))"
out=$(zsh_compsys 'oci-decorator cdi generate --output' output-dir)
[[ $out == *"--output-dir"* ]] && ok "zsh compsys: cdi generate --output<TAB> lists --output-dir" \
  || nok "zsh compsys: cdi generate --output<TAB> lists --output-dir (terminal: $(tr '\n' '|' <<<"$out"))"

# --- the device plugin's scripts, where it is built
if [[ -n ${OCID_PLUGIN:-} ]]; then
  P=oci-decorator-device-plugin
  source "$DIR/$P.bash"
  assert_eq "bash: complete -p $P" "complete -F _oci_decorator_device_plugin $P" "$(complete -p $P 2>&1)"
  assert_eq "bash: $P <TAB> offers its modes" "kubernetes nomad probe resources" "$(bash_complete $P '')"
  assert_eq "bash: $P kubernetes --allocate <TAB>" "both cdi mounts" "$(bash_complete $P kubernetes --allocate '')"
  assert_eq "bash: $P --log-level <TAB>" "$LEVELS" "$(bash_complete $P --log-level '')"
  assert_eq "bash: $P resources --<TAB>" "--help --json" "$(bash_complete $P resources --)"
  assert_eq "bash: the hook's completion is still its own" "setup" "$(bash_complete oci-decorator set)"
  assert_eq "zsh -n parses _$P" "" "$(zsh -n "$DIR/_$P" 2>&1)"
  assert_eq "zsh: $P kubernetes --allocate <TAB>" "both cdi mounts" \
    "$(zsh_complete "$DIR/_$P" $P kubernetes --allocate '')"
else
  echo "#      no device plugin in this build: its completions are not checked"
fi

echo "$PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
