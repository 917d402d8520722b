/* Record scan: hop from record header to record header of a pcap / pcapng byte window and
 * note, per packet, where its bytes start, how many were captured, its wire length, its
 * timestamp in ns and its link type. Stops at the end of the window, at a record the window
 * does not hold entirely (PARTIAL), at a record that cannot be one (CORRUPT: the caller
 * resynchronises, _kernels_resync.c) or after `limit` packets (LIMIT). Every read is inside
 * [pos, end).
 */
#include <math.h>

#include "_kernels.h"

#define SHB 0x0A0D0D0Au
#define IDB 1u
#define SPB 3u
#define EPB 6u
#define EPB_HEAD 20 /* interface id, timestamp (2 words), captured and wire length */
#define SPB_HEAD 4  /* wire length */

static ScanResult result(int64_t n, int64_t pos, int status)
{
    ScanResult r = {n, pos, status};
    return r;
}

/* When filling, never write past the out arrays, whatever limit the caller gave. */
static int64_t fill_limit(int64_t limit, const ScanOut *out)
{
    return out->room > 0 && out->room < limit ? out->room : limit;
}

/* A record header no writer produces: more captured bytes than any snap length allows
 * (max_cap), or nothing but zeros (a zeroed stretch of the file: no time, no bytes, no
 * length). */
static int bad_pcap_header(const uint8_t *h, int64_t cap, int64_t wire, int64_t max_cap)
{
    return cap > max_cap || (cap == 0 && wire == 0 && rd32(h, 0) == 0 && rd32(h + 4, 0) == 0);
}

/* The scan hops from header to header, each hop waiting for the header it lands on: the
 * bytes this far ahead of it are asked for meanwhile (records lie back to back, so they are
 * the headers to come; a hint, never a read). A page ahead: the 1M-packet bench capture's
 * scan took 41 ms of CPU without, 33 / 29 / 28 ms with 1, 4 and 8 KB. */
#define SCAN_PREFETCH 4096

ScanResult scan_pcap(const uint8_t *buf, int64_t end, int64_t pos, const PcapFile *file,
                     int64_t limit, const ScanOut *out)
{
    int64_t n = 0, frac_ns = file->frac_ns;
    int big = file->big;
    limit = fill_limit(limit, out);
    for (;;) {
        if (pos == end)
            return result(n, pos, SCAN_DONE);
        if (end - pos < 16)
            return result(n, pos, SCAN_PARTIAL);
        const uint8_t *h = buf + pos;
        if (end - pos > SCAN_PREFETCH)
            __builtin_prefetch(h + SCAN_PREFETCH);
        int64_t cap = rd32(h + 8, big), wire = rd32(h + 12, big);
        if (bad_pcap_header(h, cap, wire, file->max_cap))
            return result(n, pos, SCAN_CORRUPT);
        if (end - pos - 16 < cap)
            return result(n, pos, SCAN_PARTIAL);
        if (n >= limit)
            return result(n, pos, SCAN_LIMIT);
        if (out->room > 0) {
            out->off[n] = pos + 16;
            out->cap[n] = cap;
            out->wire[n] = wire > cap ? wire : cap;
            out->ts[n] = (int64_t)((uint64_t)rd32(h, big) * 1000000000u +
                                   (uint64_t)rd32(h + 4, big) * (uint64_t)frac_ns);
            out->lt[n] = file->linktype;
        }
        pos += 16 + cap;
        n++;
    }
}

static uint64_t pow10_saturating(int64_t e)
{
    uint64_t v = 1;
    for (int64_t k = 0; k < e; k++) {
        if (v > UINT64_MAX / 10)
            return UINT64_MAX;
        v *= 10;
    }
    return v;
}

/* pcapng if_tsresol: high bit clear means 10^-v seconds per unit, set means 2^-v.
 * Overflow wraps (a garbage resolution gives a garbage time, never undefined behaviour). */
int64_t units_to_ns(uint64_t units, int64_t tsresol)
{
    if (tsresol & 0x80) {
        int b = (int)(tsresol & 0x7F);
        uint64_t whole = b >= 64 ? 0 : units >> b;
        uint64_t frac = b >= 64 ? units : units - (whole << b);
        int64_t part = (int64_t)((double)frac * (1e9 / ldexp(1.0, b)));
        return (int64_t)(whole * 1000000000u + (uint64_t)part);
    }
    if (tsresol <= 9)
        return (int64_t)(units * pow10_saturating(9 - tsresol));
    return (int64_t)(units / pow10_saturating(tsresol - 9));
}

/* One IDB option (code, value at q + 4, `length` bytes inside the body). */
static void idb_option(const uint8_t *buf, int64_t q, unsigned code, unsigned length, int big,
                       const Interfaces *ifs, int64_t k)
{
    if (code == 9 && length >= 1) {
        ifs->res[k] = buf[q + 4];
    } else if (code == 14 && length == 8) {
        uint64_t hi = rd32(buf + q + 4, big), lo = rd32(buf + q + 8, big);
        uint64_t secs = big ? hi << 32 | lo : lo << 32 | hi;
        ifs->offs[k] = (int64_t)(secs * 1000000000u);
    }
}

/* Register one interface: link type, snap length, if_tsresol and if_tsoffset options.
 * An option whose value would run past the body ends the option list. */
static void read_idb(const uint8_t *buf, int64_t p, int64_t body_end, int big,
                     const Interfaces *ifs)
{
    int64_t k = ifs->state[1];
    if (k >= MAX_INTERFACES || body_end - p < 8)
        return;
    ifs->lt[k] = rd16(buf + p, big);
    ifs->snap[k] = rd32(buf + p + 4, big);
    ifs->res[k] = 6;
    ifs->offs[k] = 0;
    for (int64_t q = p + 8; q + 4 <= body_end;) {
        unsigned code = rd16(buf + q, big), length = rd16(buf + q + 2, big);
        if (code == 0 || q + 4 + length > body_end)
            break;
        idb_option(buf, q, code, length, big, ifs, k);
        q += 4 + ((length + 3) & ~3u);
    }
    ifs->state[1] = k + 1;
}

/* One EPB or SPB. An SPB has no timestamp: like tshark (4.0), its time is 0, the epoch. */
static void fill_packet(const uint8_t *buf, int64_t body, int64_t body_end, int big, int epb,
                        const Interfaces *ifs, int64_t n, const ScanOut *out)
{
    int64_t ifid = 0, cap, wire, data, ts = 0;
    uint64_t units = 0;
    if (epb) {
        ifid = rd32(buf + body, big);
        units = (uint64_t)rd32(buf + body + 4, big) << 32 | rd32(buf + body + 8, big);
        cap = rd32(buf + body + 12, big);
        wire = rd32(buf + body + 16, big);
        data = body + EPB_HEAD;
    } else {
        wire = rd32(buf + body, big);
        data = body + SPB_HEAD;
        cap = wire;
        if (ifs->state[1] > 0 && ifs->snap[0] > 0 && ifs->snap[0] < cap)
            cap = ifs->snap[0];
    }
    if (cap > body_end - data)
        cap = body_end - data;
    if (cap < 0)
        cap = 0;
    out->off[n] = data;
    out->cap[n] = cap;
    out->wire[n] = wire > cap ? wire : cap;
    out->lt[n] = -1; /* a packet of an interface that was never described */
    if (ifid < ifs->state[1]) {
        out->lt[n] = (int32_t)ifs->lt[ifid];
        if (epb)
            ifs->state[2] = (int64_t)((uint64_t)units_to_ns(units, ifs->res[ifid]) +
                                      (uint64_t)ifs->offs[ifid]); /* wraps, never UB */
    }
    if (epb)
        ts = ifs->state[2];
    out->ts[n] = ts;
}

/* The section header's byte-order magic sets the order of everything after it. */
static int section_order(const uint8_t *h, int64_t *state)
{
    if (h[8] == 0x1A && h[9] == 0x2B)
        state[0] = 1;
    else if (h[8] == 0x4D && h[9] == 0x3C)
        state[0] = 0;
    else
        return -1;
    state[1] = 0; /* a new section starts a new interface list */
    return 0;
}

ScanResult scan_pcapng(const uint8_t *buf, int64_t end, int64_t pos, Interfaces ifs,
                       int64_t limit, const ScanOut *out)
{
    int64_t n = 0;
    limit = fill_limit(limit, out);
    for (;;) {
        if (pos == end)
            return result(n, pos, SCAN_DONE);
        if (end - pos < 12)
            return result(n, pos, SCAN_PARTIAL);
        uint32_t btype = rd32(buf + pos, ifs.state[0] == 1);
        if (btype == SHB && section_order(buf + pos, ifs.state) < 0)
            return result(n, pos, SCAN_CORRUPT);
        int big = ifs.state[0] == 1;
        int64_t blen = rd32(buf + pos + 4, big);
        if (blen < 12 || blen % 4 || blen > MAX_RECORD)
            return result(n, pos, SCAN_CORRUPT);
        if (end - pos < blen)
            return result(n, pos, SCAN_PARTIAL);
        if (rd32(buf + pos + blen - 4, big) != (uint32_t)blen) /* the length is repeated last */
            return result(n, pos, SCAN_CORRUPT);
        int64_t body = pos + 8, body_end = pos + blen - 4;
        if (btype == IDB) {
            read_idb(buf, body, body_end, big, &ifs);
        } else if (btype == EPB || btype == SPB) {
            if (body_end - body < (btype == EPB ? EPB_HEAD : SPB_HEAD))
                return result(n, pos, SCAN_CORRUPT);
            if (n >= limit)
                return result(n, pos, SCAN_LIMIT);
            if (out->room > 0)
                fill_packet(buf, body, body_end, big, btype == EPB, &ifs, n, out);
            n++;
        }
        pos += blen;
    }
}
