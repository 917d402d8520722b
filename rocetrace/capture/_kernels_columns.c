/* Column kernels: integer fields gathered from header slots, address keys and their
 * factorization, and the record copy of the capture writer. */
#include <stdlib.h>

#include "_kernels.h"

#define GATHER_BLOCK 1024 /* frames per block (a multiple of 8): their bytes stay in cache */

/* One source's value of frame i into its matrix row (kinds 0..3) or flag bit (kind 4);
 * returns 1 if the frame has the field, else 0. */
static int gather_one(const Frames *f, Slots sl, const int64_t *s, uint64_t mask,
                      const Gather *g, int64_t i, unsigned *ones, int bit)
{
    int64_t r = slot_get(sl, (int)s[0], i), off = s[1], span = s[2];
    const uint8_t *fr;
    int64_t cap = frame_cap(f, i, INT64_MAX, &fr);
    if (r < 0 || r + off + span > cap)
        return 0;
    uint64_t v = (be_bytes(fr + r + off, (int)span) >> s[3]) & mask;
    int64_t at = s[5] * f->n + i;
    switch (s[4]) {
    case 0: g->out8[at] = (uint8_t)v; break;
    case 1: g->out16[at] = (uint16_t)v; break;
    case 2: g->out32[at] = (uint32_t)v; break;
    case 3: g->out64[at] = v; break;
    default: *ones |= (v != 0) << bit;
    }
    return 1;
}

/* One source over one block: 8 frames at a time, so validity bits are whole bytes. */
static void gather_block(const Frames *f, Slots sl, const Gather *g, int64_t src, int64_t start,
                         int64_t stop)
{
    const int64_t *s = g->spec + 7 * src;
    for (int64_t at = start; at < stop; at += 8) {
        unsigned valid = 0, ones = 0;
        int64_t end = at + 8 < stop ? at + 8 : stop;
        for (int64_t i = at; i < end; i++)
            valid |= gather_one(f, sl, s, g->masks[src], g, i, &ones, (int)(i - at)) << (i - at);
        if (!valid)
            continue;
        int64_t byte = at >> 3;
        g->vbits[s[6] * g->nbytes + byte] |= (uint8_t)valid;
        if (s[4] == 4) {
            uint8_t *flag = &g->flags[s[5] * g->nbytes + byte];
            *flag = (uint8_t)((*flag & ~valid) | ones);
        }
    }
}

/* Every integer column, frames [start, stop) with start a multiple of 8: per spec source
 * (slot, byte offset, span, shift, kind, row, column) a big-endian read, shift and mask. A
 * later valid source of a column overwrites an earlier one; frames without the header, or
 * whose capture ends inside the field, stay invalid. counts[column] += the valid frames. */
void gather_columns(const Frames *f, Slots sl, const Gather *g, int64_t start, int64_t stop)
{
    for (int64_t blk = start; blk < stop; blk += GATHER_BLOCK) {
        int64_t blk_stop = blk + GATHER_BLOCK < stop ? blk + GATHER_BLOCK : stop;
        for (int64_t src = 0; src < g->n_sources; src++)
            gather_block(f, sl, g, src, blk, blk_stop);
    }
    for (int64_t col = 0; col < g->n_columns; col++) {
        const uint8_t *bits = g->vbits + col * g->nbytes;
        int64_t k = 0;
        for (int64_t byte = start >> 3; byte < (stop + 7) >> 3; byte++)
            k += __builtin_popcount(bits[byte]);
        g->counts[col] += k;
    }
}

/* (kind, hi, lo) keys of addresses, one row per column: spec rows (column, slot, byte
 * offset, width 4 / 6 / 16, kind); a later present source of a column overwrites. */
void address_keys(const Frames *f, Slots sl, const AddressKeys *k, int64_t start, int64_t stop)
{
    const uint8_t *buf_end = f->buf + f->len;
    for (int64_t i = start; i < stop; i++) {
        const uint8_t *fr;
        int64_t cap = frame_cap(f, i, INT64_MAX, &fr);
        for (int64_t s = 0; s < k->n_sources; s++) {
            const int64_t *row = k->spec + 5 * s;
            int64_t r = slot_get(sl, (int)row[1], i), width = row[3], at = row[0] * f->n + i;
            if (r < 0 || r + row[2] + width > cap)
                continue;
            const uint8_t *q = fr + r + row[2];
            k->hi[at] = width > 8 ? be_wide(q, (int)width - 8, buf_end) : 0;
            k->lo[at] = width > 8 ? be_wide(q + width - 8, 8, buf_end) : be_wide(q, (int)width, buf_end);
            k->kind[at] = (int8_t)row[4];
        }
    }
}

typedef struct {
    int64_t *slot; /* row of the key held, -1 empty */
    uint64_t mask;
    const uint64_t *hi, *lo;
    const int8_t *kind;
} KeyTable;

/* The slot of row i's key: the one holding an equal key, else the first empty one. */
static uint64_t probe(const KeyTable *t, int64_t i)
{
    uint64_t h = (t->hi[i] * 0x9E3779B97F4A7C15u) ^ t->lo[i] ^ (uint64_t)(int64_t)t->kind[i];
    uint64_t s = ((h * 0xBF58476D1CE4E5B9u) >> 17) & t->mask;
    for (;; s = (s + 1) & t->mask) {
        int64_t j = t->slot[s];
        if (j < 0 || (t->hi[j] == t->hi[i] && t->lo[j] == t->lo[i] && t->kind[j] == t->kind[i]))
            return s;
    }
}

/* A table of (mask + 1) empty slots holding the first n_unique rows again. */
static int rehash(KeyTable *t, uint64_t mask, const int64_t *first, int64_t n_unique)
{
    int64_t *slot = malloc((mask + 1) * sizeof *slot);
    if (!slot)
        return -1;
    free(t->slot);
    t->slot = slot, t->mask = mask;
    memset(slot, 0xFF, (mask + 1) * sizeof *slot);
    for (int64_t u = 0; u < n_unique; u++)
        slot[probe(t, first[u])] = first[u];
    return 0;
}

/* Codes (first-appearance order, -1 for kind 0) and first[u], the row of each unique key;
 * open addressing on (kind, hi, lo), grown at half load. Returns the number of unique keys,
 * -1 if out of memory. */
int64_t factorize_keys(const uint64_t *hi, const uint64_t *lo, const int8_t *kind, int64_t n,
                       int32_t *codes_out, int64_t *first)
{
    KeyTable t = {NULL, 0, hi, lo, kind};
    int64_t n_unique = 0;
    if (rehash(&t, 1023, first, 0) < 0)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        codes_out[i] = -1;
        if (kind[i] == 0)
            continue;
        uint64_t s = probe(&t, i);
        if (t.slot[s] >= 0) {
            codes_out[i] = codes_out[t.slot[s]];
            continue;
        }
        t.slot[s] = i, codes_out[i] = (int32_t)n_unique, first[n_unique++] = i;
        if (2 * (uint64_t)n_unique > t.mask && rehash(&t, t.mask * 4 + 3, first, n_unique) < 0) {
            n_unique = -1;
            break;
        }
    }
    free(t.slot);
    return n_unique;
}
