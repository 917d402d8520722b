/* Per-packet header walk: link layer, VLAN tags, IP, UDP, VXLAN.
 *
 * Each stage is one flat loop over frames [start, stop) and records where headers start
 * (frame-relative, -1 absent) in the slot matrix; p[i] is where the next stage looks and
 * etype[i] what it expects there. A VXLAN frame runs the VLAN/IP stages again on its inner
 * frame (inner_stage in between). Every read is guarded by `offset + width <= cap`.
 */
#include "_kernels.h"

#define ET_IPV4 0x0800
#define ET_IPV6 0x86DD
#define ET_ROCE_V1 0x8915
#define ET_MAC_CONTROL 0x8808
#define PFC_OPCODE 0x0101
#define UDP_PROTO 17

static int supported_link(int32_t lt)
{
    return lt == LT_ETHERNET || lt == LT_SLL || lt == LT_SLL2 || lt == LT_RAW ||
           lt == LT_IPV4 || lt == LT_IPV6;
}

static int64_t link_header_len(int32_t lt)
{
    return lt == LT_ETHERNET ? 14 : lt == LT_SLL ? 16 : lt == LT_SLL2 ? 20 : 1;
}

/* Link-layer header of a frame that holds it: MAC slots, L3 offset and EtherType. */
static void link_header(const uint8_t *fr, int32_t lt, Slots sl, int64_t i, int64_t *p,
                        int64_t *etype)
{
    if (lt == LT_ETHERNET) {
        slot_set(sl, codes.slot_dmac, i, 0);
        slot_set(sl, codes.slot_smac, i, 6);
        *p = 14, *etype = be16(fr + 12);
    } else if (lt == LT_SLL) {
        slot_set(sl, codes.slot_smac, i, be16(fr + 4) == 6 ? 6 : -1);
        *p = 16, *etype = be16(fr + 14);
    } else if (lt == LT_SLL2) {
        slot_set(sl, codes.slot_smac, i, fr[11] == 6 ? 12 : -1);
        *p = 20, *etype = be16(fr);
    } else {
        unsigned version = fr[0] >> 4;
        *p = 0, *etype = version == 4 ? ET_IPV4 : version == 6 ? ET_IPV6 : 0;
    }
}

void link_stage(const Frames *f, const int32_t *lts, Slots sl, int64_t *p, int64_t *etype,
                int8_t *anomaly, int64_t start, int64_t stop)
{
    for (int64_t i = start; i < stop; i++) {
        const uint8_t *fr;
        int64_t cap = frame_cap(f, i, MAX_OFFSET, &fr);
        p[i] = -1;
        if (!supported_link(lts[i]))
            anomaly[i] = codes.unsupported;
        else if (cap < link_header_len(lts[i]))
            anomaly[i] = codes.trunc_eth;
        else
            link_header(fr, lts[i], sl, i, &p[i], &etype[i]);
    }
}

/* Step over 802.1Q / QinQ tags; the outermost tag goes to the VLAN slot. */
void vlan_stage(const Frames *f, Slots sl, int64_t *p, int64_t *etype, int8_t *anomaly,
                int64_t start, int64_t stop)
{
    for (int64_t i = start; i < stop; i++) {
        const uint8_t *fr;
        int64_t cap = frame_cap(f, i, MAX_OFFSET, &fr);
        while (p[i] >= 0 && (etype[i] == 0x8100 || etype[i] == 0x88A8 || etype[i] == 0x9100)) {
            if (p[i] + 4 > cap) {
                p[i] = -1, anomaly[i] = codes.trunc_eth;
                break;
            }
            if (slot_get(sl, codes.slot_vlan, i) < 0)
                slot_set(sl, codes.slot_vlan, i, p[i]);
            etype[i] = be16(fr + p[i] + 2), p[i] += 4;
        }
    }
}

static int ipv6_extension(unsigned nxt) { return nxt == 0 || nxt == 43 || nxt == 60 || nxt == 44; }

/* Skip IPv6 extension headers (each at least 8 bytes, so the loop ends): the L4 offset, or
 * -1 if they are cut. */
static int64_t ipv6_l4(const uint8_t *fr, int64_t p, int64_t cap, unsigned *proto)
{
    unsigned nxt = fr[p + 6];
    int64_t q = p + 40;
    while (ipv6_extension(nxt)) {
        if (q + 8 > cap)
            return -1;
        int64_t step = nxt == 44 ? 8 : ((int64_t)fr[q + 1] + 1) * 8;
        nxt = fr[q], q += step;
    }
    *proto = nxt;
    return q;
}

/* L4 offset of the IPv4 / IPv6 header at p (-1 cut, -2 none: a later fragment), with its
 * protocol and where the IP lengths say the packet ends. */
static int64_t ip_header(const uint8_t *fr, int64_t cap, int64_t p, int64_t etype,
                         unsigned *proto, int64_t *ip_end)
{
    if (etype == ET_IPV4) {
        if (p + 20 > cap)
            return -1;
        if (be16(fr + p + 6) & 0x1FFF)
            return -2;
        *proto = fr[p + 9], *ip_end = p + be16(fr + p + 2);
        return p + (fr[p] & 15) * 4;
    }
    if (p + 40 > cap)
        return -1;
    *ip_end = p + 40 + be16(fr + p + 4);
    return ipv6_l4(fr, p, cap, proto);
}

static void set_roce(int64_t *roce, int64_t n, int64_t i, int64_t ip, int64_t bth, int64_t end,
                     int64_t udp)
{
    roce[i] = ip, roce[n + i] = bth, roce[2 * n + i] = end, roce[3 * n + i] = udp;
}

/* RoCEv1: EtherType 0x8915, a 40-byte GRH, then the BTH. */
static void roce_v1(const uint8_t *fr, int64_t cap, int64_t q, Slots sl, int64_t i,
                    int8_t *encap, int8_t *anomaly, int64_t *roce)
{
    slot_set(sl, codes.slot_ip6, i, q);
    if (q + 40 > cap) {
        anomaly[i] = codes.trunc_ip;
        return;
    }
    encap[i] = codes.roce_v1;
    set_roce(roce, sl.n, i, q, q + 40, q + 40 + be16(fr + q + 4), 0);
}

/* UDP at l4 (inside [0, cap - 8]): RoCEv2 to ports[0]; VXLAN to ports[1] moves p to the
 * inner Ethernet header (etype -1) unless this already is the inner frame. */
static void udp(const uint8_t *fr, int64_t q, int64_t l4, int64_t ip_end, const int64_t *ports,
                int inner, Slots sl, int64_t i, int64_t *p, int64_t *etype, int8_t *encap,
                int64_t *roce)
{
    int64_t dport = be16(fr + l4 + 2), udp_end = l4 + be16(fr + l4 + 4);
    if (dport == ports[0]) {
        encap[i] = inner ? codes.vxlan_roce_v2 : codes.roce_v2;
        set_roce(roce, sl.n, i, q, l4 + 8, udp_end < ip_end ? udp_end : ip_end, 1);
    } else if (dport == ports[1] && !inner) {
        p[i] = l4 + 16, etype[i] = -1;
    }
}

static void ip(const uint8_t *fr, int64_t cap, int64_t q, int64_t et, const int64_t *ports,
               int inner, Slots sl, int64_t i, int64_t *p, int64_t *etype, int8_t *encap,
               int8_t *anomaly, int64_t *roce)
{
    unsigned proto = 0;
    int64_t ip_end = 0;
    slot_set(sl, et == ET_IPV4 ? codes.slot_ip4 : codes.slot_ip6, i, q);
    int64_t l4 = ip_header(fr, cap, q, et, &proto, &ip_end);
    if (l4 == -1) {
        anomaly[i] = codes.trunc_ip;
    } else if (l4 >= 0 && proto == UDP_PROTO) {
        slot_set(sl, codes.slot_udp, i, l4);
        if (l4 + 8 > cap)
            anomaly[i] = codes.trunc_ip;
        else
            udp(fr, q, l4, ip_end, ports, inner, sl, i, p, etype, encap, roce);
    }
}

/* PFC, RoCEv1, IP/UDP. roce (4, n) gets (IP start, BTH, end from lengths, has UDP) of RoCE
 * frames; a VXLAN frame gets p = its inner Ethernet offset, etype = -1; others p = -1. */
void l3_stage(const Frames *f, Slots sl, int64_t *p, int64_t *etype, int8_t *encap,
              int8_t *anomaly, int64_t *roce, const int64_t *ports, int inner, int64_t start,
              int64_t stop)
{
    for (int64_t i = start; i < stop; i++) {
        const uint8_t *fr;
        int64_t cap = frame_cap(f, i, MAX_OFFSET, &fr), q = p[i], et = etype[i];
        p[i] = -1;
        if (q < 0)
            continue;
        if (et == ET_MAC_CONTROL) {
            if (q + 2 <= cap && be16(fr + q) == PFC_OPCODE) {
                slot_set(sl, codes.slot_pfc, i, q);
                encap[i] = codes.pfc;
            }
        } else if (et == ET_ROCE_V1) {
            roce_v1(fr, cap, q, sl, i, encap, anomaly, roce);
        } else if (et == ET_IPV4 || et == ET_IPV6) {
            ip(fr, cap, q, et, ports, inner, sl, i, p, etype, encap, anomaly, roce);
        }
    }
}

/* The Ethernet frame inside VXLAN: its addresses and IP replace the outer ones. */
void inner_stage(const Frames *f, Slots sl, int64_t *p, int64_t *etype, int8_t *anomaly,
                 int64_t start, int64_t stop)
{
    for (int64_t i = start; i < stop; i++) {
        const uint8_t *fr;
        int64_t cap = frame_cap(f, i, MAX_OFFSET, &fr), q = p[i];
        if (q < 0)
            continue;
        if (q + 14 > cap) {
            p[i] = -1, anomaly[i] = codes.trunc_eth;
            continue;
        }
        slot_set(sl, codes.slot_dmac, i, q);
        slot_set(sl, codes.slot_smac, i, q + 6);
        slot_set(sl, codes.slot_ip4, i, -1);
        slot_set(sl, codes.slot_ip6, i, -1);
        slot_set(sl, codes.slot_udp, i, -1);
        p[i] = q + 14, etype[i] = be16(fr + q + 12);
    }
}
