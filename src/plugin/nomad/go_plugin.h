// The process side of HashiCorp go-plugin's handshake, as Nomad runs an
// external plugin:
//   1. Nomad sets NOMAD_PLUGIN_MAGIC_COOKIE; without it the binary was run
//      by hand, and says so (exit 1) instead of waiting on a socket;
//   2. PLUGIN_PROTOCOL_VERSIONS lists the app protocols the client speaks;
//      Nomad's is 2;
//   3. the plugin listens on a unix socket and prints
//      "1|2|unix|<path>|grpc" on stdout (core protocol 1, app protocol 2).
// The socket lives in a private directory (0700) made for this process and
// removed when it ends, so no other user can connect to it or plant one.
#pragma once
#include <string>

namespace ocid {

inline constexpr const char* kNomadCookieKey = "NOMAD_PLUGIN_MAGIC_COOKIE";
inline constexpr const char* kNomadCookieValue =
    "e4327c2e01eabfd75a8a67adb114fb34a757d57eee7728d857a8cec6e91a7255";

// Checks the environment for the cookie and app protocol 2. On failure
// *why is the message for the user.
bool CheckGoPluginEnv(std::string* why);

// "2,3" contains 2; an empty list means the client did not say (old
// go-plugin), which is taken as 2.
bool ProtocolVersionsInclude2(const std::string& list);

// The handshake line (with its newline).
std::string HandshakeLine(const std::string& socket_path);

// A private directory for the socket: made under PLUGIN_UNIX_SOCKET_DIR
// (go-plugin's setting), else TMPDIR, else /tmp; removed with its socket
// on destruction.
class SocketDir {
 public:
  SocketDir() = default;
  ~SocketDir();
  SocketDir(const SocketDir&) = delete;
  SocketDir& operator=(const SocketDir&) = delete;
  bool Create(std::string* err);
  const std::string& socket_path() const { return socket_; }
  void Remove();

 private:
  std::string dir_, socket_;
};

}  // namespace ocid
