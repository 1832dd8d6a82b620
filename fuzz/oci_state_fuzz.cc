// ParseOciState on arbitrary bytes (the state a runtime writes on the hook's
// stdin), and what the hook derives from a parsed state: the container id's
// safety check and the rootfs path.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bundle_config.h"
#include "fuzz_check.h"
#include "oci_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ocid::OciState st;
  ocid::Error err;
  if (!ocid::ParseOciState(bytes, &st, &err)) {
    ocid_fuzz::CheckErrorLine(err);
    return 0;
  }
  // What ParseOciState promises (oci_state.h).
  FUZZ_CHECK(!st.id.empty());
  FUZZ_CHECK(!st.bundle.empty() && st.bundle[0] == '/');
  FUZZ_CHECK(st.pid >= 0 && st.pid <= (1 << 22));

  if (ocid::IsSafeContainerId(st.id)) {
    FUZZ_CHECK(st.id.size() <= 128 && st.id != "." && st.id != "..");
    FUZZ_CHECK(st.id.find('/') == std::string::npos);
    FUZZ_CHECK(st.id.find('\0') == std::string::npos);
  }

  // The rootfs from crun's state.root or config.json's root.path: absolute
  // whenever the bundle is.
  for (const char* root_path : {"rootfs", "/abs/rootfs", "./", "."}) {
    std::string rootfs = ocid::RootfsPath(st.bundle, st.root, root_path);
    FUZZ_CHECK(!rootfs.empty() && rootfs[0] == '/');
  }
  return 0;
}
