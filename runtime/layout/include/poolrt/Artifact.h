//===- Artifact.h - The .poolpack artifact container ------------*- C++ -*-===//
//
// A .poolpack file is a checksummed container of named sections: the JSON
// layout manifest, the address header, and one code object per target. This
// file only knows the container; what a section holds is the business of the
// writer (codegen) and of the loader. The byte layout, the checksum and the
// versioning rule are specified in specs/artifact-format.md.
//
// Plain C++17, no LLVM/MLIR, no exceptions: failures are Error values.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_ARTIFACT_H
#define POOLRT_ARTIFACT_H

#include "poolrt/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace poolrt {

/// The only container format version this code writes and reads. A reader
/// refuses every other version (see specs/artifact-format.md).
constexpr uint32_t kArtifactVersion = 1;

/// Fixed sizes and limits of the format.
constexpr size_t kArtifactHeaderSize = 64;
constexpr size_t kArtifactSectionEntrySize = 32;
constexpr size_t kArtifactPayloadAlign = 64;
constexpr uint32_t kArtifactMaxSections = 4096;
constexpr uint32_t kArtifactMaxNameLength = 255;

/// One named section. Names are 1..255 bytes of printable ASCII without
/// spaces (0x21..0x7E), unique within an artifact: "manifest", "header",
/// "code/gfx942", "code/sm_90", "code/host", ... `data` is arbitrary bytes.
struct ArtifactSection {
  std::string name;
  std::string data;
};

struct Artifact {
  uint32_t version = kArtifactVersion;
  std::vector<ArtifactSection> sections;

  /// The section called `name`, or nullptr.
  const ArtifactSection *find(const std::string &name) const;
};

/// Checks what serializeArtifact cannot express or a reader would refuse:
/// the version, the section count, names (empty, too long, non-printable,
/// duplicate).
Status validateArtifact(const Artifact &a);

/// The file bytes. Does not validate: an artifact that validateArtifact
/// refuses serializes to bytes that parseArtifact refuses.
std::string serializeArtifact(const Artifact &a);

/// Parses and validates the file bytes: magic, version, size, checksum,
/// section table bounds, payload bounds and alignment, overlaps, names.
/// Never reads outside [data, data + size). `data` may be null when `size`
/// is 0.
Result<Artifact> parseArtifact(const void *data, size_t size);

/// Reads and parses a file. Errors are prefixed with the path.
Result<Artifact> readArtifactFile(const std::string &path);

/// Writes `bytes` to `path` atomically: a temporary file in the target's
/// directory, flushed, then renamed over `path`. On failure the temporary
/// file is removed and an existing file at `path` is untouched. A `path`
/// that exists and is not a regular file (a device, a FIFO, a symbolic
/// link, a directory) is refused, never replaced. `what` names the content
/// in messages ("artifact", "report").
Status writeFileAtomically(const std::string &path, const std::string &bytes,
                           const char *what);

/// Validates, serializes and writes atomically: a temporary file in the
/// target's directory, flushed, then renamed over `path`. On failure the
/// temporary file is removed and an existing file at `path` is untouched.
Status writeArtifactFile(const std::string &path, const Artifact &a);

} // namespace poolrt

#endif // POOLRT_ARTIFACT_H
