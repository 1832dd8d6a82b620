# shellcheck shell=bash
# Bundles for runc, and OCI images for engines that take images.
# (Sourced by ../lib.sh, which sets SRC and the tally.)

# make_bundle NAME [options] -- SCRIPT
#   --env K=V           add to process.env (repeatable)
#   --annotation K=V    add to annotations (repeatable)
#   --rootfs DIR        use DIR as root.path as is (default: a copy of $BASE_ROOTFS)
#   --host-root DIR     hook --host-root (default $HOST_ROOT)
#   --config-dir DIR    hook --config-dir (default $CONF_DIR)
#   --state-dir DIR     hook --state-dir (default $STATE_DIR)
#   --cap CAP           add a capability (e.g. CAP_MKNOD) to all sets
#   --readonly          root.readonly true (default false, like docker/podman)
#   --jq FILTER         extra jq filter applied to config.json last
#   --no-hook           register no hooks
# Sets B (bundle dir), CID (container id), ROOTFS (rootfs path).
make_bundle() {
  local name=$1; shift
  local envs=() annos=() rootfs="" hr=$HOST_ROOT cd=$CONF_DIR sd=$STATE_DIR caps=() ro=false
  local extra='.' hook=1
  while [[ $# -gt 0 ]]; do
    case $1 in
      --env) envs+=("$2"); shift 2 ;;
      --annotation) annos+=("$2"); shift 2 ;;
      --rootfs) rootfs=$2; shift 2 ;;
      --host-root) hr=$2; shift 2 ;;
      --config-dir) cd=$2; shift 2 ;;
      --state-dir) sd=$2; shift 2 ;;
      --cap) caps+=("$2"); shift 2 ;;
      --readonly) ro=true; shift ;;
      --jq) extra=$2; shift 2 ;;
      --no-hook) hook=0; shift ;;
      --) shift; break ;;
      *) die "make_bundle: unknown option $1" ;;
    esac
  done
  local script=${1:-true}
  CID="ocid-it-$name-$$-$RANDOM"
  B=$T/bundles/$CID
  mkdir -p "$B"
  if [[ -z $rootfs ]]; then
    rootfs=$B/rootfs
    cp -a "$BASE_ROOTFS" "$rootfs"
  fi
  ROOTFS=$rootfs
  (cd "$B" && runc spec) || die "runc spec failed"

  local hookargs=(--host-root "$hr" --config-dir "$cd" --state-dir "$sd")
  if [[ ${IT_DEBUG:-0} == 1 ]]; then
    hookargs+=(--log-level debug --log-file "$T/logs/$CID.log")
  fi
  local envj annoj capsj argsj
  envj=$(printf '%s\n' "PATH=/usr/sbin:/usr/bin:/sbin:/bin" "${envs[@]}" | jq -R . | jq -s .)
  if [[ ${#annos[@]} -gt 0 ]]; then
    annoj=$(printf '%s\n' "${annos[@]}" | jq -R 'index("=") as $i | {(.[:$i]): .[$i+1:]}' | jq -s 'add')
  else
    annoj='{}'
  fi
  capsj=$(printf '%s\n' "${caps[@]}" | jq -R 'select(. != "")' | jq -s .)
  argsj=$(printf '%s\n' "${hookargs[@]}" | jq -R . | jq -s .)
  # OCID_HOOK_WRAPPER=PROG: every hook runs as PROG <oci-decorator> <argv...>
  # (PROG execs its first argument with the rest as argv), e.g. enosys_exec
  # for the legacy-kernel runs.
  local hpath=$OCID_BIN hprefix='[]'
  if [[ -n ${OCID_HOOK_WRAPPER:-} ]]; then
    hpath=$OCID_HOOK_WRAPPER
    hprefix=$(jq -n --arg w "$OCID_HOOK_WRAPPER" --arg b "$OCID_BIN" '[$w, $b]')
  fi

  jq --arg rootfs "$rootfs" --argjson ro "$ro" --arg script "$script" \
     --argjson env "$envj" --argjson anno "$annoj" --argjson caps "$capsj" \
     --arg bin "$hpath" --argjson hpre "$hprefix" --argjson hargs "$argsj" --argjson hook "$hook" \
     --arg cg "/$CG_PARENT/$CID" '
    .process.terminal = false
    | .process.args = ["sh", "-c", $script]
    | .process.env = $env
    | .root = {path: $rootfs, readonly: $ro}
    | .hostname = "ocid-it"
    | .linux.cgroupsPath = $cg
    | (if ($anno | length) > 0 then .annotations = $anno else . end)
    | .process.capabilities |= with_entries(.value = ((.value + $caps) | unique))
    | (if $hook == 1 then .hooks = {
          prestart: [{path: $bin, args: ($hpre + ["oci-decorator"] + $hargs + ["hook", "prestart"]),
                      env: ["PATH=/usr/bin:/bin"]}],
          poststop: [{path: $bin, args: ($hpre + ["oci-decorator"] + $hargs + ["hook", "poststop"]),
                      env: ["PATH=/usr/bin:/bin"]}]}
       else del(.hooks) end)
  ' "$B/config.json" >"$B/config.json.new" || die "jq edit of config.json failed"
  if [[ $extra != . ]]; then
    jq "$extra" "$B/config.json.new" >"$B/config.json" || die "jq filter failed: $extra"
    rm -f "$B/config.json.new"
  else
    mv "$B/config.json.new" "$B/config.json"
  fi
}

# make_oci_image TAR ROOTFS REF=CMDJSON...: an OCI image layout tarball
# (image-spec image-layout.md: oci-layout, index.json, blobs/sha256) with one
# uncompressed layer, ROOTFS, and one image per REF=CMDJSON (e.g.
# 'docker.io/local/bb:1=["sh"]'): its own config (Cmd CMDJSON, amd64/linux)
# and manifest, named in index.json with containerd's
# io.containerd.image.name annotation, which `ctr images import` uses.
make_oci_image() {
  local tar=$1 rootfs=$2; shift 2
  local dir=$tar.layout spec ref cmd layer lsize config csize manifest msize manifests='[]'
  _oci_blob() {  # FILE: moved into the blobs as sha256/<digest>; prints the digest
    local d
    d=$(sha256sum <"$1" | cut -c1-64)
    mv "$1" "$dir/blobs/sha256/$d"
    echo "$d"
  }
  rm -rf "$dir"
  mkdir -p "$dir/blobs/sha256"
  tar -C "$rootfs" -cf "$dir/layer" . || die "make_oci_image: tar of $rootfs failed"
  lsize=$(stat -c %s "$dir/layer")
  layer=$(_oci_blob "$dir/layer")
  for spec in "$@"; do
    ref=${spec%%=*}
    cmd=${spec#*=}
    jq -cnj --arg l "sha256:$layer" --argjson cmd "$cmd" '{architecture: "amd64", os: "linux",
        config: {Env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], Cmd: $cmd},
        rootfs: {type: "layers", diff_ids: [$l]}}' >"$dir/config" || die "make_oci_image: bad CMDJSON in $spec"
    csize=$(stat -c %s "$dir/config")
    config=$(_oci_blob "$dir/config")
    jq -cnj --arg c "sha256:$config" --argjson cs "$csize" --arg l "sha256:$layer" --argjson ls "$lsize" '{
        schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $c, size: $cs},
        layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]}' >"$dir/manifest"
    msize=$(stat -c %s "$dir/manifest")
    manifest=$(_oci_blob "$dir/manifest")
    manifests=$(jq -c --arg m "sha256:$manifest" --argjson ms "$msize" --arg name "$ref" '. + [{
        mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $m, size: $ms,
        annotations: {"io.containerd.image.name": $name,
                      "org.opencontainers.image.ref.name": ($name | sub(".*:"; ""))}}]' <<<"$manifests")
  done
  jq -cn --argjson m "$manifests" '{schemaVersion: 2, manifests: $m}' >"$dir/index.json"
  echo '{"imageLayoutVersion": "1.0.0"}' >"$dir/oci-layout"
  tar -C "$dir" -cf "$tar" oci-layout index.json blobs || die "make_oci_image: tar of the layout failed"
  rm -rf "$dir"
}
