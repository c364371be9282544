//===- E2E.h - What the end-to-end tests share ------------------*- C++ -*-===//
#ifndef POOL_TEST_E2E_H
#define POOL_TEST_E2E_H

#include "poolrt/Artifact.h"
#include "poolrt/Device.h"
#include "poolrt/SolvedLayout.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

namespace e2e {

inline int failed = 0, passed = 0;

inline void expect(bool ok, const char *what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::printf("FAIL: %s\n", what);
  }
}

/// Read the artifact named on the command line, or say why not. The
/// command line is `MODEL.poolpack [BACKEND]` (host by default).
inline std::optional<poolrt::Artifact> loadArtifact(int argc, char **argv,
                                                    const char *tool) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.poolpack [host|cuda|hip]\n", tool);
    return std::nullopt;
  }
  auto artifact = poolrt::readArtifactFile(argv[1]);
  if (!artifact.ok()) {
    std::fprintf(stderr, "%s: %s\n", tool, artifact.error().message.c_str());
    return std::nullopt;
  }
  return artifact.take();
}

/// The backend named on the command line (host by default).
inline const char *backend(int argc, char **argv) {
  return argc == 3 ? argv[2] : "host";
}

/// The backend named on the command line with the artifact's code for it
/// loaded, or null (and why, printed) when either fails.
inline std::unique_ptr<poolrt::Device>
openBackend(int argc, char **argv, const poolrt::Artifact &artifact) {
  auto dev = poolrt::openDevice(backend(argc, argv));
  if (!dev.ok()) {
    std::printf("%s\n", dev.error().message.c_str());
    return nullptr;
  }
  poolrt::Status loaded = (*dev)->loadKernels(artifact);
  if (!loaded.ok()) {
    std::printf("load the backend's code: %s\n", loaded.error().message.c_str());
    return nullptr;
  }
  return dev.take();
}

/// The solved layout the compiler put in the manifest (the one source of
/// every count these tests use), read by the runtime's one reader. Exits
/// the test when the manifest is refused.
inline poolrt::SolvedLayout layoutOf(const poolrt::Artifact &a) {
  auto layout = poolrt::readSolvedLayout(a);
  if (!layout.ok()) {
    std::printf("FAIL: the manifest is refused: %s\n",
                layout.error().message.c_str());
    std::exit(1);
  }
  return layout.take();
}

} // namespace e2e

#endif
