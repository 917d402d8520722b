/* Resynchronisation after a record the scan could not read (SCAN_CORRUPT: a caplen no
 * snap length allows, a block length that is not a multiple of 4 or differs from its copy at
 * the block's end, a bad byte-order magic; or a record running past the end of the file
 * while bytes follow it). The scan resumes at the first position from which a chain of
 * plausible records follows, as RAPCAP and slicecap judge pcap record headers and pcapng
 * readers judge blocks (known type, sane length, the same length again at the block's end).
 *
 * Only called on damage: the scan of a sound file never comes here. A candidate costs a few
 * compares and most fail at the first, so skipping garbage costs about a nanosecond a byte.
 * `strict` (deciding whether a record cut by the end of the file is a mere incomplete tail)
 * takes only a whole chain: a few plausible records of zeros inside the cut record's bytes
 * must not pass for damage. Every read is inside [from, end).
 */
#include "_kernels.h"

#define CHAIN 3            /* records that must follow one another from a candidate */
#define MIN_CAP 14         /* an Ethernet header: no capture keeps less of a frame */
#define MIN_WIRE_MAX (1 << 18) /* no frame on a wire is longer than 256 KiB (TSO included) */
#define DAY 86400          /* one record of a chain follows the one before within a day */
#define SHB 0x0A0D0D0Au
#define EPB 6u

enum verdict { REJECT, ACCEPT, MORE };

static ScanResult found(int64_t pos, int status)
{
    ScanResult r = {0, pos, status};
    return r;
}

/* The verdict on a chain that ran out of bytes after `records` whole plausible records:
 * in the last window, enough records to trust it (the scan then reads them and flags an
 * incomplete last record if there is one); elsewhere, ask for more bytes. */
static int chain_at_end(int last, int records, int needed)
{
    if (!last)
        return MORE;
    return needed > 0 && records >= needed ? ACCEPT : REJECT;
}

/* A pcap record header that a writer could have produced; its time must follow the chain's
 * previous record (prev_sec < 0: first of the chain) within a day. */
static int plausible_pcap(const uint8_t *h, const PcapFile *f, int64_t prev_sec)
{
    int64_t cap = rd32(h + 8, f->big), wire = rd32(h + 12, f->big);
    int64_t wire_max = f->max_cap > MIN_WIRE_MAX ? f->max_cap : MIN_WIRE_MAX;
    if (cap > f->max_cap || cap < MIN_CAP || wire < cap || wire > wire_max)
        return 0;
    if (rd32(h + 4, f->big) >= (f->frac_ns == 1 ? 1000000000u : 1000000u))
        return 0;
    int64_t sec = rd32(h, f->big);
    return prev_sec < 0 || (sec >= prev_sec - DAY && sec <= prev_sec + DAY);
}

/* short: whole records that suffice when the data ends (0: only a whole chain will do) */
static int pcap_chain(const uint8_t *buf, int64_t end, int64_t p, int last, const PcapFile *f,
                      int short_chain)
{
    int64_t prev_sec = -1;
    for (int k = 0; k < CHAIN; k++) {
        if (end - p < 16)
            return chain_at_end(last, k, short_chain);
        if (!plausible_pcap(buf + p, f, prev_sec))
            return REJECT;
        prev_sec = rd32(buf + p, f->big);
        p += 16 + rd32(buf + p + 8, f->big);
        if (p > end)
            return chain_at_end(last, k, short_chain);
    }
    return ACCEPT;
}

ScanResult resync_pcap(const uint8_t *buf, int64_t end, int64_t from, int last,
                       const PcapFile *file, int strict)
{
    for (int64_t p = from; p < end; p++) {
        int v = pcap_chain(buf, end, p, last, file, strict ? 0 : 2);
        if (v != REJECT)
            return found(p, v == ACCEPT ? SCAN_DONE : SCAN_PARTIAL);
    }
    return last ? found(end, SCAN_CORRUPT) : found(end, SCAN_PARTIAL);
}

static int known_block(uint32_t type)
{
    return (type >= 1 && type <= 10) || type == SHB || type == 0xBADu || type == 0x40000BADu;
}

/* The shortest block of each type that can hold its fixed fields. */
static int64_t shortest_block(uint32_t type)
{
    return type == SHB ? 28 : type == EPB ? 32 : type == 1 ? 20 : 12;
}

/* The block at p: its length when it is a whole plausible block (an SHB switches *big to its
 * own byte order), 0 when it is not one, -1 when the window ends inside it. */
static int64_t plausible_block(const uint8_t *buf, int64_t end, int64_t p, int *big,
                               int64_t *n_interfaces)
{
    if (end - p < 12)
        return -1;
    uint32_t type = rd32(buf + p, *big);
    int b = *big;
    if (type == SHB) {
        if ((buf[p + 8] != 0x1A || buf[p + 9] != 0x2B) && (buf[p + 8] != 0x4D || buf[p + 9] != 0x3C))
            return 0;
        b = buf[p + 8] == 0x1A;
    } else if (!known_block(type)) {
        return 0;
    }
    int64_t blen = rd32(buf + p + 4, b);
    if (blen < shortest_block(type) || blen % 4 || blen > MAX_RECORD)
        return 0;
    if (end - p < blen)
        return -1;
    if (rd32(buf + p + blen - 4, b) != (uint32_t)blen)
        return 0;
    if (type == EPB && ((*n_interfaces > 0 && rd32(buf + p + 8, b) >= *n_interfaces) ||
                        rd32(buf + p + 20, b) > blen - 32))
        return 0;
    *big = b;
    if (type == SHB)
        *n_interfaces = 0; /* a new section describes its own interfaces */
    return blen;
}

static int pcapng_chain(const uint8_t *buf, int64_t end, int64_t p, int last, int big,
                        int64_t n_interfaces, int strict)
{
    for (int k = 0; k < CHAIN; k++) {
        if (p == end) /* whole blocks, lengths repeated: one will do */
            return chain_at_end(last, k, strict ? 0 : 1);
        int64_t blen = plausible_block(buf, end, p, &big, &n_interfaces);
        if (blen == 0)
            return REJECT;
        if (blen < 0)
            return chain_at_end(last, k, strict ? 0 : 2);
        p += blen;
    }
    return ACCEPT;
}

ScanResult resync_pcapng(const uint8_t *buf, int64_t end, int64_t from, int last, int big,
                         int64_t n_interfaces, int strict)
{
    for (int64_t p = from; p < end; p++) {
        int v = pcapng_chain(buf, end, p, last, big, n_interfaces, strict);
        if (v != REJECT)
            return found(p, v == ACCEPT ? SCAN_DONE : SCAN_PARTIAL);
    }
    return last ? found(end, SCAN_CORRUPT) : found(end, SCAN_PARTIAL);
}
