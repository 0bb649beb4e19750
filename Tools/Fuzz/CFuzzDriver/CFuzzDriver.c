// Declarations only (CFuzzDriver.h): libFuzzer's runtime provides LLVMFuzzerRunDriver at link time.
#include "CFuzzDriver.h"
