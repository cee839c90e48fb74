// The symbol table of an ELF object or shared object, read straight with
// <elf.h> layouts (support/ElfSymbols.h): what the driver's symbol sizes and
// the cpu back end's symbol localisation read. This used LLVM's Object library before;
// a hundred bounds-checked lines replace a dependency that made every
// consumer link libLLVM, needed a C compiler in find_package(superkernel),
// and does not compile with clang++ 14 in C++20 (LLVM 14's JSON.h uses an
// incomplete type in std::vector, which libstdc++ 12's constexpr vector
// rejects).
//
// Guarantee: any byte string is accepted as input. Every offset and size read
// from the file is checked against the buffer before use, so a truncated or
// corrupt object gives ErrorKind::Compile, never a read out of bounds.
#include <elf.h>

#include <bit>
#include <cstring>
#include <fmt/format.h>

#include "support/ElfSymbols.h"

namespace sk {
namespace {

// Objects come from the host compiler for the host, so the byte order is the
// host's; anything else is reported, not byte-swapped.
constexpr unsigned char kHostData = std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;

// Copies a T from bytes[off, off + sizeof(T)) if it is inside the buffer
// (memcpy: the buffer has no alignment guarantee).
template <class T>
bool readAt(std::string_view bytes, uint64_t off, T& out) {
  if (off > bytes.size() || bytes.size() - off < sizeof(T)) return false;
  std::memcpy(&out, bytes.data() + off, sizeof(T));
  return true;
}

template <class Ehdr, class Shdr, class Sym>
Expected<std::vector<ElfSymbol>> readTable(std::string_view bytes) {
  Ehdr eh;
  if (!readAt(bytes, 0, eh)) return compileError("truncated ELF header");
  if (eh.e_shnum == 0) return compileError("ELF object has no section headers");
  if (eh.e_shentsize != sizeof(Shdr)) return compileError(fmt::format("unexpected ELF section header size {}", eh.e_shentsize));
  auto section = [&](uint64_t i, Shdr& sh) -> bool {
    // e_shoff is untrusted: compare before adding so a huge value cannot wrap.
    if (i >= eh.e_shnum || eh.e_shoff > bytes.size()) return false;
    return readAt(bytes, eh.e_shoff + i * sizeof(Shdr), sh);
  };
  // .symtab (every symbol) if present, else .dynsym (a stripped shared object).
  Shdr symtab{};
  bool found = false;
  for (uint32_t want : {uint32_t(SHT_SYMTAB), uint32_t(SHT_DYNSYM)}) {
    for (uint64_t i = 0; i < eh.e_shnum && !found; ++i) {
      Shdr sh;
      if (!section(i, sh)) return compileError(fmt::format("ELF section header {} lies outside the file", i));
      if (sh.sh_type == want) symtab = sh, found = true;
    }
    if (found) break;
  }
  if (!found) return compileError("ELF object has no symbol table");
  Shdr strtab;
  if (!section(symtab.sh_link, strtab)) return compileError("ELF symbol table links to a missing string table");
  if (strtab.sh_offset > bytes.size() || bytes.size() - strtab.sh_offset < strtab.sh_size)
    return compileError("ELF string table lies outside the file");
  std::string_view strings = bytes.substr(strtab.sh_offset, strtab.sh_size);
  if (symtab.sh_entsize != sizeof(Sym)) return compileError(fmt::format("unexpected ELF symbol size {}", symtab.sh_entsize));
  if (symtab.sh_offset > bytes.size() || bytes.size() - symtab.sh_offset < symtab.sh_size)
    return compileError("ELF symbol table lies outside the file");

  std::vector<ElfSymbol> symbols;
  for (uint64_t off = 0; off + sizeof(Sym) <= symtab.sh_size; off += sizeof(Sym)) {
    Sym sym;
    readAt(bytes, symtab.sh_offset + off, sym);  // in bounds: checked above
    if (sym.st_name == 0 || sym.st_name >= strings.size()) continue;
    std::string_view rest = strings.substr(sym.st_name);
    std::string_view name = rest.substr(0, rest.find('\0'));
    if (name.size() == rest.size()) continue;  // not NUL-terminated inside the table
    if (name.empty()) continue;
    symbols.push_back({std::string(name), static_cast<uint64_t>(sym.st_size),
                       static_cast<uint8_t>(sym.st_info >> 4), sym.st_shndx != SHN_UNDEF});
  }
  return symbols;
}

}  // namespace

Expected<std::vector<ElfSymbol>> readElfSymbols(std::string_view objectBytes) {
  if (objectBytes.size() < EI_NIDENT || std::memcmp(objectBytes.data(), ELFMAG, SELFMAG) != 0)
    return compileError("not an object file: no ELF magic (symbol sizes need ELF)");
  if (static_cast<unsigned char>(objectBytes[EI_DATA]) != kHostData)
    return compileError("ELF object has a foreign byte order");
  switch (objectBytes[EI_CLASS]) {
    case ELFCLASS64: return readTable<Elf64_Ehdr, Elf64_Shdr, Elf64_Sym>(objectBytes);
    case ELFCLASS32: return readTable<Elf32_Ehdr, Elf32_Shdr, Elf32_Sym>(objectBytes);
    default: return compileError("ELF object of unknown class");
  }
}

}  // namespace sk
