#include "superkernel/support/Sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

#include "support/Fd.h"

namespace sk {

namespace {
std::string toHex(const unsigned char* d, unsigned n) {
  static const char* digits = "0123456789abcdef";
  std::string s(n * 2, '0');
  for (unsigned i = 0; i < n; ++i) {
    s[2 * i] = digits[d[i] >> 4];
    s[2 * i + 1] = digits[d[i] & 15];
  }
  return s;
}
EVP_MD_CTX* ctxOf(void* p) { return static_cast<EVP_MD_CTX*>(p); }
}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctxOf(ctx_), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("EVP sha256 init failed");
}
Sha256::~Sha256() { EVP_MD_CTX_free(ctxOf(ctx_)); }
void Sha256::update(const void* data, size_t size) { EVP_DigestUpdate(ctxOf(ctx_), data, size); }
std::string Sha256::hexDigest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctxOf(ctx_), md, &len);
  return toHex(md, len);
}

std::string sha256Hex(std::string_view bytes) {
  Sha256 s;
  s.update(bytes);
  return s.hexDigest();
}

Expected<std::string> sha256File(const std::filesystem::path& file) {
  SK_ASSIGN_OR_RETURN(std::string data, detail::readFileBytes(file));
  return sha256Hex(data);
}

}  // namespace sk
