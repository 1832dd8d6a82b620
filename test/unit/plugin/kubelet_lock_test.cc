// One owner per kubelet directory (kubelet_lock.h).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "../test_tree.h"
#include "kubelet_lock.h"

using ocid::KubeletDirLock;

TEST_CASE("kubelet dir lock: the second attempt is refused and names the holder") {
  ocid::test::TempTree t;
  t.Dir("kdir");
  KubeletDirLock a, b;
  std::string holder;
  ocid::Error err;
  REQUIRE(a.TryTake(t / "kdir", &holder, &err) == KubeletDirLock::Result::kTaken);
  CHECK(a.held());
  // flock locks belong to an open file: a second open in this process
  // conflicts as a second process would.
  CHECK(b.TryTake(t / "kdir", &holder, &err) == KubeletDirLock::Result::kHeld);
  CHECK_FALSE(b.held());
  CHECK(holder.find("pid " + std::to_string(::getpid())) == 0);
  a.Release();
  CHECK(b.TryTake(t / "kdir", &holder, &err) == KubeletDirLock::Result::kTaken);
}

TEST_CASE("kubelet dir lock: survives the kubelet's start-up cleanup") {
  // What the kubelet does to its directory when it starts: every entry but
  // directories (and its checkpoint) is removed. kubernetes
  // pkg/kubelet/cm/devicemanager/manager.go: CleanupPluginDirectory
  // (`if stat.IsDir() || stat.Mode()&os.ModeSocket == 0 { continue }`) and,
  // in older kubelets, removeContents (`if stat.IsDir() { continue }`,
  // everything else os.RemoveAll'ed). The stricter, older rule here.
  ocid::test::TempTree t;
  t.Dir("kdir");
  KubeletDirLock a, b;
  std::string holder;
  ocid::Error err;
  REQUIRE(a.TryTake(t / "kdir", &holder, &err) == KubeletDirLock::Result::kTaken);
  std::string lock = KubeletDirLock::PathFor(t / "kdir");
  CHECK(lock.rfind(t / "kdir/", 0) == 0);
  for (const auto& e : std::filesystem::directory_iterator(t / "kdir"))
    if (!e.is_directory()) std::filesystem::remove_all(e.path());
  struct stat st {};
  CHECK(::stat(lock.c_str(), &st) == 0);
  CHECK(b.TryTake(t / "kdir", &holder, &err) == KubeletDirLock::Result::kHeld);
}

TEST_CASE("kubelet dir lock: a lock directory others could change is refused") {
  ocid::test::TempTree t;
  t.Dir(std::string("kdir/") + ocid::kLockSubdir);
  ::chmod((t / "kdir/" + ocid::kLockSubdir).c_str(), 0777);
  KubeletDirLock a;
  std::string holder;
  ocid::Error err;
  CHECK(a.TryTake(t / "kdir", &holder, &err) == KubeletDirLock::Result::kError);
  CHECK(err.Line().find("refusing the lock directory") != std::string::npos);
}
