/* The capture kernels of rocetrace.capture._kernels: shared types and byte readers.
 *
 * Every kernel reads untrusted capture bytes. A frame is (base, cap) in one buffer; the
 * kernels see its cap already clipped to the buffer (frame_cap), and every read below is
 * guarded by an explicit `offset + width <= cap` test at its call site.
 */
#ifndef ROCETRACE_KERNELS_H
#define ROCETRACE_KERNELS_H

#include <stdint.h>
#include <string.h>

#define MAX_OFFSET 32767 /* headers are looked for in a frame's first 32 KiB (int16 slots) */
#define MAX_INTERFACES 4096
#define MAX_RECORD (1 << 28) /* a record claiming more than 256 MiB is garbage */
#define BTH_LEN 12
#define ICRC_LEN 4

enum scan_status { SCAN_DONE, SCAN_LIMIT, SCAN_PARTIAL, SCAN_CORRUPT };
enum link_type {
    LT_ETHERNET = 1, LT_RAW = 101, LT_SLL = 113, LT_IPV4 = 228, LT_IPV6 = 229, LT_SLL2 = 276
};

/* Category codes and slot rows, set once from rocetrace.schema and capture.layers. */
typedef struct {
    int8_t trunc_eth, trunc_ip, unsupported, short_udp, trunc_bth, trunc_ext;
    int8_t unknown_opcode, bad_icrc;
    int8_t roce_v2, roce_v1, vxlan_roce_v2, pfc;
    int8_t icrc_ok, icrc_bad, icrc_uncheckable;
    int slot_smac, slot_dmac, slot_vlan, slot_ip4, slot_ip6, slot_udp, slot_bth, slot_pfc;
    int slot_ext0;
    int8_t bad_ip_header, ip_fragment, bad_udp_length;
} Codes;

extern Codes codes;

/* The frames of one window: frame i is buf[base[i] : base[i] + caps[i]]. */
typedef struct {
    const uint8_t *buf;
    int64_t len;
    const int64_t *base, *caps;
    int64_t n;
} Frames;

/* The slot matrix: int16 header offsets, row per slot, column per frame, -1 absent. */
typedef struct {
    int16_t *v;
    int64_t n;
    int64_t rows;
} Slots;

/* Frame i's first byte and its cap clipped to the buffer and to `limit` (0 if base is
 * outside the buffer): a kernel may read fr[0 .. cap) and nothing else. */
static inline int64_t frame_cap(const Frames *f, int64_t i, int64_t limit, const uint8_t **fr)
{
    int64_t b = f->base[i], cap = f->caps[i];
    *fr = f->buf;
    if (b < 0 || b > f->len)
        return 0;
    *fr = f->buf + b;
    if (cap > f->len - b)
        cap = f->len - b;
    if (cap > limit)
        cap = limit;
    return cap < 0 ? 0 : cap;
}

/* Ask for the cache lines of frame i's headers (its first 128 bytes at most): a pass that
 * reads frames one after the other calls it for a frame some way ahead, so that frame's
 * bytes have arrived when the pass gets there. A hint only, and only inside the buffer. */
static inline void prefetch_frame(const Frames *f, int64_t i)
{
    int64_t b = f->base[i];
    if (b < 0 || b >= f->len)
        return;
    __builtin_prefetch(f->buf + b);
    if (f->len - b > 64)
        __builtin_prefetch(f->buf + b + 64);
}

static inline int16_t slot_get(Slots sl, int slot, int64_t i) { return sl.v[slot * sl.n + i]; }

/* Offsets a slot cannot hold (beyond the 32 KiB the walk looks at) mean "absent". */
static inline void slot_set(Slots sl, int slot, int64_t i, int64_t off)
{
    sl.v[slot * sl.n + i] = (int16_t)(off >= 0 && off <= MAX_OFFSET ? off : -1);
}

static inline unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

static inline uint32_t rd16(const uint8_t *p, int big)
{
    return big ? (uint32_t)p[0] << 8 | p[1] : (uint32_t)p[1] << 8 | p[0];
}

static inline uint32_t rd32(const uint8_t *p, int big)
{
    return big ? rd16(p, 1) << 16 | rd16(p + 2, 1) : rd16(p + 2, 0) << 16 | rd16(p, 0);
}

static inline uint32_t le32(const uint8_t *p) { return rd32(p, 0); }

/* The big-endian integer of p[0 : span] (span 1..8). */
static inline uint64_t be_bytes(const uint8_t *p, int span)
{
    uint64_t v = 0;
    for (int k = 0; k < span; k++)
        v = v << 8 | p[k];
    return v;
}

/* be_bytes with one 8-byte load when the buffer holds 8 bytes from p (end: buffer end). */
static inline uint64_t be_wide(const uint8_t *p, int span, const uint8_t *end)
{
    if (end - p >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        return __builtin_bswap64(v) >> (64 - 8 * span);
    }
    return be_bytes(p, span);
}

/* records */
typedef struct {
    int64_t *off, *cap, *wire, *ts;
    int32_t *lt;
    int64_t room; /* entries the out arrays hold; 0 = count only */
} ScanOut;

typedef struct {
    int64_t *state; /* big-endian flag, interface count, last timestamp */
    int64_t *lt, *res, *snap, *offs;
} Interfaces;

typedef struct {
    int64_t n, pos;
    int status;
} ScanResult;

/* What a pcap file's global header says: byte order, ns per timestamp fraction, link type,
 * and the largest plausible captured length (its snap length, at least 256 KiB). */
typedef struct {
    int big;
    int64_t frac_ns;
    int32_t linktype;
    int64_t max_cap;
} PcapFile;

ScanResult scan_pcap(const uint8_t *buf, int64_t end, int64_t pos, const PcapFile *file,
                     int64_t limit, const ScanOut *out);
ScanResult scan_pcapng(const uint8_t *buf, int64_t end, int64_t pos, Interfaces ifs,
                       int64_t limit, const ScanOut *out);
int64_t units_to_ns(uint64_t units, int64_t tsresol);

/* resynchronisation: SCAN_DONE found at pos, SCAN_PARTIAL decide with more bytes from pos,
 * SCAN_CORRUPT nothing readable up to the end */
ScanResult resync_pcap(const uint8_t *buf, int64_t end, int64_t from, int last,
                       const PcapFile *file, int strict);
ScanResult resync_pcapng(const uint8_t *buf, int64_t end, int64_t from, int last, int big,
                         int64_t n_interfaces, int strict);

/* walk and roce */
typedef struct {
    const int32_t *lut_off; /* (256, n_ext): extended header offsets after the BTH, -1 */
    const int32_t *lut_len; /* (256,): their total length, -1 for an unknown opcode */
    int n_ext;
    const uint32_t *crc; /* (256,) reflected CRC32 table */
} OpcodeTables;

typedef struct {
    int64_t *payload, *icrc;
    int8_t *status, *anomaly;
} RoceOut;

typedef struct {
    int8_t *encap, *anomaly;
    int64_t *payload, *icrc;
    int8_t *status;
} WalkOut;

/* Where a RoCE frame's headers are (frame-relative): the IP header (RoCEv1: GRH), the BTH
 * (-1: not RoCE), the end the length fields give, and 1 if it came in UDP (RoCEv2). */
typedef struct {
    int64_t ip, bth, end, udp;
} RoceAt;

/* Slice-by-8 tables of the reflected CRC32: slice[j][v] is the register after byte v and
 * j zero bytes, so eight bytes cost eight lookups and no dependency chain per byte. */
typedef struct {
    uint32_t slice[8][256];
    uint32_t after_ones; /* the register after the 8 bytes 0xFF the ICRC starts with */
} CrcSlices;

/* What the walk looks at besides the frames: their link types, the UDP ports (RoCEv2,
 * VXLAN) and the opcode table. */
typedef struct {
    const int32_t *lts;
    const int64_t *ports;
    OpcodeTables opcodes;
} WalkTables;

void crc_slices(const uint32_t *table, CrcSlices *c);
void roce_frame(const uint8_t *fr, int64_t cap, Slots sl, int64_t i, const RoceAt *at,
                const OpcodeTables *t, const CrcSlices *crc, const RoceOut *out);
void walk_range(const Frames *f, const WalkTables *wt, const CrcSlices *crc, Slots sl,
                const WalkOut *out, int64_t start, int64_t stop);

/* columns */
typedef struct {
    const int64_t *spec; /* (sources, 7): slot, byte offset, span, shift, kind, row, column */
    const uint64_t *masks;
    int64_t n_sources;
    uint8_t *out8;
    uint16_t *out16;
    uint32_t *out32;
    uint64_t *out64;
    uint8_t *flags, *vbits; /* (rows, nbytes) bitmaps, 8 frames per byte */
    int64_t nbytes, n_columns;
    int64_t *counts;
} Gather;

#define MAX_ADDRESS_COLUMNS 8

typedef struct {
    const int64_t *spec; /* (sources, 5): column, slot, byte offset, width, kind */
    int64_t n_sources, n_columns, n;
    int32_t *codes;            /* (columns, n) */
    uint64_t *u_hi, *u_lo;     /* (columns, n): each column's unique keys, in code order */
    int8_t *u_kind;            /* (columns, n) */
    int64_t *n_unique;         /* (columns,) */
} AddressCodes;

void walk_gather(const Frames *f, const WalkTables *wt, Slots sl, const WalkOut *out,
                 const Gather *g, int64_t start, int64_t stop);
int address_codes(const Frames *f, Slots sl, const AddressCodes *a);
int64_t factorize_keys(const uint64_t *hi, const uint64_t *lo, const int8_t *kind, int64_t n,
                       int32_t *codes, int64_t *first);

#endif
