/* The RoCE stage of the header walk: BTH, extended headers from the opcode table, payload
 * length and the invariant CRC check. */
#include "_kernels.h"

static uint32_t crc_byte(const uint32_t *table, uint32_t crc, unsigned v)
{
    return table[(crc ^ v) & 0xFF] ^ (crc >> 8);
}

/* The slice-by-8 tables of a CRC32 table (once per walk call: 8 KiB, ~2 us). */
void crc_slices(const uint32_t *table, CrcSlices *c)
{
    for (int v = 0; v < 256; v++) {
        c->slice[0][v] = table[v];
        for (int j = 1; j < 8; j++)
            c->slice[j][v] = (c->slice[j - 1][v] >> 8) ^ table[c->slice[j - 1][v] & 0xFF];
    }
    c->after_ones = 0xFFFFFFFFu;
    for (int k = 0; k < 8; k++)
        c->after_ones = crc_byte(table, c->after_ones, 0xFF);
}

static uint32_t crc_bytes(const CrcSlices *c, uint32_t crc, const uint8_t *p, int64_t len)
{
    for (; len >= 8; p += 8, len -= 8) {
        uint32_t lo = le32(p) ^ crc, hi = le32(p + 4);
        crc = c->slice[7][lo & 0xFF] ^ c->slice[6][lo >> 8 & 0xFF] ^
              c->slice[5][lo >> 16 & 0xFF] ^ c->slice[4][lo >> 24] ^ c->slice[3][hi & 0xFF] ^
              c->slice[2][hi >> 8 & 0xFF] ^ c->slice[1][hi >> 16 & 0xFF] ^ c->slice[0][hi >> 24];
    }
    for (; len > 0; p++, len--)
        crc = crc_byte(c->slice[0], crc, *p);
    return crc;
}

/* Set byte r (relative to the IP header) to 0xFF if it is in the window [from, from + len). */
static void set_ff(uint8_t *h, int64_t from, int64_t len, int64_t r)
{
    if (r >= from && r < from + len)
        h[r - from] = 0xFF;
}

/* The ICRC's copy of header bytes [from, from + len) after the IP header start: the variant
 * fields (IPv4 TOS, TTL, checksum; IPv6 class, flow label, hop limit; the UDP checksum;
 * BTH byte 4) all ones. */
static void mask_window(const uint8_t *fr, int64_t ip, int64_t bth, int v2, int64_t from,
                        uint8_t *h, int64_t len)
{
    static const int64_t v4_fields[] = {1, 8, 10, 11}, v6_fields[] = {1, 2, 3, 7};
    int v4 = fr[ip] >> 4 == 4;
    int64_t ihl = v4 ? (fr[ip] & 15) * 4 : 40;
    memcpy(h, fr + ip + from, len);
    for (int k = 0; k < 4; k++)
        if ((v4 ? v4_fields[k] : v6_fields[k]) < ihl)
            set_ff(h, from, len, v4 ? v4_fields[k] : v6_fields[k]);
    if (!v4 && from == 0 && len > 0)
        h[0] |= 0x0F;
    for (int64_t q = bth - 2; q <= bth + 4; q++)
        if (q - ip >= ihl && (q == bth + 4 || (v2 && q < bth)))
            set_ff(h, from, len, q - ip);
}

#define MASK_WINDOW 128 /* IPv4 with options, UDP and 5 BTH bytes fit in one window */

/* CRC32 over 8 bytes 0xFF + the packet from the IP header (RoCEv1: GRH) to the ICRC, with
 * the variant fields masked (IBTA A17.3.3). Needs 0 <= ip <= bth and end <= cap. */
static uint32_t icrc(const uint8_t *fr, int64_t ip, int64_t bth, int64_t end, int v2,
                     const CrcSlices *c)
{
    uint8_t h[MASK_WINDOW];
    int64_t last = end - ICRC_LEN, masked = (bth + 5 < last ? bth + 5 : last) - ip;
    uint32_t crc = c->after_ones;
    for (int64_t from = 0; from < masked; from += MASK_WINDOW) {
        int64_t len = masked - from < MASK_WINDOW ? masked - from : MASK_WINDOW;
        mask_window(fr, ip, bth, v2, from, h, len);
        crc = crc_bytes(c, crc, h, len);
    }
    return crc_bytes(c, crc, fr + ip + masked, last - ip - masked) ^ 0xFFFFFFFFu;
}

static int8_t first_of(int8_t found, int8_t later) { return found ? found : later; }

/* Extended headers, payload length and ICRC of a frame whose BTH (at bth) was captured:
 * the first anomaly found, or 0. */
static int8_t after_bth(const uint8_t *fr, int64_t cap, int64_t ip, int64_t bth, int64_t end,
                        int v2, const OpcodeTables *t, const CrcSlices *crc, const RoceOut *out,
                        Slots sl, int64_t i)
{
    unsigned op = fr[bth];
    int64_t ext = t->lut_len[op];
    if (ext < 0)
        return codes.unknown_opcode;
    for (int k = 0; k < t->n_ext; k++)
        if (t->lut_off[op * t->n_ext + k] >= 0)
            slot_set(sl, codes.slot_ext0 + k, i, bth + BTH_LEN + t->lut_off[op * t->n_ext + k]);
    int64_t length = end - bth - BTH_LEN - ext - ((fr[bth + 1] >> 4) & 3) - ICRC_LEN;
    out->payload[i] = length >= 0 ? length : -1;
    int8_t found = length < 0 ? codes.short_udp : 0;
    if (bth + BTH_LEN + ext > cap)
        return first_of(found, codes.trunc_ext);
    if (bth + BTH_LEN + ICRC_LEN <= end && end <= cap && ip >= 0 && ip <= bth) {
        out->icrc[i] = le32(fr + end - ICRC_LEN);
        int good = icrc(fr, ip, bth, end, v2, crc) == (uint32_t)out->icrc[i];
        out->status[i] = good ? codes.icrc_ok : codes.icrc_bad;
        return first_of(found, good ? 0 : codes.bad_icrc);
    }
    return found;
}

/* BTH, extended headers, payload length and ICRC of a RoCE frame (fr, cap) whose headers
 * the walk found at `at`. The frame keeps the first anomaly found on it. */
void roce_frame(const uint8_t *fr, int64_t cap, Slots sl, int64_t i, const RoceAt *at,
                const OpcodeTables *t, const CrcSlices *crc, const RoceOut *out)
{
    int64_t bth = at->bth, end = at->end;
    slot_set(sl, codes.slot_bth, i, bth);
    out->status[i] = codes.icrc_uncheckable;
    int8_t found = end - bth < BTH_LEN + ICRC_LEN ? codes.short_udp : 0;
    int8_t later;
    if (bth + BTH_LEN > cap)
        later = codes.trunc_bth;
    else
        later = after_bth(fr, cap, at->ip, bth, end, at->udp == 1, t, crc, out, sl, i);
    out->anomaly[i] = first_of(out->anomaly[i], first_of(found, later));
}
