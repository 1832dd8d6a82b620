#!/usr/bin/env bash
# Installs the Debian packages needed to build oci-decorator and run its
# tests (real runc, busybox-static for test images, clang for the sanitizer
# build and the fuzzers, clang-tidy and clang-format for the lint and format
# scripts). Idempotent; root only.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

packages=(cmake g++ make pkg-config
          nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev libseccomp-dev doctest-dev
          # the device plugin (src/plugin): gRPC, protobuf, msgpack (Nomad's
          # config), dpkg-shlibdeps for its package's dependencies
          libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
          libmsgpack-cxx-dev dpkg-dev
          # deploy/kubernetes checked (test/deploy): yamllint and the
          # Kubernetes API schema of the python client's models
          yamllint python3-kubernetes python3-yaml
          runc busybox-static jq util-linux man-db
          # the sanitizer build (build-asan) and the fuzzers (scripts/fuzz.sh):
          # clang, its ASan/UBSan/libFuzzer runtimes, llvm-symbolizer
          clang libclang-rt-14-dev llvm
          # scripts/lint.sh and scripts/format.sh
          clang-tidy clang-format)
if [[ -f test/integration/PACKAGES ]]; then
  while read -r p; do [[ -n "$p" && "$p" != \#* ]] && packages+=("$p"); done < test/integration/PACKAGES
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}" < /dev/null
fi
