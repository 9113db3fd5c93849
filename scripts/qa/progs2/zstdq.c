/* QA driver (scripts/qa/build-progs2.sh): zstd (single-file zstd.c from the `zstandard` PyPI sdist)
   compressing generated data at several levels, single- and multi-threaded (ZSTD_MULTITHREAD),
   then decompressing and checking; a mutually recursive generator makes a cycle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define ZSTD_STATIC_LINKING_ONLY
#include "zstd.h"

static double cpu(void) { return (double)clock() / CLOCKS_PER_SEC; }
static unsigned long rng = 12345;
static unsigned rnd(void) { rng = rng * 6364136223846793005UL + 1442695040888963407UL; return (unsigned)(rng >> 33); }

static size_t gen_list(char *out, size_t cap, int depth);
static size_t gen_item(char *out, size_t cap, int depth) {
  if (cap < 64) return 0;
  if (depth > 4 || rnd() % 3 == 0) return (size_t)snprintf(out, cap, "word%u ", rnd() % 500);
  return gen_list(out, cap, depth + 1);
}
static size_t gen_list(char *out, size_t cap, int depth) {
  size_t n = 0;
  if (cap < 64) return 0;
  out[n++] = '(';
  for (int i = 0, k = 1 + rnd() % 6; i < k; i++) n += gen_item(out + n, cap - n, depth);
  out[n++] = ')';
  return n;
}

int main(int argc, char **argv) {
  double budget = argc > 1 ? atof(argv[1]) : 1.5;
  size_t cap = 1 << 21, len = 0;
  char *src = malloc(cap);
  while (len < cap - 4096) len += gen_list(src + len, cap - len, 0);
  size_t bound = ZSTD_compressBound(len);
  char *dst = malloc(bound), *back = malloc(len);
  int round = 0;
  size_t total = 0;
  while (cpu() < budget) {
    int level = 1 + round % 12;
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_nbWorkers, round % 3 == 2 ? 2 : 0);
    size_t c = ZSTD_compress2(cc, dst, bound, src, len);
    ZSTD_freeCCtx(cc);
    if (ZSTD_isError(c)) { fprintf(stderr, "%s\n", ZSTD_getErrorName(c)); return 1; }
    size_t d = ZSTD_decompress(back, len, dst, c);
    if (d != len || memcmp(back, src, len)) { fprintf(stderr, "mismatch\n"); return 1; }
    total += c;
    round++;
  }
  printf("%d rounds, %zu bytes in, %zu out\n", round, len, total);
  return 0;
}
