/* Column kernels: integer fields gathered from header slots, address keys and their
 * factorization, and the record copy of the capture writer. */
#include <stdlib.h>
#include <string.h>

#include "_kernels.h"

#define GATHER_BLOCK 256 /* frames per block (a multiple of 8): their bytes stay in cache */

/* One block's frames: first byte and cap clipped to the buffer, computed once per block. */
typedef struct {
    const uint8_t *fr[GATHER_BLOCK];
    int64_t cap[GATHER_BLOCK];
} Block;

/* Frame k of the block has the field at r + off (span bytes) inside its cap: its value. */
static uint64_t field_value(const Block *blk, const uint8_t *buf_end, int64_t k, int64_t at,
                            int span, int shift, uint64_t mask)
{
    return (be_wide(blk->fr[k] + at, span, buf_end) >> shift) & mask;
}

/* One source over the block: each frame that has the field gets its value in out_row
 * (kinds 0..3, by element size) or its flag in ones (kind 4), and valid[k] = 1; returns how
 * many have it. Inlined once per kind, so each loop stores with one fixed width. */
static inline __attribute__((always_inline)) int64_t
read_source(const Frames *f, Slots sl, const Block *blk, const int64_t *s, uint64_t mask,
            int64_t start, int64_t count, int kind, void *out_row, uint8_t *valid,
            uint8_t *ones)
{
    const int16_t *slot_row = sl.v + s[0] * sl.n + start;
    const uint8_t *buf_end = f->buf + f->len;
    int64_t off = s[1], span = s[2], found = 0;
    for (int64_t k = 0; k < count; k++) {
        int64_t r = slot_row[k];
        valid[k] = r >= 0 && r + off + span <= blk->cap[k];
        if (!valid[k])
            continue;
        uint64_t v = field_value(blk, buf_end, k, r + off, (int)span, (int)s[3], mask);
        found++;
        switch (kind) {
        case 0: ((uint8_t *)out_row)[k] = (uint8_t)v; break;
        case 1: ((uint16_t *)out_row)[k] = (uint16_t)v; break;
        case 2: ((uint32_t *)out_row)[k] = (uint32_t)v; break;
        case 3: ((uint64_t *)out_row)[k] = v; break;
        default: ones[k] = v != 0;
        }
    }
    return found;
}

static int64_t read_source_of_kind(const Frames *f, Slots sl, const Block *blk, const Gather *g,
                                   int64_t src, int64_t start, int64_t count, uint8_t *valid,
                                   uint8_t *ones)
{
    const int64_t *s = g->spec + 7 * src;
    int64_t at = s[5] * f->n + start;
    uint64_t mask = g->masks[src];
    switch (s[4]) {
    case 0: return read_source(f, sl, blk, s, mask, start, count, 0, g->out8 + at, valid, ones);
    case 1: return read_source(f, sl, blk, s, mask, start, count, 1, g->out16 + at, valid, ones);
    case 2: return read_source(f, sl, blk, s, mask, start, count, 2, g->out32 + at, valid, ones);
    case 3: return read_source(f, sl, blk, s, mask, start, count, 3, g->out64 + at, valid, ones);
    default: return read_source(f, sl, blk, s, mask, start, count, 4, NULL, valid, ones);
    }
}

/* Eight 0/1 bytes as the bits of one byte (byte k -> bit k). */
static uint8_t pack8(const uint8_t *bytes)
{
    uint64_t x;
    memcpy(&x, bytes, 8);
    return (uint8_t)((x * 0x0102040810204080u) >> 56);
}

/* Validity bits of the column; flag bits (kind 4) set or cleared where valid. valid and
 * ones hold whole groups of 8 (zero past count). */
static void store_bits(const Gather *g, const int64_t *s, int64_t start, int64_t count,
                       const uint8_t *valid, const uint8_t *ones)
{
    uint8_t *vbits = g->vbits + s[6] * g->nbytes + start / 8;
    uint8_t *flags = g->flags + s[5] * g->nbytes + start / 8;
    for (int64_t byte = 0; byte < (count + 7) / 8; byte++) {
        uint8_t bits = pack8(valid + 8 * byte);
        vbits[byte] |= bits;
        if (s[4] == 4)
            flags[byte] = (uint8_t)((flags[byte] & ~bits) | (pack8(ones + 8 * byte) & bits));
    }
}

/* Whether any frame of [start, start + count) has the header of this slot (most sources
 * are absent from whole blocks: PFC, VLAN, atomics...). */
static int slot_used(Slots sl, int slot, int64_t start, int64_t count)
{
    const int16_t *row = sl.v + slot * sl.n + start;
    int16_t top = -1;
    for (int64_t k = 0; k < count; k++)
        top = row[k] > top ? row[k] : top;
    return top >= 0;
}

static void fill_block(const Frames *f, int64_t start, int64_t count, Block *blk)
{
    for (int64_t k = 0; k < count; k++)
        blk->cap[k] = frame_cap(f, start + k, INT64_MAX, &blk->fr[k]);
}

/* Every integer column of one block's frames [at, at + count): per spec source (slot, byte
 * offset, span, shift, kind, row, column) a big-endian read, shift and mask. A later valid
 * source of a column overwrites an earlier one; frames without the header, or whose capture
 * ends inside the field, stay invalid. */
static void gather_block(const Frames *f, Slots sl, const Gather *g, int64_t at, int64_t count)
{
    Block blk;
    uint8_t valid[GATHER_BLOCK], ones[GATHER_BLOCK];
    fill_block(f, at, count, &blk);
    memset(valid + count, 0, GATHER_BLOCK - count);
    memset(ones, 0, GATHER_BLOCK);
    for (int64_t src = 0; src < g->n_sources; src++) {
        const int64_t *s = g->spec + 7 * src;
        if (!slot_used(sl, (int)s[0], at, count) ||
            !read_source_of_kind(f, sl, &blk, g, src, at, count, valid, ones))
            continue;
        store_bits(g, s, at, count, valid, ones);
    }
}

/* Set bits of a word (SWAR: without -mpopcnt, __builtin_popcount is a libgcc call). */
static int64_t bits_set(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Fu;
    return (int64_t)((x * 0x0101010101010101u) >> 56);
}

/* counts[column] += the valid frames of [start, stop) (start a multiple of 8). */
static void count_valid(const Gather *g, int64_t start, int64_t stop)
{
    for (int64_t col = 0; col < g->n_columns; col++) {
        const uint8_t *bits_of = g->vbits + col * g->nbytes;
        int64_t k = 0, byte = start >> 3, end = (stop + 7) >> 3;
        for (uint64_t word; byte + 8 <= end; byte += 8) {
            memcpy(&word, bits_of + byte, 8);
            k += bits_set(word);
        }
        for (; byte < end; byte++)
            k += bits_set(bits_of[byte]);
        g->counts[col] += k;
    }
}

/* Every slot of frames [at, at + count) absent (-1: all bits set), before the walk sets
 * the headers it finds: the block's rows are written while in cache, not in a pass of
 * their own over the window's matrix before the walk. */
static void clear_slots(Slots sl, int64_t at, int64_t count)
{
    for (int64_t r = 0; r < sl.rows; r++)
        memset(sl.v + r * sl.n + at, 0xff, (size_t)count * sizeof(int16_t));
}

/* The walk (walk_range) and the gather of frames [start, stop), start a multiple of 8, a
 * block at a time: the gather reads each block's headers while the walk has them in cache
 * (as separate passes over a window, the gather waited on memory for a third of its time).
 * Every slot of the range is written (-1 where the walk finds no header). */
void walk_gather(const Frames *f, const WalkTables *wt, Slots sl, const WalkOut *out,
                 const Gather *g, int64_t start, int64_t stop)
{
    CrcSlices crc;
    crc_slices(wt->opcodes.crc, &crc);
    for (int64_t at = start; at < stop; at += GATHER_BLOCK) {
        int64_t count = stop - at < GATHER_BLOCK ? stop - at : GATHER_BLOCK;
        clear_slots(sl, at, count);
        walk_range(f, wt, &crc, sl, out, at, at + count);
        gather_block(f, sl, g, at, count);
    }
    count_valid(g, start, stop);
}

typedef struct {
    int64_t *slot; /* index of the key held (a row, or a unique), -1 empty */
    uint64_t mask;
    const uint64_t *hi, *lo; /* the keys the indices point at */
    const int8_t *kind;
} KeyTable;

/* The slot of key (kind, hi, lo): the one holding an equal key, else the first empty one. */
static uint64_t probe(const KeyTable *t, int8_t kind, uint64_t hi, uint64_t lo)
{
    uint64_t h = (hi * 0x9E3779B97F4A7C15u) ^ lo ^ (uint64_t)(int64_t)kind;
    uint64_t s = ((h * 0xBF58476D1CE4E5B9u) >> 17) & t->mask;
    for (;; s = (s + 1) & t->mask) {
        int64_t j = t->slot[s];
        if (j < 0 || (t->hi[j] == hi && t->lo[j] == lo && t->kind[j] == kind))
            return s;
    }
}

/* A table of (mask + 1) empty slots holding the keys at held[0 .. n_held) again (held NULL:
 * the indices 0 .. n_held). */
static int rehash(KeyTable *t, uint64_t mask, const int64_t *held, int64_t n_held)
{
    int64_t *slot = malloc((mask + 1) * sizeof *slot);
    if (!slot)
        return -1;
    free(t->slot);
    t->slot = slot, t->mask = mask;
    memset(slot, 0xFF, (mask + 1) * sizeof *slot);
    for (int64_t u = 0; u < n_held; u++) {
        int64_t j = held ? held[u] : u;
        slot[probe(t, t->kind[j], t->hi[j], t->lo[j])] = j;
    }
    return 0;
}

/* Room for one more key at half load: grown 4x when n_held reaches it; -1 out of memory. */
static int keep_room(KeyTable *t, const int64_t *held, int64_t n_held)
{
    if (2 * (uint64_t)n_held <= t->mask)
        return 0;
    return rehash(t, t->mask * 4 + 3, held, n_held);
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
        uint64_t s = probe(&t, kind[i], hi[i], lo[i]);
        if (t.slot[s] >= 0) {
            codes_out[i] = codes_out[t.slot[s]];
            continue;
        }
        t.slot[s] = i, codes_out[i] = (int32_t)n_unique, first[n_unique++] = i;
        if (keep_room(&t, first, n_unique) < 0) {
            n_unique = -1;
            break;
        }
    }
    free(t.slot);
    return n_unique;
}

/* Frame i's address keys, one per column (kind 0: none): each column's last source that
 * is present in full. */
static void address_keys(const Frames *f, Slots sl, const AddressCodes *a, int64_t i,
                         uint64_t *hi, uint64_t *lo, int8_t *kind)
{
    const uint8_t *fr, *buf_end = f->buf + f->len;
    int64_t cap = frame_cap(f, i, INT64_MAX, &fr);
    memset(kind, 0, a->n_columns);
    for (int64_t s = 0; s < a->n_sources; s++) {
        const int64_t *row = a->spec + 5 * s;
        int64_t r = slot_get(sl, (int)row[1], i), width = row[3], c = row[0];
        if (r < 0 || r + row[2] + width > cap)
            continue;
        const uint8_t *q = fr + r + row[2];
        hi[c] = width > 8 ? be_wide(q, (int)width - 8, buf_end) : 0;
        lo[c] = width > 8 ? be_wide(q + width - 8, 8, buf_end) : be_wide(q, (int)width, buf_end);
        kind[c] = (int8_t)row[4];
    }
}

/* The code of a key in column c's table, added to its uniques if new; -1 out of memory. */
static int64_t address_code(KeyTable *t, const AddressCodes *a, int64_t c, int8_t kind,
                            uint64_t hi, uint64_t lo)
{
    uint64_t s = probe(t, kind, hi, lo);
    int64_t u = t->slot[s];
    if (u >= 0)
        return u;
    int64_t at = c * a->n, *n_unique = &a->n_unique[c];
    u = (*n_unique)++;
    a->u_hi[at + u] = hi, a->u_lo[at + u] = lo, a->u_kind[at + u] = kind;
    t->slot[s] = u;
    return keep_room(t, NULL, *n_unique) < 0 ? -1 : u;
}

/* Frames this many ahead of the one whose addresses are read are fetched into the cache:
 * this pass comes after the walk has left a window's frames, and each frame's first read
 * here waited on memory (half of the pass's time, perf annotate); 16 frames of ~140 bytes
 * are ~2 KB ahead, far enough to cover the latency, near enough to stay cached. */
#define ADDRESS_PREFETCH 16

/* Every address column factorized straight from the frames (no key arrays): spec rows
 * (column, slot, byte offset, width 4 / 6 / 16, kind), a later present source of a column
 * overwrites. codes[c, i]: first-appearance order, -1 none; column c's unique keys go to
 * u_hi / u_lo / u_kind[c, :n_unique[c]]. Returns -1 if out of memory, else 0. */
int address_codes(const Frames *f, Slots sl, const AddressCodes *a)
{
    KeyTable t[MAX_ADDRESS_COLUMNS];
    uint64_t hi[MAX_ADDRESS_COLUMNS], lo[MAX_ADDRESS_COLUMNS];
    int8_t kind[MAX_ADDRESS_COLUMNS];
    int failed = 0;
    for (int64_t c = 0; c < a->n_columns; c++) {
        KeyTable empty = {NULL, 0, a->u_hi + c * a->n, a->u_lo + c * a->n, a->u_kind + c * a->n};
        t[c] = empty, a->n_unique[c] = 0;
        failed |= rehash(&t[c], 63, NULL, 0) < 0;
    }
    for (int64_t i = 0; i < f->n && !failed; i++) {
        if (i + ADDRESS_PREFETCH < f->n)
            prefetch_frame(f, i + ADDRESS_PREFETCH);
        address_keys(f, sl, a, i, hi, lo, kind);
        for (int64_t c = 0; c < a->n_columns && !failed; c++) {
            int64_t u = kind[c] ? address_code(&t[c], a, c, kind[c], hi[c], lo[c]) : -1;
            failed = kind[c] && u < 0;
            a->codes[c * a->n + i] = (int32_t)u;
        }
    }
    for (int64_t c = 0; c < a->n_columns; c++)
        free(t[c].slot);
    return failed ? -1 : 0;
}
