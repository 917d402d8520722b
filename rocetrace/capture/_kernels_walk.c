/* Per-packet header walk: link layer, VLAN tags, IP, UDP, VXLAN, then the RoCE headers.
 *
 * One pass over frames [start, stop): each frame goes through the stages while its bytes
 * are in cache, and every stage records where headers start (frame-relative, -1 absent) in
 * the slot matrix; the cursor's p is where the next stage looks and etype what it expects
 * there. A VXLAN frame runs the VLAN/IP stages again on its inner frame. Every read is
 * guarded by `offset + width <= cap`.
 */
#include "_kernels.h"

#define ET_IPV4 0x0800
#define ET_IPV6 0x86DD
#define ET_ROCE_V1 0x8915
#define ET_MAC_CONTROL 0x8808
#define PFC_OPCODE 0x0101
#define UDP_PROTO 17

/* One frame on its way through the stages. */
typedef struct {
    const uint8_t *fr;
    int64_t cap, i;
    Slots sl;
    int64_t p, etype; /* where the next stage looks (-1: nothing more) and what it expects */
    RoceAt roce;
    int8_t *encap, *anomaly; /* the window's columns, written at i */
} Walk;

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
static void link_header(Walk *w, int32_t lt)
{
    const uint8_t *fr = w->fr;
    if (lt == LT_ETHERNET) {
        slot_set(w->sl, codes.slot_dmac, w->i, 0);
        slot_set(w->sl, codes.slot_smac, w->i, 6);
        w->p = 14, w->etype = be16(fr + 12);
    } else if (lt == LT_SLL) {
        slot_set(w->sl, codes.slot_smac, w->i, be16(fr + 4) == 6 ? 6 : -1);
        w->p = 16, w->etype = be16(fr + 14);
    } else if (lt == LT_SLL2) {
        slot_set(w->sl, codes.slot_smac, w->i, fr[11] == 6 ? 12 : -1);
        w->p = 20, w->etype = be16(fr);
    } else {
        unsigned version = fr[0] >> 4;
        w->p = 0, w->etype = version == 4 ? ET_IPV4 : version == 6 ? ET_IPV6 : 0;
    }
}

/* Link-layer header: MAC slots, where L3 starts and its EtherType (p = -1 when none). */
static void link_stage(Walk *w, int32_t lt)
{
    w->p = -1;
    if (!supported_link(lt))
        w->anomaly[w->i] = codes.unsupported;
    else if (w->cap < link_header_len(lt))
        w->anomaly[w->i] = codes.trunc_eth;
    else
        link_header(w, lt);
}

/* Step over 802.1Q / QinQ tags; the outermost tag goes to the VLAN slot. */
static void vlan_stage(Walk *w)
{
    while (w->p >= 0 && (w->etype == 0x8100 || w->etype == 0x88A8 || w->etype == 0x9100)) {
        if (w->p + 4 > w->cap) {
            w->p = -1, w->anomaly[w->i] = codes.trunc_eth;
            return;
        }
        if (slot_get(w->sl, codes.slot_vlan, w->i) < 0)
            slot_set(w->sl, codes.slot_vlan, w->i, w->p);
        w->etype = be16(w->fr + w->p + 2), w->p += 4;
    }
}

static int ipv6_extension(unsigned nxt) { return nxt == 0 || nxt == 43 || nxt == 60 || nxt == 44; }

#define L4_CUT -1      /* the IP headers are cut by the capture */
#define L4_NONE -2     /* no L4 header here: a later fragment */
#define L4_BAD -3      /* an IPv4 header no sender writes: version, IHL or total length */

/* What the IP header says about the packet: its protocol, where its lengths say it ends,
 * and whether it is the first fragment of a fragmented datagram. */
typedef struct {
    unsigned proto;
    int64_t end;
    int fragment;
} IpInfo;

/* Skip IPv6 extension headers (each at least 8 bytes, so the loop ends): the L4 offset,
 * L4_CUT if they are cut, L4_NONE after a fragment header of a later fragment. */
static int64_t ipv6_l4(const uint8_t *fr, int64_t p, int64_t cap, IpInfo *ip)
{
    unsigned nxt = fr[p + 6];
    int64_t q = p + 40;
    while (ipv6_extension(nxt)) {
        if (q + 8 > cap)
            return L4_CUT;
        if (nxt == 44) {
            if (be16(fr + q + 2) & 0xFFF8)
                return L4_NONE;
            ip->fragment |= fr[q + 3] & 1; /* M: more fragments follow */
        }
        int64_t step = nxt == 44 ? 8 : ((int64_t)fr[q + 1] + 1) * 8;
        nxt = fr[q], q += step;
    }
    ip->proto = nxt;
    return q;
}

/* L4 offset of the IPv4 header at p (which the capture holds), or L4_NONE / L4_BAD. A total
 * length of 0 is left alone: hosts capture TSO super-packets with it. */
static int64_t ipv4_l4(const uint8_t *fr, int64_t p, IpInfo *ip)
{
    int64_t ihl = (fr[p] & 15) * 4, total = be16(fr + p + 2);
    unsigned frag = be16(fr + p + 6);
    if (fr[p] >> 4 != 4 || ihl < 20 || (total != 0 && total < ihl))
        return L4_BAD;
    if (frag & 0x1FFF)
        return L4_NONE;
    ip->fragment = (frag & 0x2000) != 0; /* MF: the first of several fragments */
    ip->proto = fr[p + 9], ip->end = p + total;
    return p + ihl;
}

/* L4 offset of the IPv4 / IPv6 header at p (L4_CUT, L4_NONE, L4_BAD: see above), with what
 * the header says about the packet. */
static int64_t ip_header(const uint8_t *fr, int64_t cap, int64_t p, int64_t etype, IpInfo *ip)
{
    if (etype == ET_IPV4)
        return p + 20 > cap ? L4_CUT : ipv4_l4(fr, p, ip);
    if (p + 40 > cap)
        return L4_CUT;
    ip->end = p + 40 + be16(fr + p + 4);
    return ipv6_l4(fr, p, cap, ip);
}

static void set_roce(Walk *w, int64_t ip, int64_t bth, int64_t end, int64_t udp)
{
    RoceAt at = {ip, bth, end, udp};
    w->roce = at;
}

/* RoCEv1: EtherType 0x8915, a 40-byte GRH, then the BTH. */
static void roce_v1(Walk *w, int64_t q)
{
    slot_set(w->sl, codes.slot_ip6, w->i, q);
    if (q + 40 > w->cap) {
        w->anomaly[w->i] = codes.trunc_ip;
        return;
    }
    w->encap[w->i] = codes.roce_v1;
    set_roce(w, q, q + 40, q + 40 + be16(w->fr + q + 4), 0);
}

/* UDP at l4 (inside [0, cap - 8]): RoCEv2 to ports[0]; VXLAN to ports[1] moves p to the
 * inner Ethernet header (etype -1) unless this already is the inner frame. A RoCEv2
 * datagram whose UDP length is below 8 or beyond the IP packet, or that is a fragment
 * (RoCEv2 is never fragmented), is decoded but named: the analysis leaves it out. */
static void udp(Walk *w, int64_t q, int64_t l4, const IpInfo *ip, const int64_t *ports,
                int inner)
{
    int64_t dport = be16(w->fr + l4 + 2), length = be16(w->fr + l4 + 4);
    int64_t udp_end = l4 + length;
    if (dport == ports[0]) {
        w->encap[w->i] = inner ? codes.vxlan_roce_v2 : codes.roce_v2;
        if (length < 8 || udp_end > ip->end)
            w->anomaly[w->i] = codes.bad_udp_length;
        else if (ip->fragment)
            w->anomaly[w->i] = codes.ip_fragment;
        set_roce(w, q, l4 + 8, udp_end < ip->end ? udp_end : ip->end, 1);
    } else if (dport == ports[1] && !inner) {
        w->p = l4 + 16, w->etype = -1;
    }
}

static void ip(Walk *w, int64_t q, int64_t et, const int64_t *ports, int inner)
{
    IpInfo info = {0, 0, 0};
    slot_set(w->sl, et == ET_IPV4 ? codes.slot_ip4 : codes.slot_ip6, w->i, q);
    int64_t l4 = ip_header(w->fr, w->cap, q, et, &info);
    if (l4 == L4_CUT) {
        w->anomaly[w->i] = codes.trunc_ip;
    } else if (l4 == L4_BAD) {
        w->anomaly[w->i] = codes.bad_ip_header;
    } else if (l4 >= 0 && info.proto == UDP_PROTO) {
        slot_set(w->sl, codes.slot_udp, w->i, l4);
        if (l4 + 8 > w->cap)
            w->anomaly[w->i] = codes.trunc_ip;
        else
            udp(w, q, l4, &info, ports, inner);
    }
}

/* PFC, RoCEv1, IP/UDP: a RoCE frame gets its RoceAt; a VXLAN frame p = its inner Ethernet
 * offset, etype = -1; any other p = -1. */
static void l3_stage(Walk *w, const int64_t *ports, int inner)
{
    int64_t q = w->p, et = w->etype;
    w->p = -1;
    if (q < 0)
        return;
    if (et == ET_MAC_CONTROL) {
        if (q + 2 <= w->cap && be16(w->fr + q) == PFC_OPCODE) {
            slot_set(w->sl, codes.slot_pfc, w->i, q);
            w->encap[w->i] = codes.pfc;
        }
    } else if (et == ET_ROCE_V1) {
        roce_v1(w, q);
    } else if (et == ET_IPV4 || et == ET_IPV6) {
        ip(w, q, et, ports, inner);
    }
}

/* The Ethernet frame inside VXLAN (at p): its addresses and IP replace the outer ones. */
static void inner_stage(Walk *w)
{
    int64_t q = w->p;
    if (q + 14 > w->cap) {
        w->p = -1, w->anomaly[w->i] = codes.trunc_eth;
        return;
    }
    slot_set(w->sl, codes.slot_dmac, w->i, q);
    slot_set(w->sl, codes.slot_smac, w->i, q + 6);
    slot_set(w->sl, codes.slot_ip4, w->i, -1);
    slot_set(w->sl, codes.slot_ip6, w->i, -1);
    slot_set(w->sl, codes.slot_udp, w->i, -1);
    w->p = q + 14, w->etype = be16(w->fr + q + 12);
}

/* Every stage for frames [start, stop), one frame at a time: link layer, VLAN tags, L3/UDP,
 * the same again inside VXLAN, then the RoCE headers (roce_frame). ports: RoCEv2, VXLAN. */
/* Frames fetched this far ahead of the one walked (as address_codes does, and for the
 * same reason: a frame's first header read waited on memory). */
#define WALK_PREFETCH 16

void walk_range(const Frames *f, const WalkTables *wt, const CrcSlices *crc, Slots sl,
                const WalkOut *out, int64_t start, int64_t stop)
{
    RoceOut roce_out = {out->payload, out->icrc, out->status, out->anomaly};
    for (int64_t i = start; i < stop; i++) {
        if (i + WALK_PREFETCH < stop)
            prefetch_frame(f, i + WALK_PREFETCH);
        Walk w = {.i = i, .sl = sl, .encap = out->encap, .anomaly = out->anomaly};
        w.cap = frame_cap(f, i, MAX_OFFSET, &w.fr);
        w.roce.bth = -1;
        link_stage(&w, wt->lts[i]);
        vlan_stage(&w);
        l3_stage(&w, wt->ports, 0);
        if (w.p >= 0) {
            inner_stage(&w);
            vlan_stage(&w);
            l3_stage(&w, wt->ports, 1);
        }
        if (w.roce.bth >= 0)
            roce_frame(w.fr, w.cap, sl, i, &w.roce, &wt->opcodes, crc, &roce_out);
    }
}
