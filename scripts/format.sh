#!/usr/bin/env bash
# format.sh [--check]
#
# Formats the C and C++ sources git knows or would add (src/ test/ bench/
# fuzz/ tools/: *.c *.cc *.h; tracked, and untracked but not ignored, so a
# new file is checked before its first commit) in place with clang-format and the repository's .clang-format.
# With --check, changes nothing and exits 1 when a file would change, listing
# those files. Not formatted: what is not ours or not C++ source: the .proto
# files (upstream's, byte-identical), test/cri/proto, the fuzz corpora, and
# anything generated (that lives in the build directory, which is untracked).
#
# Environment: CLANG_FORMAT (default clang-format; CI has version 14).
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
case ${1:-} in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}

mapfile -t files < <(git ls-files --cached --others --exclude-standard -- 'src/*.c' 'src/*.cc' 'src/*.h' 'test/*.c' 'test/*.cc' 'test/*.h' \
                       'bench/*.c' 'bench/*.cc' 'bench/*.h' 'fuzz/*.c' 'fuzz/*.cc' 'fuzz/*.h' \
                       'tools/*.c' 'tools/*.cc' 'tools/*.h' |
                     grep -Ev '(^|/)proto/|^fuzz/corpus/' || true)
((${#files[@]})) || { echo "format: no sources (not a git checkout?)" >&2; exit 2; }

if ((check == 0)); then
  "$CLANG_FORMAT" --style=file -i "${files[@]}"
  echo "format: ${#files[@]} files formatted"
  exit 0
fi

bad=()
for f in "${files[@]}"; do
  if ! "$CLANG_FORMAT" --style=file "$f" | cmp -s "$f" -; then
    bad+=("$f")
  fi
done
if ((${#bad[@]})); then
  printf 'format: would change %s\n' "${bad[@]}" >&2
  echo "format: ${#files[@]} files, ${#bad[@]} not formatted (run scripts/format.sh)" >&2
  exit 1
fi
echo "format: ${#files[@]} files, all formatted"
