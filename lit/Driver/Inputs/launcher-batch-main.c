/* Runs the generated --target cpu launcher of vmap's batch loop
 * (launcher-batch.test). `main gen DIR` writes the batched inputs as .npy
 * (3 x [16] i32 row indices into 3 x [256, 512] f32 tables); `main run DIR`
 * calls gather_batch_cpu on them with one grid bound per iteration, compares
 * its output bit for bit with DIR/ref.npy (`pallasc run` of the same kernel,
 * spec and --vmap) and with the gather computed here, then checks the error
 * paths. */
#include "gather_batch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 3, N = 16, R = 256, C = 512 };

static FILE *open(const char *dir, const char *name, const char *mode) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return fopen(path, mode);
}

/* A version 1 .npy header (magic, length, the dict padded to 64 bytes). */
static int save(const char *dir, const char *name, const char *descr,
                const char *shape, const void *data, size_t bytes) {
  char dict[128];
  unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  FILE *f = open(dir, name, "wb");
  int n = snprintf(dict, sizeof dict,
                   "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                   descr, shape);
  int ok;
  while ((10 + n + 1) % 64)
    dict[n++] = ' ';
  dict[n++] = '\n';
  head[8] = (unsigned char)n;
  if (!f)
    return 0;
  ok = fwrite(head, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n &&
       fwrite(data, 1, bytes, f) == bytes;
  return fclose(f) == 0 && ok;
}

static int load(const char *dir, const char *name, void *data, size_t bytes) {
  FILE *f = open(dir, name, "rb");
  unsigned char head[10];
  size_t headerLen;
  int ok;
  if (!f)
    return 0;
  ok = fread(head, 1, 10, f) == 10 && memcmp(head, "\x93NUMPY\x01", 7) == 0;
  headerLen = (size_t)head[8] | ((size_t)head[9] << 8);
  ok = ok && fseek(f, (long)(10 + headerLen), SEEK_SET) == 0 &&
       fread(data, 1, bytes, f) == bytes;
  fclose(f);
  return ok;
}

int main(int argc, char **argv) {
  int32_t *idx = malloc(sizeof(int32_t) * B * N);
  float *table = malloc(sizeof(float) * B * R * C);
  float *out = malloc(sizeof(float) * B * N * C);
  float *ref = malloc(sizeof(float) * B * N * C);
  int64_t bounds[B] = {4, 16, 9};
  int64_t bad[B] = {4, 16, -9};
  size_t i, written = 0, wrong = 0, differ = 0;
  int b, r, c, rc = 0;
  /* Every path frees the buffers (the test also runs under LeakSanitizer). */
  if (argc != 3 || !idx || !table || !out || !ref) {
    rc = 2;
    goto done;
  }
  if (strcmp(argv[1], "gen") == 0) {
    for (i = 0; i < (size_t)(B * N); ++i)
      idx[i] = (int32_t)((i * 97 + 13) % R);
    for (i = 0; i < (size_t)(B * R * C); ++i)
      table[i] = (float)((i * 7919) % 10007) * 0.125f - 500.0f;
    rc = !(save(argv[2], "idx.npy", "<i4", "(3, 16)", idx,
                sizeof(int32_t) * B * N) &&
           save(argv[2], "table.npy", "<f4", "(3, 256, 512)", table,
                sizeof(float) * B * R * C));
    goto done;
  }
  if (!load(argv[2], "idx.npy", idx, sizeof(int32_t) * B * N) ||
      !load(argv[2], "table.npy", table, sizeof(float) * B * R * C) ||
      !load(argv[2], "ref.npy", ref, sizeof(float) * B * N * C)) {
    printf("cannot read the inputs\n");
    rc = 1;
    goto done;
  }
  if (gather_batch_cpu(idx, table, out, bounds) != PALLASC_OK) {
    printf("failed: %s\n", pallasc_last_error());
    rc = 1;
    goto done;
  }
  printf("ok: '%s'\n", pallasc_last_error());
  /* Iteration b writes rows r < bounds[b] of slice b: table[b][idx[b][r]];
   * the other rows stay uninitialized (NaN). */
  for (b = 0; b < B; ++b)
    for (r = 0; r < N; ++r)
      for (c = 0; c < C; ++c) {
        float got = out[(b * N + r) * C + c];
        if (r < bounds[b]) {
          ++written;
          wrong += got != table[((size_t)b * R + (size_t)idx[b * N + r]) * C + c];
        } else {
          wrong += !isnan(got);
        }
      }
  differ = (size_t)memcmp(out, ref, sizeof(float) * B * N * C) != 0;
  printf("gather: %zu written, %zu wrong\n", written, wrong);
  printf("pallasc run: %s\n", differ ? "DIFFERENT" : "identical bits");
  /* A bound out of range in one iteration; a null batched bound. */
  printf("bad bound: %d %s\n", (int)gather_batch_cpu(idx, table, out, bad),
         pallasc_last_error());
  printf("null bounds: %d %s\n", (int)gather_batch_cpu(idx, table, out, NULL),
         pallasc_last_error());
done:
  free(idx);
  free(table);
  free(out);
  free(ref);
  return rc;
}
