#ifndef C_LIB_FUZZER_H
#define C_LIB_FUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver, for a program that keeps its own `main` (SwiftPM gives every executable one on Linux):
/// parses libFuzzer's options from `argv` and fuzzes `callback`, or replays the files `argv` names.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
