/* Custom-op libraries that onyx must refuse, one way each, chosen by
 * ONYX_BAD_<kind> (tests/custom_op/CMakeLists.txt):
 *   abi         another ABI version
 *   noentry     no OnyxCustomOpLibraryEntry
 *   unresolved  needs a symbol nothing defines (the dynamic loader refuses it)
 *   tables      a domain without a name */
#include <stddef.h>

#include "onyx/custom_op.h"

static void* Create(const OnyxCustomOpApi* api, const OnyxKernelInfo* info, char* error, size_t size) {
  (void)api, (void)info, (void)error, (void)size;
  return NULL;
}
static int Compute(void* k, const OnyxCustomOpApi* api, OnyxKernelContext* ctx, char* error, size_t size) {
  (void)k, (void)api, (void)ctx, (void)error, (void)size;
  return 1;
}
static void Destroy(void* k) { (void)k; }
static const OnyxCustomOp kOps[] = {{"Nothing", 1, 1, 1, Create, Compute, Destroy}};

#if defined(ONYX_BAD_abi)
static const OnyxCustomOpDomain kDomains[] = {{"com.bad", kOps, 1}};
ONYX_EXPORT const OnyxCustomOpLibrary* OnyxCustomOpLibraryEntry(uint32_t host) {
  (void)host;
  static const OnyxCustomOpLibrary library = {ONYX_CUSTOM_OP_ABI_VERSION + 41, "bad_abi", kDomains, 1};
  return &library;
}
#elif defined(ONYX_BAD_noentry)
ONYX_EXPORT int SomethingElse(void) { return (int)sizeof(kOps); }
#elif defined(ONYX_BAD_unresolved)
extern int onyx_custom_symbol_nothing_defines(void);
ONYX_EXPORT int UsesAMissingSymbol(void) { return onyx_custom_symbol_nothing_defines(); }
static const OnyxCustomOpDomain kDomains[] = {{"com.bad", kOps, 1}};
ONYX_EXPORT const OnyxCustomOpLibrary* OnyxCustomOpLibraryEntry(uint32_t host) {
  (void)host;
  static const OnyxCustomOpLibrary library = {ONYX_CUSTOM_OP_ABI_VERSION, "unresolved", kDomains, 1};
  return &library;
}
#elif defined(ONYX_BAD_tables)
static const OnyxCustomOpDomain kDomains[] = {{"", kOps, 1}};
ONYX_EXPORT const OnyxCustomOpLibrary* OnyxCustomOpLibraryEntry(uint32_t host) {
  (void)host;
  static const OnyxCustomOpLibrary library = {ONYX_CUSTOM_OP_ABI_VERSION, "tables", kDomains, 1};
  return &library;
}
#else
#error "define one ONYX_BAD_<kind>"
#endif
