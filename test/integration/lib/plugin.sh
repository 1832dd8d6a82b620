# shellcheck shell=bash
# The device plugin suites: the plugin binary and the kubelet and Nomad
# stand-ins (test/standins).
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# plugin_suite STANDIN: what a device plugin suite needs before it starts:
# the plugin binary (skipped, saying why, where the build has none), python3
# with gRPC and protobuf and protoc for the stand-in test/standins/STANDIN
# (built from the plugin's own .proto files). Sets PY and STANDIN.
plugin_suite() {
  [[ -n ${OCID_PLUGIN:-} ]] || \
    skip_all "OCID_PLUGIN is not set: the build has no oci-decorator-device-plugin (OCID_DEVICE_PLUGIN=OFF)"
  [[ -x $OCID_PLUGIN ]] || die "OCID_PLUGIN=$OCID_PLUGIN is not executable"
  PY=/usr/bin/python3
  $PY -c 'import grpc, google.protobuf' 2>/dev/null || \
    die "python3-grpcio and python3-protobuf are missing (see test/integration/PACKAGES)"
  command -v protoc >/dev/null 2>&1 || die "protoc is missing (protobuf-compiler, see test/integration/PACKAGES)"
  STANDIN=$SRC/test/standins/$1
}

# wait_socket PATH: true once PATH is a socket (within 5 s), for a server
# started in the background (the device plugin's endpoints).
wait_socket() {
  local i
  for i in $(seq 1 100); do [[ -S $1 ]] && return 0; sleep 0.05; done
  return 1
}
