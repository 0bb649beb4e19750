#ifndef SWITCHYARD_CFUZZDRIVER_H
#define SWITCHYARD_CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that have their own main (libclang_rt.fuzzer_no_main).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));

#endif
