#ifndef C_MALLOC_STATS_H
#define C_MALLOC_STATS_H

#include <stddef.h>

/// Bytes the C allocator has handed out and not yet had back, in every arena (glibc: `mallinfo2()`'s
/// `uordblks + hblkhd`, that is small chunks in use plus mmap'ed large blocks), or 0 where unsupported.
size_t c_malloc_bytes_in_use(void);

#endif
