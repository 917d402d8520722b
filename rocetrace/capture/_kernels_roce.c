/* The RoCE stage of the header walk: BTH, extended headers from the opcode table, payload
 * length and the invariant CRC check. */
#include "_kernels.h"

static uint32_t crc_byte(const uint32_t *table, uint32_t crc, unsigned v)
{
    return table[(crc ^ v) & 0xFF] ^ (crc >> 8);
}

/* The byte of the ICRC input at q: the variant fields (IPv4 TOS/TTL/checksum, IPv6 class,
 * flow label and hop limit, the UDP checksum, BTH byte 4) count as all ones. */
static unsigned icrc_byte(const uint8_t *fr, int64_t q, int64_t ip, int64_t ihl, int v4,
                          int64_t bth, int v2)
{
    unsigned v = fr[q];
    int64_t r = q - ip;
    if (r < ihl) {
        if (v4)
            return r == 1 || r == 8 || r == 10 || r == 11 ? 0xFF : v;
        if (r == 0)
            return v | 0x0F;
        return r < 4 || r == 7 ? 0xFF : v;
    }
    if ((v2 && (q == bth - 2 || q == bth - 1)) || q == bth + 4)
        return 0xFF;
    return v;
}

/* CRC32 over 8 bytes 0xFF + the packet from the IP header (RoCEv1: GRH) to the ICRC, with
 * the variant fields masked (IBTA A17.3.3). Needs 0 <= ip <= bth and end <= cap. */
static uint32_t icrc(const uint8_t *fr, int64_t ip, int64_t bth, int64_t end, int v2,
                     const uint32_t *table)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (int k = 0; k < 8; k++)
        crc = crc_byte(table, crc, 0xFF);
    int v4 = fr[ip] >> 4 == 4;
    int64_t ihl = v4 ? (fr[ip] & 15) * 4 : 40, q = ip, last = end - ICRC_LEN;
    for (; q < last && q <= bth + 4; q++) /* the masked headers */
        crc = crc_byte(table, crc, icrc_byte(fr, q, ip, ihl, v4, bth, v2));
    for (; q < last; q++) /* the rest (the IP header ends before the BTH): as carried */
        crc = crc_byte(table, crc, fr[q]);
    return crc ^ 0xFFFFFFFFu;
}

static int8_t first_of(int8_t found, int8_t later) { return found ? found : later; }

/* Extended headers, payload length and ICRC of a frame whose BTH (at bth) was captured:
 * the first anomaly found, or 0. */
static int8_t after_bth(const uint8_t *fr, int64_t cap, int64_t ip, int64_t bth, int64_t end,
                        int v2, const OpcodeTables *t, const RoceOut *out, Slots sl, int64_t i)
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
        int good = icrc(fr, ip, bth, end, v2, t->crc) == (uint32_t)out->icrc[i];
        out->status[i] = good ? codes.icrc_ok : codes.icrc_bad;
        return first_of(found, good ? 0 : codes.bad_icrc);
    }
    return found;
}

/* roce (4, n): (IP start, BTH offset, packet end from the length fields, has UDP), BTH -1
 * for frames that are not RoCE. A frame keeps the first anomaly found on it. */
void roce_stage(const Frames *f, Slots sl, const int64_t *roce, const OpcodeTables *t,
                const RoceOut *out, int64_t start, int64_t stop)
{
    int64_t n = sl.n;
    for (int64_t i = start; i < stop; i++) {
        int64_t ip = roce[i], bth = roce[n + i], end = roce[2 * n + i];
        if (bth < 0)
            continue;
        const uint8_t *fr;
        int64_t cap = frame_cap(f, i, MAX_OFFSET, &fr);
        slot_set(sl, codes.slot_bth, i, bth);
        out->status[i] = codes.icrc_uncheckable;
        int8_t found = end - bth < BTH_LEN + ICRC_LEN ? codes.short_udp : 0;
        int8_t later;
        if (bth + BTH_LEN > cap)
            later = codes.trunc_bth;
        else
            later = after_bth(fr, cap, ip, bth, end, roce[3 * n + i] == 1, t, out, sl, i);
        out->anomaly[i] = first_of(out->anomaly[i], first_of(found, later));
    }
}
