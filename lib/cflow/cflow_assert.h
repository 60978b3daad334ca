/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef _CFLOW_ASSERT_H_
#define _CFLOW_ASSERT_H_

/*
 * lib/cflow's checks of its own invariants: assert(), so compiled in
 * unless NDEBUG. The project sets b_ndebug=if-release: a release build
 * (buildtype=release) defines NDEBUG and has none of them; debug,
 * debugoptimized and the sanitizer builds keep them. Not installed.
 */

#include <assert.h>

#define CFLOW_ASSERT(cond) assert(cond)

#endif /* _CFLOW_ASSERT_H_ */
