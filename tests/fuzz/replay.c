/*
 * replay.c — main() for the harnesses when libFuzzer is not there (gcc): each
 * argument is a file or a directory of files; every file is fed as it is, then
 * TSL_FUZZ_MUTATIONS (default 200) deterministic mutations of it (byte flips,
 * inserted bytes, truncations, splices of another seed), so a gcc build still
 * exercises more than the seeds. Prints how many inputs ran.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#define MAX_SEEDS      512
#define MAX_SEED_BYTES (1u << 20)

typedef struct seed {
    uint8_t *data;
    size_t size;
} seed_t;

static seed_t seeds[MAX_SEEDS];
static size_t n_seeds;

static void add_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f || n_seeds == MAX_SEEDS) {
        if (f)
            fclose(f);
        return;
    }
    uint8_t *buf = malloc(MAX_SEED_BYTES);
    size_t n = buf ? fread(buf, 1, MAX_SEED_BYTES, f) : 0;
    fclose(f);
    seeds[n_seeds++] = (seed_t){buf, n};
}

static void add_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        add_file(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        add_file(p);
    }
    if (d)
        closedir(d);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* One mutation of s into out (capacity s->size + 16); returns the new size. */
static size_t mutate(const seed_t *s, uint8_t *out)
{
    size_t n = s->size;
    memcpy(out, s->data, n);
    static const uint8_t interesting[] = {0,    0xff, '"', '{', '}', '[', ']', ',', ':',
                                          '\\', '\n', '=', ';', '-', '9', 'e', 0x80};
    switch (next() % 5) {
    case 0: /* flip a byte */
        if (n)
            out[next() % n] ^= (uint8_t)(1u << (next() % 8));
        break;
    case 1: /* set an interesting byte */
        if (n)
            out[next() % n] = interesting[next() % sizeof interesting];
        break;
    case 2: /* truncate */ n = n ? next() % n : 0; break;
    case 3: { /* insert up to 16 bytes */
        size_t at = n ? next() % (n + 1) : 0, k = 1 + next() % 16;
        memmove(out + at + k, out + at, n - at);
        for (size_t i = 0; i < k; i++)
            out[at + i] = interesting[next() % sizeof interesting];
        n += k;
        break;
    }
    default: { /* splice: our head, another seed's tail */
        const seed_t *o = &seeds[next() % n_seeds];
        size_t at = n ? next() % n : 0, from = o->size ? next() % o->size : 0;
        size_t k = o->size - from;
        if (k > 16 + (s->size - at))
            k = 16 + (s->size - at);
        memcpy(out + at, o->data + from, k);
        n = at + k;
        break;
    }
    }
    return n;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        add_path(argv[i]);
    if (n_seeds == 0) {
        fprintf(stderr, "usage: %s CORPUS_DIR|FILE ... (no seeds found)\n", argv[0]);
        return 2;
    }
    const char *env = getenv("TSL_FUZZ_MUTATIONS");
    long per_seed = env ? atol(env) : 200;
    unsigned long runs = 0;
    for (size_t i = 0; i < n_seeds; i++) {
        LLVMFuzzerTestOneInput(seeds[i].data, seeds[i].size);
        runs++;
        uint8_t *buf = malloc(seeds[i].size + 16 + 1);
        for (long k = 0; buf && k < per_seed; k++, runs++) {
            size_t n = mutate(&seeds[i], buf);
            LLVMFuzzerTestOneInput(buf, n);
        }
        free(buf);
    }
    for (size_t i = 0; i < n_seeds; i++)
        free(seeds[i].data);
    printf("%s: %lu inputs from %zu seeds, no crash\n", argv[0], runs, n_seeds);
    return 0;
}
