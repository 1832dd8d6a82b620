#include "go_plugin.h"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "error.h"

namespace ocid {

bool ProtocolVersionsInclude2(const std::string& list) {
  if (list.empty()) return true;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string v = list.substr(start, end - start);
    while (!v.empty() && v.front() == ' ') v.erase(0, 1);
    while (!v.empty() && v.back() == ' ') v.pop_back();
    if (v == "2") return true;
    start = end + 1;
  }
  return false;
}

bool CheckGoPluginEnv(std::string* why) {
  const char* cookie = std::getenv(kNomadCookieKey);
  if (!cookie || std::strcmp(cookie, kNomadCookieValue) != 0) {
    *why =
        "This binary is a Nomad device plugin, not meant to be executed directly. Put it in the "
        "Nomad "
        "client's plugin_dir and configure it in a plugin \"oci-decorator-device-plugin\" block.";
    return false;
  }
  const char* versions = std::getenv("PLUGIN_PROTOCOL_VERSIONS");
  if (!ProtocolVersionsInclude2(versions ? versions : "")) {
    *why = "Nomad asks for plugin protocol versions " + Printable(versions) +
           "; this plugin speaks version 2 only (Nomad 0.9 and later)";
    return false;
  }
  return true;
}

std::string HandshakeLine(const std::string& socket_path) {
  return "1|2|unix|" + socket_path + "|grpc\n";
}

SocketDir::~SocketDir() { Remove(); }

bool SocketDir::Create(std::string* err) {
  std::string base = "/tmp";
  for (const char* var : {"PLUGIN_UNIX_SOCKET_DIR", "TMPDIR"}) {
    const char* v = std::getenv(var);
    if (v && v[0] == '/') {
      base = v;
      break;
    }
  }
  std::string templ = base + "/oci-decorator-nomad.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  // mkdtemp makes the directory 0700: only our user (root) reaches the socket.
  if (!mkdtemp(buf.data())) {
    *err = "cannot create a socket directory under " + base + ": " + std::strerror(errno);
    return false;
  }
  dir_ = buf.data();
  socket_ = dir_ + "/plugin.sock";
  if (socket_.size() >= sizeof(sockaddr_un{}.sun_path)) {
    *err = "socket path " + socket_ + " is too long for a unix socket";
    Remove();
    return false;
  }
  return true;
}

void SocketDir::Remove() {
  if (!socket_.empty()) unlink(socket_.c_str());
  if (!dir_.empty()) rmdir(dir_.c_str());
  socket_.clear();
  dir_.clear();
}

}  // namespace ocid
