// Who owns what the hook creates inside a container with a user namespace.
//
// The hook creates mountpoints (empty files and directories) in the rootfs
// and on the container's /dev. Created as host root, they belong to nobody
// inside a user namespace (uid 65534 in `ls -ln`), and on a filesystem the
// container's user namespace owns (runc's and crun's /dev tmpfs) the kernel
// refuses to create them at all: an inode's
// owner must be mapped in the filesystem's user namespace, and host uid 0
// is not (EOVERFLOW). So while it creates them, the hook's thread takes the
// filesystem ids of the container's root (the host ids its uid and gid 0
// map to), exactly as if that root had created them, and keeps its
// capabilities: which directories may be entered and written is decided as
// before, only the new inodes' owner changes.
//
// The ids come from the kernel (/proc/<pid>/uid_map, gid_map of the
// container's process), not from config.json: a joined user namespace has
// no mappings in config.json, and the kernel's are the ones in force.
#pragma once
#include <linux/capability.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bundle_config.h"
#include "error.h"

namespace ocid {

// The host ids of the container's root; (0, 0) without a user namespace.
struct ContainerRoot {
  // The process is in another user namespace than the hook.
  bool user_namespace = false;
  uint32_t uid = 0, gid = 0;  // host ids of its uid 0 and gid 0
};

// Parses the text of /proc/<pid>/uid_map or gid_map: lines of "inside
// outside count" (the format user_namespaces(7) describes). `what` names the
// file in errors.
bool ParseIdMap(std::string_view text, const std::string& what, std::vector<IdMapping>* out,
                Error* err);

// The ids of the root of the process whose /proc/<pid> directory is
// `proc_fd` (`proc_path` names it in errors). Refuses a user namespace that
// maps no host id to uid 0 or to gid 0: nothing could be created on its
// /dev, and the hook will not guess another owner.
bool FindContainerRoot(int proc_fd, const std::string& proc_path, ContainerRoot* out, Error* err);

// While an AsContainerRoot is entered, the calling thread's filesystem uid
// and gid are the container root's host ids; its effective capabilities
// are the same as before (the kernel drops the filesystem ones when the
// fsuid leaves 0; Enter puts them back). The destructor restores the
// previous fsuid, fsgid and capabilities (and aborts if it cannot). setfsuid/setfsgid change this
// thread only (they are not broadcast to other threads like setuid), and nothing of the real,
// effective or saved ids changes: no privilege is given up for good, and none is gained.
class AsContainerRoot {
 public:
  AsContainerRoot() = default;
  AsContainerRoot(const AsContainerRoot&) = delete;
  AsContainerRoot& operator=(const AsContainerRoot&) = delete;
  ~AsContainerRoot();
  // A no-op without a user namespace.
  bool Enter(const ContainerRoot& root, Error* err);

 private:
  bool entered_ = false;
  uint32_t saved_fsuid_ = 0, saved_fsgid_ = 0;
  __user_cap_data_struct saved_caps_[2]{};  // effective, permitted, inheritable
};

}  // namespace ocid
