#!/bin/bash
# make-rootfs.sh DIR
#
# Builds a minimal container root filesystem for oci-decorator's integration
# tests and demo (no image registry needed):
#   - busybox-static at DIR/bin/busybox, with applet symlinks in DIR/bin
#   - the host's dynamic loader and libc at the same paths, and
#     DIR/usr/bin/dyn-hello, a dynamically linked program (test/fixtures/dyn_hello.c),
#     so that /etc/ld.so.preload inside the container can be observed
#   - empty DIR/etc, dev, proc, sys, tmp, run (no usr/lib64: the hook must create
#     mountpoints itself)
# Needs: busybox-static (/bin/busybox must be static), cc. Idempotent.
set -euo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 DIR" >&2; exit 2; }
DIR=$1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIXTURES=$HERE/../test/fixtures

BUSYBOX=
for b in /bin/busybox /usr/bin/busybox; do
  if [[ -x $b ]] && ! ldd "$b" >/dev/null 2>&1; then BUSYBOX=$b; break; fi
done
[[ -n $BUSYBOX ]] || { echo "$0: needs a static busybox (apt-get install busybox-static)" >&2; exit 1; }
command -v cc >/dev/null || { echo "$0: needs a C compiler (cc)" >&2; exit 1; }

mkdir -p "$DIR"/{bin,sbin,etc,dev,proc,sys,tmp,run,root,usr/bin}
chmod 1777 "$DIR/tmp"
install -m 0755 "$BUSYBOX" "$DIR/bin/busybox"
for applet in sh ash ls cat echo grep mount umount stat test [ readlink realpath sleep true false \
              head tail wc env id dd mkdir rmdir touch rm cp mv ln chmod sort uniq tr cut sed awk \
              find printf sha256sum md5sum ps uname hostname basename dirname xargs tee seq date \
              od hexdump mknod which diff cmp expr kill pwd; do
  ln -sfn busybox "$DIR/bin/$applet"
done

# Dynamic loader and libc, at the same paths as on the host (symlink + target).
copy_with_links() {  # host path (possibly a symlink chain)
  local p=$1
  while :; do
    mkdir -p "$DIR$(dirname "$p")"
    if [[ -L $p ]]; then
      local t
      t=$(readlink "$p")
      ln -sfn "$t" "$DIR$p"
      [[ $t == /* ]] || t=$(dirname "$p")/$t
      p=$t
    else
      cp -f --preserve=mode "$p" "$DIR$p"
      return 0
    fi
  done
}
LOADER=/lib64/ld-linux-x86-64.so.2
[[ -e $LOADER ]] || { echo "$0: host has no $LOADER" >&2; exit 1; }
copy_with_links "$LOADER"

# Build dyn-hello and copy every library it needs (normally just libc.so.6).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/dyn-hello" "$FIXTURES/dyn_hello.c"
install -m 0755 "$tmp/dyn-hello" "$DIR/usr/bin/dyn-hello"
while read -r lib; do
  [[ -n $lib ]] && copy_with_links "$lib"
done < <(ldd "$tmp/dyn-hello" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')

# The usual merged-/usr style symlink would hide the test's planted files, so
# /lib and /usr/lib stay real directories (the copies above created them).
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$DIR/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$DIR/etc/group"
echo "oci-decorator test rootfs (busybox + dyn-hello)" >"$DIR/etc/ROOTFS-README"
