// One owner per kubelet directory. Two plugins serving one directory (a
// host install beside the DaemonSet, a rolling update with surge) each take
// the other's sockets for stale ones, delete them and register again,
// forever. So the Kubernetes mode holds an exclusive flock(2) on
// <kubelet-dir>/oci-decorator-device-plugin/lock before it creates or
// deletes anything there, for as long as it serves, and a second instance
// gives up with one line naming the directory and the holder.
//
// The lock lives in a subdirectory because the kubelet, when it starts,
// deletes what it finds in its directory but skips directories
// (kubernetes pkg/kubelet/cm/devicemanager/manager.go,
// CleanupPluginDirectory, called from plugin/v1beta1/server.go Start:
// `if stat.IsDir() || stat.Mode()&os.ModeSocket == 0 { continue }`; older
// kubelets' removeContents: `if stat.IsDir() { continue }`, every other
// file removed). A lock file beside the sockets would be deleted under its
// holder by an older kubelet's restart, and the next instance would lock a
// new file while the old one still served.
//
// The file is never removed (removing it would let two instances lock two
// different files); it holds the holder's pid and host name, for the
// message.
#pragma once
#include <string>

#include "error.h"
#include "unique_fd.h"

namespace ocid {

constexpr const char* kLockSubdir = "oci-decorator-device-plugin";

class KubeletDirLock {
 public:
  enum class Result { kTaken, kHeld, kError };
  // One attempt, without waiting. kHeld: *holder says who has it ("pid 12
  // on host node-a"); kError: *err says why the lock cannot be taken.
  Result TryTake(const std::string& kubelet_dir, std::string* holder, Error* err);
  void Release() { fd_.reset(); }
  bool held() const { return fd_.valid(); }

  static std::string PathFor(const std::string& kubelet_dir) {
    return kubelet_dir + "/" + kLockSubdir + "/lock";
  }

 private:
  UniqueFd fd_;
};

}  // namespace ocid
