# shellcheck shell=bash
# The Debian and RPM package tests' build dir.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# package_build_dir: sets BUILD to the build dir cpack runs in: OCID_BUILD_DIR
# when it installs to /usr, else a configure of the sources in $T/build.
package_build_dir() {
  local prefix
  BUILD=${OCID_BUILD_DIR:-}
  [[ -n $BUILD && -f $BUILD/CMakeCache.txt ]] || die "OCID_BUILD_DIR is not a configured build dir: '$BUILD'"
  prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
  if [[ $prefix != /usr ]]; then
    info "build dir $BUILD has CMAKE_INSTALL_PREFIX=$prefix: configuring $T/build with /usr"
    cmake -S "$SRC" -B "$T/build" -DCMAKE_INSTALL_PREFIX=/usr -DBUILD_TESTING=OFF >"$T/logs/cmake.log" 2>&1 \
      || { tail -20 "$T/logs/cmake.log"; die "cmake configure of $T/build failed"; }
    BUILD=$T/build
  fi
}
