# A job asking for Onload: Nomad places it on a client whose plugin reports
# an amd/onload instance healthy, and its docker driver applies the
# reservation (read-only mounts of the Onload files, /dev/onload,
# /dev/onload_epoll and /dev/sfc_char, LD_PRELOAD).
job "onload-example" {
  datacenters = ["dc1"]
  type        = "batch"

  group "app" {
    task "app" {
      driver = "docker"
      config {
        image   = "debian:bookworm-slim"
        command = "sh"
        args    = ["-c", "echo LD_PRELOAD=$LD_PRELOAD; ls -l /dev/onload /dev/sfc_char; onload_stackdump lots | head"]
      }
      resources {
        cpu    = 500
        memory = 256
        # amd/onloadzf for Onload and TCPDirect together, amd/zf for TCPDirect alone.
        device "amd/onload" {
          count = 1
        }
      }
    }
  }
}
