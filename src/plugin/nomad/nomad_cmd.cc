// RunNomad: the go-plugin handshake, then the gRPC server on a private
// unix socket until Nomad calls GRPCController/Shutdown or SIGTERM.
//
// Nomad starts this binary several times (once for PluginInfo and
// ConfigSchema, once to validate SetConfig, then the long-lived instance);
// every start is the same server, cheap until something fingerprints.
// stdin is the agent's and often /dev/null: its end means nothing here.
#include "nomad_cmd.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "exit_codes.h"
#include "go_plugin.h"
#include "log.h"
#include "nomad_service.h"
#include "serve_loop.h"

namespace ocid {
namespace {

// SIGTERM stops. SIGINT is ignored as go-plugin servers do: a Ctrl-C at a
// foreground agent reaches its plugins too, and the agent stops them
// itself. SIGHUP re-checks the host.
bool OnSignal(NomadState* state, int signo) {
  if (signo == SIGTERM) {
    log::Info("nomad: SIGTERM: shutting down");
    return true;
  }
  if (signo == SIGINT) log::Info("nomad: SIGINT ignored (the Nomad client stops its plugins)");
  if (signo == SIGHUP) {
    NomadConfig cfg;
    uint64_t gen = 0;
    std::string err;
    if (auto w = state->Watch(&cfg, &gen, &err)) w->Recheck();
  }
  return false;
}

}  // namespace

int RunNomad(const PluginOptions& opts) {
  std::string err;
  if (!CheckGoPluginEnv(&err)) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return kExitFailure;
  }
  const char* client_cert = std::getenv("PLUGIN_CLIENT_CERT");
  if (client_cert && *client_cert)
    log::Warn(
        "nomad: the client asks for go-plugin AutoMTLS, which this plugin does not speak; "
        "serving without TLS on a socket only root can reach");

  // The signals are blocked before gRPC starts its threads, so none of them
  // is interrupted by one: they arrive only in the loop below.
  ServeLoop loop;
  Error loop_err;
  if (!loop.Init(&loop_err)) {
    log::Error("nomad: " + loop_err.Line());
    return kExitFailure;
  }

  SocketDir dir;
  if (!dir.Create(&err)) {
    log::Error("nomad: " + err);
    return kExitFailure;
  }
  // Everything the go-plugin handshake needed from the environment has been
  // read. gRPC reads it too when it starts (GRPC_TRACE, GRPC_VERBOSITY,
  // proxies, poll strategies): what the Nomad agent's environment holds
  // must not change how the plugin behaves.
  ::clearenv();
  NomadState state(opts);
  ControllerService controller(&state);
  StdioService stdio(&state);
  BasePluginService base(&state);
  DevicePluginService device(&state);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + dir.socket_path(), grpc::InsecureServerCredentials());
  builder.RegisterService(&controller);
  builder.RegisterService(&stdio);
  builder.RegisterService(&base);
  builder.RegisterService(&device);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    log::Error("nomad: cannot serve on " + dir.socket_path());
    return kExitFailure;
  }
  // go-plugin's client pings the service named "plugin".
  server->GetHealthCheckService()->SetServingStatus("plugin", true);

  // The handshake: go-plugin reads this one line from our stdout.
  std::string line = HandshakeLine(dir.socket_path());
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
  log::Info("nomad: serving on " + dir.socket_path());

  // Until Shutdown (looked at every 200 ms) or SIGTERM.
  loop.OnSignal([&state](int signo) { return OnSignal(&state, signo); });
  int rc = loop.Run(
      [&] {
        if (state.ShuttingDown()) loop.Stop();
        return 200;
      },
      &loop_err);
  if (rc != 0) log::Error("nomad: " + loop_err.Line());
  state.RequestShutdown();  // streams end at their next look
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server->Wait();
  dir.Remove();
  log::Info("nomad: stopped");
  return rc;
}

}  // namespace ocid
