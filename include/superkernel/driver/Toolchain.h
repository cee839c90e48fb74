// Toolchains: which compiler builds a target's code, and its identity.
//
// Identity = resolved real path + SHA-256 of the compiler binary (memoised
// per process by device, inode, size and mtime) + its `--version` output.
// The identity is hashed into every cache key; the launcher is not (a
// launcher such as ccache must not change what is built).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

enum class CompilerFamily : uint8_t { Clang, Gcc, Unknown };
const char* compilerFamilyName(CompilerFamily f);

struct Toolchain {
  std::string target = "cpu";             // the back end it builds for
  std::string requested;                  // as asked: "clang++", "g++", "/opt/x/bin/c++"
  std::filesystem::path path;             // resolved real path of the compiler (its identity)
  std::filesystem::path invocation;       // what is spawned: found on PATH, symlinks kept
  CompilerFamily family = CompilerFamily::Unknown;  // from --version
  std::string contentHash;                // hex SHA-256 of the compiler binary
  std::string version;                    // `--version` output (stdout, trimmed)
  /// SK_COMPILER_LAUNCHER words, prepended to every compiler argv. Not part
  /// of identity(): a launcher never changes the cache key.
  std::vector<std::string> launcher;

  /// path + '\n' + contentHash + '\n' + version: the bytes hashed into keys.
  std::string identity() const;
  /// First line of `version`, for reports ("Debian clang version 14.0.6").
  std::string versionLine() const;
};

struct ToolchainRequest {
  std::string target = "cpu";
  /// Compiler name (looked up on PATH) or path. Empty: $<compilerEnvVar>,
  /// else `defaultCompiler`.
  std::string compiler;
  /// The target's default compiler and the variable that overrides it (its
  /// BuildRecipe's); empty: the cpu target's ("clang++", "SK_CXX").
  std::string defaultCompiler;
  std::string compilerEnvVar;
  /// BuildRecipe::compilerHint: replaces "install <compiler>" in the not-found error.
  std::string hint;
  /// Launcher words. nullopt: $SK_COMPILER_LAUNCHER (split on spaces); an
  /// empty vector: no launcher even if the variable is set.
  std::optional<std::vector<std::string>> launcher;
};

/// Resolve and identify a toolchain. Errors are ErrorKind::Compile, e.g.
/// "compiler 'foo' not found on PATH; set SK_CXX or install clang".
Expected<Toolchain> findToolchain(const ToolchainRequest& request = {});

/// Convenience: findToolchain({target, compiler}).
Expected<Toolchain> findToolchain(std::string_view target, std::string_view compiler);

}  // namespace sk
