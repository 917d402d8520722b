/* rocetrace.analysis._connection: the per-connection state machine, as a CPython module.
 *
 * One pass over every conversation's events in capture order (timestamp, then frame). A
 * conversation is one requester direction of a connection: its request packets and the
 * responses that answer them (ACK, NAK, RNR NAK, READ responses, atomic ACKs). The pass
 * keeps the IBTA requester's state as the capture shows it (highest PSN sent, highest PSN
 * acknowledged, NAKs not yet answered, outstanding READ spans) and the responder's
 * (expected PSN), and writes per event what it was (new data, resend, PSN reuse, stale or
 * unsent ACK, out of sequence) and per retransmission episode the evidence it rests on.
 * It decides nothing that needs a clock tolerance beyond `tol`: the Python side
 * (episodes.py) weighs the evidence with the capture's own tolerances.
 *
 * Arrays come in through the buffer protocol (_buffers.h), checked before the GIL is
 * released. Episodes and anomalies come back as bytes of packed int64 records.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../capture/_buffers.h"

#define PSN_MOD ((int64_t)1 << 24)
#define HALF ((int64_t)1 << 23)
#define NONE (INT64_MIN / 4)

/* Event kinds (rocetrace.analysis.prepared). */
enum { K_OTHER, K_REQUEST, K_READ_RESPONSE, K_ACK, K_NAK, K_RNR, K_ATOMIC_ACK };
/* Message positions (prepared.py). */
enum { P_NONE, P_FIRST, P_MIDDLE, P_LAST, P_ONLY };
/* Per-event flags (connection.py mirrors them). */
enum {
    F_NEW = 1,        /* request: new data (its last PSN beyond every PSN sent before) */
    F_RESENT = 2,     /* request / response: PSN not beyond the highest seen before */
    F_GAP = 4,        /* PSNs skipped just before it */
    F_REUSE = 8,      /* request: a different request at a PSN already used */
    F_STALE = 16,     /* NAK / RNR NAK of a PSN already acknowledged */
    F_UNSENT = 32,    /* ACK / NAK of a PSN never sent */
    F_OOS = 64,       /* request: first out-of-sequence arrival for the responder */
    F_LATE = 128,     /* request: first copy of a PSN below the highest sent */
    F_ADVANCE = 256,  /* ACK / NAK / response: acknowledged something new */
    F_REORDER = 512,  /* request: a late original (reordered), no resend */
    F_OPEN = 1024,    /* request: a first copy, or the restart beside it, of which the capture
                         cannot tell whether the first copy was a late original or a resend */
};
/* How an episode began (Episode.start_kind). */
enum { S_FIRST, S_RESTART, S_ASKED, S_REISSUE, S_TIMER };
/* Run.reserved per event (episodes.py, reserved_naks). */
enum { RESERVED_NAK = 1, ANSWERS_RESERVED = 2 };
/* Anomaly kinds. */
enum { A_REUSE = 1, A_UNSENT = 2, A_REORDER = 3 };
/* The shortest IBTA ACK timeout (4.096 us * 2^1): no timer resend comes sooner than this
 * after the gap it fills. A protocol constant (tolerances.py: MIN_ACK_TIMEOUT_NS). */
#define MIN_ACK_TIMEOUT_NS 8192

/* The episode record: every field int64 (connection.py: EPISODE_FIELDS, same order). */
typedef struct {
    int64_t conv, first_ev, last_ev, n_resent, start_ext, end_ext, sent_hi, last_sent_first;
    int64_t acked, acked_ev, nak_ev, nak_ext, nak_kind, prev_ev, prev_req_ev;
    int64_t progress_ev, contiguous, skips, skipped, ack_skips, tail_skips, start_pos;
    int64_t start_opcode, read_ev, resp_hi, resp_hi_ev, orig_ev, n_resp, resumed, cursor;
    int64_t cut_of, new_naks, start_kind, msg_first, nak_early, cut_by_split, own_nak_seen;
    int64_t read_resp_hi; /* READ asked again: the highest response of it seen before */
    int64_t unasked;      /* resends past the first, not the newest PSN sent before the
                             episode, and no NAK of their own seen: only go-back-N sends them */
    int64_t near_split;   /* a resend kept in the run though a NAK of its PSN came not much
                             sooner than the path's answers take (half the gate or more) */
    int64_t alt_of;       /* the run this episode's first resend would continue if the NAK
                             it was split off for was not its trigger (-1 none; -2 two such
                             runs) */
    int64_t read_naked;   /* READ asked again: a NAK of a PSN of its span up to the asked one
                             was seen (the resend may answer it) */
    int64_t alt_lo;       /* a restart that may continue several runs on one chain: the
                             oldest (-1: only alt_of) */
    int64_t taken_split;  /* a resend kept in the run whose PSN's NAK an episode took in
                             doubt (taken_in_doubt; that episode, -1 none): were the split
                             more of its run, or the restart its own PSN's answer, the NAK
                             would have split this one */
    int64_t near_taken;   /* a restart for a NAK of a PSN the open run went on through not
                             much after that NAK (near_split), no run to resume: had that
                             resend answered the NAK, the restart would have no cause */
    int64_t split_by;     /* cut_by_split: the split that cut the run (-1 none, -2 several) */
    int64_t alt_two;      /* a split (S_ASKED) that may continue either of two runs (alt_of
                             -2): the cut run it would resume; the other is cut_of (-1 none) */
    int64_t swapped;      /* a split whose first resend came right after the run it cut
                             resent the same PSN (swap_resumed_copy, 1), or whose whole
                             selective repeat the run it cut resumed right after at its
                             first PSN (after_whole_repeat, 2): no more of that run */
} Episode;
#define EPISODE_FIELDS (sizeof(Episode) / sizeof(int64_t))

typedef struct {
    int64_t kind, ev, other_ev, conv;
} Anomaly;

typedef struct {
    int64_t ext;
    int64_t msg_first; /* first PSN of the message this PSN belongs to, NONE unknown */
    int32_t ev;        /* events and conversations: int32 (the run refuses 2^31 events), */
    int32_t conv;      /* 32 bytes a slot, not 40; conv: the conversation that sent it (the
                          ring is shared by all of them) */
    int32_t count;
    int16_t opcode;
} Slot;
#define RING_BITS 18
#define RING ((int64_t)1 << RING_BITS)

typedef struct {
    int64_t first, end, ev, resp_hi, reissue_ep;
} Read;

typedef struct {
    int64_t ev, ext, kind, taken;
    int64_t taker; /* the episode that took it, -1 none */
} Nak;

typedef struct {
    int64_t lo, hi, ev; /* PSNs a new request skipped, and that request */
} Gap;

/* Growable arrays (malloc'd; freed on every way out). */
#define VEC(T)                                                                                  \
    struct {                                                                                    \
        T *at;                                                                                  \
        Py_ssize_t n, cap;                                                                      \
    }
typedef VEC(Episode) Episodes;
typedef VEC(Anomaly) Anomalies;
typedef VEC(Read) Reads;
typedef VEC(Nak) Naks;
typedef VEC(Gap) Gaps;

static int grow(void **at, Py_ssize_t *cap, Py_ssize_t need, size_t item)
{
    if (need <= *cap)
        return 1;
    Py_ssize_t cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need)
        cap2 *= 2;
    void *p = realloc(*at, (size_t)cap2 * item);
    if (!p)
        return 0;
    *at = p;
    *cap = cap2;
    return 1;
}
#define PUSH(v, x) (grow((void **)&(v).at, &(v).cap, (v).n + 1, sizeof(*(v).at)) ? ((v).at[(v).n++] = (x), 1) : 0)

/* Inputs and outputs of one run. */
typedef struct {
    const int32_t *conv; /* conversation ids fit int32 (fewer than the 2^31 events) */
    const int64_t *ts;
    const int32_t *span;    /* PSNs each event occupies; span_wide instead (not NULL) when a */
    const int64_t *span_wide; /* READ's span passes int32 (a hostile MTU) */
    const int32_t *psn; /* 24-bit PSNs, -1 none */
    const int64_t *gate; /* per conversation: a NAK's answer comes at least this long after
                            it at this capture point (ns; -1 unknown: order only) */
    const int64_t *paused; /* per event: PFC pause of its conversation's priority since the
                              conversation's first event (ns, cumulative) */
    const int8_t *kind, *pos;
    /* per event: RESERVED_NAK, a NAK a split in doubt took whose answer is a later restart
     * or a resend of its run (episodes.py, reserved_naks): no split takes it but at a resend
     * marked ANSWERS_RESERVED */
    const int8_t *reserved;
    const int16_t *opcode;
    int64_t *ext, *gap;
    /* Episode and event indices: int32, half the memory (the run refuses 2^31 events) */
    int32_t *episode, *link;
    int32_t *flags;
    uint8_t *history; /* n_conv x HIST rows */
    int64_t *conv_out; /* n_conv x CONV_FIELDS */
    Py_ssize_t n, n_conv, hist;
    int64_t tol;
} Run;

enum { C_SENT_HI, C_ACKED, C_PROGRESS_EV, C_LAST_EV, C_OUTSTANDING, C_FIRST_EXT, C_FIELDS };

/* A resend that skipped the open run forward, and what it added to the run (so that it can
 * be taken out again: skip_out_of_place). */
typedef struct {
    int64_t ev, cursor, end_ext, ack_skip, tail_skip, unasked, near_split, taken_split;
} Skip;

/* The state of one conversation. */
typedef struct {
    int64_t ref, sent_hi, last_sent_first, first_ext, acked, acked_ev, progress_ev;
    int64_t expected, oos_ev, resp_hi, resp_hi_ev, prev_ev, prev_req_ev;
    int64_t data_hi; /* highest PSN of a READ response or atomic ACK: the response stream */
    int64_t resp_new, resp_new_ev; /* the newest response, ACK or NAK: its PSN and event */
    int acked_by_nak;     /* the highest acknowledgement came from a NAK */
    Py_ssize_t open, cut; /* open episode and the one it cut (indices), -1 none */
    Py_ssize_t reads0, naks0, gaps0; /* this conversation's first READ, NAK and gap */
    int64_t id;               /* conversation id */
    int new_data;         /* new data since the open episode began */
    Py_ssize_t new_data_ev; /* the last new data (the event before the first: none) */
    Skip skip;            /* the open run's last skip forward (skip_out_of_place) */
    Py_ssize_t runs0;     /* the first episode since the last new data */
    int64_t letters[16];  /* history letter counts */
    Py_ssize_t hist_len;
} Conv;

typedef struct {
    Run *r;
    Slot *ring;
    int64_t conv; /* the conversation running: only its own slots are read */
    Episodes eps;
    Anomalies anomalies;
    Reads reads;
    Naks naks;
    Gaps gaps;
    int oom;
} Machine;

static inline int64_t span_of(const Run *r, Py_ssize_t i)
{
    return r->span_wide ? r->span_wide[i] : r->span[i];
}

static inline int64_t psn_step(int64_t psn, int64_t prev)
{
    uint64_t step = ((uint64_t)psn - (uint64_t)prev + (uint64_t)HALF) & (uint64_t)(PSN_MOD - 1);
    return (int64_t)step - HALF;
}

static inline int64_t unwrap(Conv *c, int64_t psn)
{
    c->ref = c->ref == NONE ? psn : c->ref + psn_step(psn, c->ref);
    return c->ref;
}

static inline Slot *slot_of(Machine *m, int64_t ext)
{
    Slot *s = &m->ring[(uint64_t)ext & (RING - 1)];
    return s->ext == ext && s->ev >= 0 && s->conv == m->conv ? s : NULL;
}

/* A PSN the capture first saw late (it had missed the first copy) completes the message
 * of the MIDDLE and LAST packets after it, whose first PSN was unknown (NONE: the packet
 * before each was missing): each follows its message's previous packet, so the first
 * PSN now known is theirs too, up to the next PSN not seen or already known. */
static void fill_msg_first(Machine *m, int64_t ext, int64_t msg_first)
{
    if (msg_first == NONE)
        return;
    for (Slot *s = slot_of(m, ext + 1); s && s->msg_first == NONE; s = slot_of(m, ++ext + 1))
        s->msg_first = msg_first;
}

static inline void remember(Machine *m, int64_t ext, int64_t ev, int32_t opcode,
                            int64_t msg_first)
{
    Slot *s = &m->ring[(uint64_t)ext & (RING - 1)];
    s->ext = ext;
    s->ev = ev;
    s->conv = m->conv;
    s->count = 1;
    s->opcode = opcode;
    s->msg_first = msg_first;
    fill_msg_first(m, ext, msg_first);
}

/* Zeek-style history: a letter the first time, then again at 10, 100, 1000... */
static void note(Machine *m, Conv *c, char letter)
{
    const char *letters = "DRAaNnEeSsGUXOL";
    const char *at = strchr(letters, letter);
    int k = at ? (int)(at - letters) : 15;
    int64_t count = ++c->letters[k];
    int64_t p = 1;
    while (p < count)
        p *= 10;
    if (p != count || c->hist_len >= m->r->hist)
        return;
    m->r->history[c->id * m->r->hist + c->hist_len++] = (uint8_t)letter;
}

/* The outstanding READ whose response PSNs hold `ext`, or NULL (READs of the current
 * conversation are m->reads.at[from..], ascending by first PSN). */
static Read *read_holding(Machine *m, Py_ssize_t from, int64_t ext)
{
    Py_ssize_t lo = from, hi = m->reads.n;
    while (lo < hi) { /* the last READ whose first PSN is <= ext */
        Py_ssize_t mid = (lo + hi) / 2;
        if (m->reads.at[mid].first <= ext)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == from)
        return NULL;
    Read *rd = &m->reads.at[lo - 1];
    return ext <= rd->end ? rd : NULL;
}

/* The newest NAK / RNR NAK not yet taken that a resend at event `i` may answer, of PSN
 * `ext` exactly (exact) or of a later PSN (exact == 0, for a go-back-0 restart at a
 * message start); -1 when none. Only this conversation's NAKs are searched. `gated`: only
 * NAKs seen at least the conversation's gate before the resend (a run's next PSN is the
 * answer to a NAK of it only if the sender could have had that NAK when it chose it), and
 * none reserved for the later restart that answers it (a split's lookup), unless resend i
 * is marked as its answer (episodes.py, _naks_in_order). */
#define NAK_LOOKBACK 256 /* NAKs searched back: older ones were answered or ignored */

/* The index of the oldest NAK a search back from the newest looks at: this conversation's
 * own, at most NAK_LOOKBACK of them. */
static inline Py_ssize_t nak_search_stop(const Machine *m, const Conv *c)
{
    return m->naks.n - NAK_LOOKBACK > c->naks0 ? m->naks.n - NAK_LOOKBACK : c->naks0;
}

/* Does PSN `ext` belong to the message that begins at PSN `first` (as the capture saw the
 * request at `ext` first sent)? A go-back-0 redoes the message of the NAKed PSN only. A
 * PSN the capture never saw (each send of it lost before the capture point) belongs to
 * the message of the PSN before it when that one was a FIRST or MIDDLE. */
static int same_message(Machine *m, int64_t ext, int64_t first)
{
    Slot *s = slot_of(m, ext);
    if (s)
        return s->msg_first == first;
    s = slot_of(m, ext - 1);
    int pos = s ? m->r->pos[s->ev] : P_NONE;
    return (pos == P_FIRST || pos == P_MIDDLE) && s->msg_first == first;
}
static Py_ssize_t find_nak(Machine *m, const Conv *c, Py_ssize_t i, int64_t ext, int exact,
                           int64_t limit, int gated)
{
    Run *r = m->r;
    int64_t gate = gated && r->gate[c->id] > 0 ? r->gate[c->id] : 0;
    Py_ssize_t stop = nak_search_stop(m, c);
    for (Py_ssize_t k = m->naks.n - 1; k >= stop; k--) {
        Nak *nk = &m->naks.at[k];
        if (nk->taken || (gate && r->ts[nk->ev] > r->ts[i] - gate) ||
            (gated && r->reserved[nk->ev] == RESERVED_NAK && r->reserved[i] != ANSWERS_RESERVED))
            continue;
        if (exact ? nk->ext == ext : (nk->ext > ext && nk->ext <= limit && nk->kind == K_NAK &&
                                      same_message(m, nk->ext, ext)))
            return k;
    }
    return -1;
}

/* Was a NAK of exactly PSN `ext` seen in this conversation (taken or not, within the
 * lookback)? */
static int nak_seen(Machine *m, const Conv *c, int64_t ext)
{
    Py_ssize_t stop = nak_search_stop(m, c);
    for (Py_ssize_t k = m->naks.n - 1; k >= stop; k--)
        if (m->naks.at[k].ext == ext)
            return 1;
    return 0;
}

/* The newest untaken NAK or RNR NAK of a PSN below `ext` when the capture saw no request
 * at any PSN from it up to `ext` since that NAK, before event i (-1 none), but new data
 * (sent before the NAK reached the sender: no answer resends it): a restart at `ext` with
 * no NAK of its own is then that NAK's go-back-N whose first resends were lost before the
 * capture point (a NIC goes back only for a NAK, an RNR NAK's retry, a timer or a run it
 * resumes; an RNR NAK's retry goes back to its PSN like a go-back-N). */
static Py_ssize_t nak_below_unseen(Machine *m, const Conv *c, Py_ssize_t i, int64_t ext)
{
    Run *r = m->r;
    Py_ssize_t stop = nak_search_stop(m, c);
    int64_t hi = NONE; /* the highest PSN below `ext` requested since the NAK looked at */
    Py_ssize_t j = i - 1;  /* a conversation's events are contiguous: scanned back once */
    for (Py_ssize_t k = m->naks.n - 1; k >= stop; k--) {
        Nak *nk = &m->naks.at[k];
        for (; j > nk->ev; j--)
            if (r->kind[j] == K_REQUEST && !(r->flags[j] & F_NEW) && r->ext[j] < ext &&
                (hi == NONE || r->ext[j] > hi))
                hi = r->ext[j];
        if (!nk->taken && nk->ext < ext && (hi == NONE || hi < nk->ext))
            return k;
    }
    return -1;
}

/* Did the open run skip over PSN `ext` (resend PSNs below and above it, not it)? */
static int skipped_over(Machine *m, const Conv *c, Py_ssize_t i, int64_t ext)
{
    Run *r = m->r;
    if (c->open < 0)
        return 0;
    Episode *O = &m->eps.at[c->open];
    if (O->skips == 0 || ext <= O->start_ext || ext > O->end_ext)
        return 0;
    for (Py_ssize_t j = i - 1; j >= O->first_ev; j--) /* a conversation's events: contiguous */
        if (r->episode[j] == c->open && r->ext[j] == ext)
            return 0;
    return 1;
}

/* Did episode `t` take NAK `nk` in doubt: split off for it with a run it may continue, a
 * restart below the NAKed PSN (a go-back-0 reading) beside a NAK of its own first PSN,
 * which it may answer instead, or a restart above the NAKed PSN (nak_below_unseen: its
 * first resends lost), which a later resend of exactly that PSN may answer instead? */
static int taken_in_doubt(const Episode *t, const Nak *nk)
{
    return t->alt_of != -1 || (t->start_ext < nk->ext && t->own_nak_seen) ||
           t->start_ext > nk->ext;
}

/* The newest episode that took a NAK of exactly PSN `ext` in doubt (taken_in_doubt), -1
 * none. */
static int64_t nak_taken_in_doubt(Machine *m, const Conv *c, int64_t ext)
{
    Py_ssize_t stop = nak_search_stop(m, c);
    for (Py_ssize_t k = m->naks.n - 1; k >= stop; k--) {
        Nak *nk = &m->naks.at[k];
        if (nk->ext == ext && nk->taker >= 0 && taken_in_doubt(&m->eps.at[nk->taker], nk))
            return nk->taker;
    }
    return -1;
}

/* Was a NAK of a PSN in [lo, hi] seen in this conversation (within the lookback)? */
static int nak_within(Machine *m, const Conv *c, int64_t lo, int64_t hi)
{
    Py_ssize_t stop = nak_search_stop(m, c);
    for (Py_ssize_t k = m->naks.n - 1; k >= stop; k--)
        if (m->naks.at[k].ext >= lo && m->naks.at[k].ext <= hi)
            return 1;
    return 0;
}

/* The runs since the last new data that a restart at `e` could continue (one cut before,
 * stopped at or below `e`: a run goes on from where it stopped, or further on when an ACK
 * overtook it or the capture point missed resends): -1 none, else the newest, with the
 * oldest in `*oldest`; -2 when they are not all on one chain of runs that each may
 * continue the one before (alt_of). */
static int64_t run_to_resume(Machine *m, const Conv *c, int64_t e, Py_ssize_t open,
                             int64_t *oldest)
{
    int64_t newest = -1, chain = -1;
    *oldest = -1;
    for (Py_ssize_t k = m->eps.n - 1; k >= c->runs0; k--) {
        if (k == open || m->eps.at[k].conv != c->id || m->eps.at[k].cursor > e)
            continue;
        if (newest < 0) {
            newest = chain = k;
        } else {
            while (chain > k)
                chain = m->eps.at[chain].alt_of;
            if (chain != k)
                return -2;
        }
        *oldest = k;
    }
    return newest;
}

static int is_read_request(int16_t opcode) { return opcode >= 0 && (opcode & 0x1F) == 0x0C; }

/* What revealed a response missing at PSN e, for a READ asked again from e: the newest
 * response, ACK or NAK when it is beyond e (a requester re-issues as a later response
 * arrives), else the highest one's. The newest such is the cause nearest in time, as a
 * resend takes the newest unanswered NAK of its PSN. */
static int64_t revealing_response(const Conv *c, int64_t e)
{
    return c->resp_new_ev >= 0 && c->resp_new > e ? c->resp_new_ev : c->resp_hi_ev;
}

static Episode *new_episode(Machine *m, Conv *c, Py_ssize_t i, int64_t e, int64_t end,
                            Slot *orig)
{
    Run *r = m->r;
    Episode E;
    memset(&E, 0, sizeof E);
    E.conv = c->id;
    E.first_ev = E.last_ev = i;
    E.n_resent = 1;
    E.start_ext = e;
    E.end_ext = end;
    E.cursor = end + 1;
    E.sent_hi = c->sent_hi;
    E.last_sent_first = c->last_sent_first;
    E.acked = c->acked;
    E.acked_ev = c->acked_ev;
    E.nak_ev = E.nak_ext = E.nak_kind = -1;
    E.prev_ev = c->prev_ev;
    E.prev_req_ev = c->prev_req_ev;
    E.progress_ev = c->progress_ev;
    E.start_pos = r->pos[i];
    E.start_opcode = r->opcode[i];
    E.read_ev = -1;
    E.resp_hi = c->resp_hi;
    E.resp_hi_ev = revealing_response(c, e);
    E.orig_ev = orig ? orig->ev : -1;
    /* a PSN first seen in this resend (every earlier copy lost before the capture point)
     * was remembered just before, with the message of the PSN before it */
    Slot *known = orig ? orig : slot_of(m, e);
    E.msg_first = known ? known->msg_first : NONE;
    E.cut_of = c->open;
    E.alt_of = E.taken_split = E.alt_lo = E.split_by = E.alt_two = -1;
    if (!PUSH(m->eps, E)) {
        m->oom = 1;
        return NULL;
    }
    return &m->eps.at[m->eps.n - 1];
}

/* A READ asked again from PSN e after an earlier re-issue P of the same READ asked from
 * below e for a response that revealed its gap: the requester had P's first PSN again
 * only after it sent P, so what made it ask for e was a response that reached it after
 * that; a response recorded no later than P's own revealing one reached it before P was
 * sent (responses keep their order on the path) and reveals nothing about e. Left with
 * no response cause: the timer's re-issue, or one the capture did not show. */
static void drop_stale_reveal(Episode *E, const Episode *P)
{
    int revealed = P->read_ev == E->read_ev && P->nak_ev < 0 && P->resp_hi_ev >= 0 &&
                   P->resp_hi > P->start_ext;
    if (revealed && P->start_ext < E->start_ext && E->resp_hi_ev <= P->resp_hi_ev) {
        E->resp_hi = NONE;
        E->resp_hi_ev = -1;
    }
}

static void take_nak(Machine *m, Episode *E, Py_ssize_t k)
{
    Nak *nk = &m->naks.at[k];
    nk->taken = 1;
    nk->taker = E - m->eps.at;
    E->nak_ev = nk->ev;
    E->nak_ext = nk->ext;
    E->nak_kind = nk->kind;
}

/* One more resend (event i, last PSN `end`) in episode E's run. */
static void extend(Episode *E, Py_ssize_t i, int64_t end)
{
    E->n_resent++;
    E->last_ev = i;
    E->cursor = end + 1;
    if (end > E->end_ext)
        E->end_ext = end;
}

/* Episode E answers NAK k with a run from PSN `from`. A go-back-0 (a run from below the
 * NAKed PSN) redoes the whole message: the requester takes the NAK as an ACK of what
 * precedes the message only, so a later NAK inside it is no stale one, and a timer
 * restart at the message's first PSN goes back no further than the first PSN it had not
 * seen acknowledged. */
static void answer_nak(Machine *m, Conv *c, Episode *E, Py_ssize_t k, int64_t from)
{
    take_nak(m, E, k);
    if (E->nak_ext > from && c->acked != NONE && c->acked > from - 1)
        c->acked = from - 1;
}

/* Was PSN `a` the highest acknowledged at some point since the last new data (an ACK, NAK
 * or response that acknowledged something new, before event i)? A NIC goes on from what
 * it has had, which may be an earlier acknowledgement than the newest the capture shows
 * (away from the sender each is seen before the sender has it). */
static int acked_since_new_data(const Machine *m, const Conv *c, Py_ssize_t i, int64_t a)
{
    const Run *r = m->r;
    for (Py_ssize_t j = i - 1; j > c->new_data_ev; j--) {
        if (!(r->flags[j] & F_ADVANCE))
            continue;
        int nak = r->kind[j] == K_NAK || r->kind[j] == K_RNR;
        if ((nak ? r->ext[j] - 1 : r->ext[j]) == a)
            return 1;
    }
    return 0;
}

/* Is a NAK of a PSN in [lo, hi] left unanswered in this conversation (within the
 * lookback)? A restart there may be its go-back-N, skipping what was acknowledged. */
static int open_nak_within(Machine *m, const Conv *c, int64_t lo, int64_t hi)
{
    Py_ssize_t stop = nak_search_stop(m, c);
    for (Py_ssize_t k = m->naks.n - 1; k >= stop; k--) {
        const Nak *nk = &m->naks.at[k];
        if (!nk->taken && nk->ext >= lo && nk->ext <= hi)
            return 1;
    }
    return 0;
}

/* Is the open run a split for a NAK of exactly `e` that went on to the newest PSN sent,
 * right before this resend (a whole selective repeat: its NAKed PSN, then the newest)? A
 * second copy of `e` is then no part of it (a selective repeat resends the NAKed PSN
 * before the newest, and no go-back-N skips to the newest): it is the cut run's. */
static int after_whole_repeat(const Machine *m, const Conv *c, int64_t e)
{
    if (c->open < 0)
        return 0;
    const Episode *S = &m->eps.at[c->open];
    return S->start_kind == S_ASKED && S->start_ext == e && S->nak_kind == K_NAK &&
           S->n_resent == 2 && S->tail_skips == 1 && S->last_ev == c->prev_req_ev &&
           m->r->ext[S->last_ev] == S->last_sent_first;
}

/* Does resend i of `e` land where the run cut last (c->cut) would go on, sooner after the
 * last request than any timer fires: where it stopped, or at the first PSN not
 * acknowledged when an ACK or NAK overtook it since (a go-back-N run skips what was
 * acknowledged; right after a whole selective repeat of `e`, as of any acknowledgement
 * since the last new data)? Later, a timer's restart from the first PSN not acknowledged
 * lands there as well, on its own. */
static int resumes_cut(Machine *m, const Conv *c, Py_ssize_t i, int64_t e)
{
    int64_t at = m->eps.at[c->cut].cursor;
    int soon = c->prev_req_ev >= 0 && m->r->ts[i] - m->r->ts[c->prev_req_ev] <
                                          MIN_ACK_TIMEOUT_NS - m->r->tol;
    if (e == at)
        return soon || c->prev_req_ev < 0;
    if (!soon || at >= e || c->acked == NONE)
        return 0;
    if (e == c->acked + 1)
        return 1;
    /* an older acknowledgement, where no NAK left open from where the run stopped up to
     * `e` may have drawn this restart instead (its go-back-N, past what was acknowledged) */
    return after_whole_repeat(m, c, e) && !open_nak_within(m, c, at, e) &&
           acked_since_new_data(m, c, i, e - 1);
}

/* A resend that starts an episode: its trigger is the newest untaken NAK of its own PSN,
 * else (a restart at a message start, go-back-0) of a later PSN. Without one, a restart
 * exactly where an episode it cut had stopped resumes that episode. */
static Py_ssize_t late_first_copies(Machine *m, Conv *c, Py_ssize_t i, int64_t e);
static void first_copies_open(Machine *m, Conv *c, Py_ssize_t i, int64_t e);
static void first_copies_resumed_over(Machine *m, Conv *c, Py_ssize_t i, int64_t e);
static void start_episode(Machine *m, Conv *c, Py_ssize_t i, int64_t e, int64_t end,
                          Slot *orig, int kind)
{
    Run *r = m->r;
    Py_ssize_t k = find_nak(m, c, i, e, 1, 0, 0);
    int msg_start = r->pos[i] == P_FIRST || r->pos[i] == P_ONLY;
    int own_nak_seen = k >= 0 || nak_seen(m, c, e);
    if (k < 0 && msg_start) {
        k = find_nak(m, c, i, e, 0, c->sent_hi + 1, 0);
        /* a go-back-0 of a later NAK of its message, or the answer to its own PSN's NAK
         * that first copies took, were they originals, late: which is open */
        if (k >= 0)
            first_copies_open(m, c, i, e);
    }
    if (k < 0 && c->cut >= 0 && !c->new_data && resumes_cut(m, c, i, e)) {
        Episode *E = &m->eps.at[c->cut];
        E->resumed++;
        first_copies_resumed_over(m, c, i, e);
        /* right after the split's whole selective repeat of this PSN: that split is no more
         * of this run, and this copy no answer of its NAK (after_whole_repeat) */
        int whole = after_whole_repeat(m, c, e);
        if (whole) {
            Episode *S = &m->eps.at[c->open];
            S->swapped = 2;
            S->alt_of = S->alt_lo = -1;
            S->nak_early = 0;
        }
        /* a NAK of this PSN taken in doubt: the resumption may be its answer instead */
        int64_t taker = nak_taken_in_doubt(m, c, e);
        if (taker >= 0 && !(whole && taker == c->open))
            E->taken_split = taker;
        /* cut by a run split off for a NAK of its next PSN: whether that run was the NAK's
         * answer or more of this one is open, and so is this resumption */
        if (c->open >= 0 && m->eps.at[c->open].start_kind == S_ASKED) {
            E->split_by = E->cut_by_split && E->split_by != c->open ? -2 : c->open;
            E->cut_by_split = 1;
        }
        extend(E, i, end);
        r->episode[i] = (int32_t)c->cut;
        /* the run it cut may resume in turn: two episodes' resends interleave */
        Py_ssize_t was_open = c->open;
        c->open = c->cut;
        c->cut = was_open;
        return;
    }
    /* not where the open run skipped over this PSN: it may resume there after a resend of
     * another episode interleaved */
    if (k < 0 && !skipped_over(m, c, i, e))
        k = nak_below_unseen(m, c, i, e);
    if (k < 0)
        k = late_first_copies(m, c, i, e);
    /* A NAK of exactly the PSN where a cut run would resume: the resend may be either. */
    int resumable = k >= 0 && c->cut >= 0 && !c->new_data && e == m->eps.at[c->cut].cursor;
    Py_ssize_t was_open = c->open;
    Episode *E = new_episode(m, c, i, e, end, orig);
    if (!E)
        return;
    if (k >= 0)
        answer_nak(m, c, E, k, e);
    E->nak_early = resumable;
    E->alt_of = resumable ? c->cut : kind == S_ASKED ? was_open : -1;
    E->own_nak_seen = own_nak_seen;
    E->new_naks = m->naks.n - c->naks0;
    E->start_kind = kind;
    Read *rd = is_read_request(r->opcode[i]) ? read_holding(m, c->reads0, e) : NULL;
    E->read_resp_hi = NONE;
    if (rd && rd->ev >= 0) {
        E->read_ev = rd->ev;
        if (rd->reissue_ep >= 0)
            drop_stale_reveal(E, &m->eps.at[rd->reissue_ep]);
        E->read_resp_hi = rd->resp_hi;
        E->read_naked = nak_within(m, c, rd->first, e);
        rd->reissue_ep = m->eps.n - 1;
    }
    r->episode[i] = (int32_t)(m->eps.n - 1);
    c->cut = was_open >= 0 ? was_open : c->cut;
    c->open = m->eps.n - 1;
    c->new_data = 0;
}

/* Between the split S's NAK and the skip i (to PSN `e`), a NAK or RNR NAK the sender may
 * have had by then (seen at least the gate before the skip) whose answer may begin with a
 * copy of the split's PSN (a NAK of that PSN, or inside the message it begins: a
 * go-back-0) or with the skip itself (a NAK of the skip's PSN): then the second copy and
 * the skip need not be one selective repeat's two resends back to back. A NAK of another
 * PSN cannot: its answer begins at its own PSN (or its message's first), which the capture
 * point, losing no request so far, would have shown between them. Nor can a NAK reserved
 * for a later answer (a NIC answers NAKs in order, and an older one's comes later). The
 * PSNs, not the
 * timestamps, decide: on a microsecond clock no gate is left, and every NAK of the tick
 * counts. */
static int nak_between_may_answer_copy(Machine *m, Conv *c, const Episode *S, Py_ssize_t i,
                                       int64_t e)
{
    Run *r = m->r;
    int64_t gate = r->gate[c->id];
    for (Py_ssize_t j = S->nak_ev + 1; j < i; j++) {
        if (r->kind[j] != K_NAK && r->kind[j] != K_RNR)
            continue;
        if (gate >= 0 && r->ts[j] > r->ts[i] - gate)
            continue;
        if (r->reserved[j] == RESERVED_NAK && r->reserved[i] != ANSWERS_RESERVED)
            continue; /* left to a later answer (episodes.py, reserved_naks) */
        int64_t ext = c->ref + psn_step(r->psn[j], c->ref);
        if (ext == S->start_ext || ext == e || same_message(m, ext, S->start_ext))
            return 1;
    }
    return 0;
}

/* Resend i (PSN `e`) skips forward from the open run, which resumed with its last resend
 * at the PSN the split that cut it (c->cut, one resend so far) had just resent: the same
 * PSN twice, one copy the run's next, one the split's NAK's answer, in an order the
 * capture cannot tell. A skip to the newest PSN sent (not the PSN after an ACK's) is
 * no go-back-N's where the capture point has lost no request so far (it goes on from the
 * resumed PSN), and no selective repeat resends a PSN between its first and the newest:
 * it is the split's selective repeat, whose two resends go back to back unless another
 * NAK's answer came between (nak_between_may_answer_copy), so the second
 * copy was the split's first and the first copy more of the run. The two swap episodes;
 * the split is open again and the run cut, and the split is no more of that run (which
 * resent its PSN already). Returns the open episode. */
static Episode *swap_resumed_copy(Machine *m, Conv *c, Py_ssize_t i, int64_t e)
{
    Run *r = m->r;
    Episode *E = &m->eps.at[c->open];
    if (c->cut < 0 || E->cut_by_split != 1 || E->split_by != c->cut || E->resumed < 1 ||
        e <= E->cursor || E->last_ev != c->prev_req_ev || m->gaps.n > c->gaps0)
        return E;
    Episode *S = &m->eps.at[c->cut];
    if (S->start_kind != S_ASKED || S->n_resent != 1 || S->first_ev >= E->last_ev ||
        S->cursor != E->cursor || e != S->last_sent_first || e == c->acked + 1)
        return E;
    if (S->nak_ev < 0 || S->nak_kind != K_NAK) /* an RNR NAK's answer goes back */
        return E;
    if (nak_between_may_answer_copy(m, c, S, i, e))
        return E;
    Py_ssize_t first = S->first_ev, again = E->last_ev, open = c->open;
    r->episode[first] = (int32_t)open;
    r->episode[again] = (int32_t)c->cut;
    E->last_ev = first;
    E->resumed--;
    S->first_ev = S->last_ev = again;
    S->swapped = 1;
    S->alt_of = S->alt_lo = -1;
    S->nak_early = 0;
    S->prev_ev = again - 1; /* events are grouped by conversation */
    for (Py_ssize_t j = again - 1; j >= first; j--)
        if (r->kind[j] == K_REQUEST) {
            S->prev_req_ev = j;
            break;
        }
    c->open = c->cut;
    c->cut = open;
    return S;
}

/* The open run E skipped to the newest PSN sent before it (resend q), and resend i (PSN
 * `e`) comes right after at exactly the PSN the run would have resent next, with two or
 * more resends of the run before the skip: the run goes on past the newest PSN, which no
 * run does that ended there. A selective repeat resends its NAKed PSN and then the newest,
 * one resend before it, and a NIC's go-back-N sends its PSNs in order: the newest between
 * them was another episode's resend (the tail of another NAK's selective repeat, or that
 * NAK's answer) that the NIC's scheduler sent between two of the run's. */
static int run_goes_on_past_newest(const Episode *E, const Skip *s, Py_ssize_t q, int64_t e,
                                   const Run *r)
{
    return r->ext[q] == E->last_sent_first && e == s->cursor && E->n_resent >= 3;
}

/* Resend i (PSN `e`) goes back into the PSNs the open run's last resend skipped forward
 * over (from where the run stood before that skip, short of the skip's PSN), right after
 * it, with no NAK of its own, no run it resumes and no timer: a NIC's run goes only
 * forward, and it goes back only for a NAK, a timer or a run it resumes. The skip was out
 * of place: a copy from elsewhere (an earlier run's resend, late on a path that reorders),
 * and this resend more of the run. Not where the skip went to the newest PSN sent (a run
 * ends there), unless the run goes on right after it at its very next PSN
 * (run_goes_on_past_newest: another episode's resend interleaved). The skip is taken out
 * of the run into a lone episode of its own (no cause the capture shows), and the run goes
 * on. Where the skip was the first copy the capture saw of its PSN (its original unseen),
 * it may as well be that original, late on the same path, as a resend: it is flagged
 * F_OPEN (which copy was the original is open). Returns 1 when it was. */
static int skip_out_of_place(Machine *m, Conv *c, Py_ssize_t i, int64_t e)
{
    Run *r = m->r;
    Episode *E = &m->eps.at[c->open];
    Skip s = c->skip;
    Py_ssize_t q = E->last_ev;
    if (s.ev < 0 || s.ev != q || c->prev_req_ev != q || E->n_resent < 2 || e < s.cursor ||
        e >= r->ext[q] || c->new_data)
        return 0;
    if (r->ext[q] == E->last_sent_first && !run_goes_on_past_newest(E, &s, q, e, r))
        return 0;
    if (r->ts[i] - r->ts[q] >= MIN_ACK_TIMEOUT_NS - r->tol)
        return 0;
    int msg_start = r->pos[i] == P_FIRST || r->pos[i] == P_ONLY;
    if (find_nak(m, c, i, e, 1, 0, 0) >= 0 ||
        (msg_start && find_nak(m, c, i, e, 0, c->sent_hi + 1, 0) >= 0))
        return 0;
    if (c->cut >= 0 && resumes_cut(m, c, i, e))
        return 0;
    Py_ssize_t before = -1; /* the run's resend before the skip */
    for (Py_ssize_t j = q - 1; j >= E->first_ev && before < 0; j--)
        if (r->kind[j] == K_REQUEST && r->episode[j] == c->open)
            before = j;
    if (before < 0)
        return 0;
    E->n_resent--;
    E->last_ev = before;
    E->cursor = s.cursor;
    E->end_ext = s.end_ext;
    E->skips--;
    E->skipped -= r->ext[q] - s.cursor;
    E->ack_skips -= s.ack_skip;
    E->tail_skips -= s.tail_skip;
    E->unasked -= s.unasked;
    E->near_split = s.near_split;
    E->taken_split = s.taken_split;
    c->skip.ev = -1;
    Slot *orig = slot_of(m, r->ext[q]);
    int64_t q_end = r->ext[q] + (span_of(r, q) > 0 ? span_of(r, q) : 1) - 1;
    Episode *L = new_episode(m, c, q, r->ext[q], q_end, orig && orig->ev != q ? orig : NULL);
    if (!L)
        return 0;
    L->start_kind = S_RESTART;
    L->prev_ev = q - 1; /* events are grouped by conversation */
    L->prev_req_ev = before;
    r->episode[q] = (int32_t)(m->eps.n - 1);
    if (!orig || orig->ev == q)
        r->flags[q] |= F_OPEN;
    return 1;
}

/* Did run R (episode `at`) pass over PSN `ext`: resend PSNs below and above it, not it? */
static int run_passed_over(Machine *m, const Episode *R, Py_ssize_t at, int64_t ext)
{
    Run *r = m->r;
    if (ext <= R->start_ext || ext >= R->cursor)
        return 0;
    for (Py_ssize_t j = R->first_ev; j <= R->last_ev; j++)
        if (r->episode[j] == at && r->ext[j] == ext)
            return 0;
    return 1;
}

/* Resend i (PSN `e`, last PSN `end`) skips forward from the open episode to exactly where
 * the run it cut stopped, with no NAK of its own and sooner than any timer, and every
 * resend of the open episode is of a PSN that run passed over: those are the run's own
 * copies, late (a path that reorders), not a NAK's answer (a go-back-N goes on from its
 * PSN, a go-back-0 from its message's first, a selective repeat skips to the newest), and
 * the run goes on. The open episode keeps its resends, of no cause the capture shows and
 * cutting nothing; a NAK it took is left for a later answer. Returns 1 when it was. */
static int copies_then_run_goes_on(Machine *m, Conv *c, Py_ssize_t i, int64_t e, int64_t end)
{
    Run *r = m->r;
    if (c->open < 0 || c->cut < 0 || c->new_data)
        return 0;
    Episode *E = &m->eps.at[c->open];
    Episode *R = &m->eps.at[c->cut];
    /* a NAK taken above the restart (a go-back-0 reading) moved what is acknowledged */
    if (E->start_kind != S_RESTART || E->cut_of != c->cut || e != R->cursor ||
        e <= E->cursor || E->nak_ext > E->start_ext)
        return 0;
    if (r->ts[i] - r->ts[E->last_ev] >= MIN_ACK_TIMEOUT_NS - r->tol ||
        find_nak(m, c, i, e, 1, 0, 0) >= 0)
        return 0;
    for (Py_ssize_t j = E->first_ev; j <= E->last_ev; j++)
        if (r->episode[j] == c->open && !run_passed_over(m, R, c->cut, r->ext[j]))
            return 0;
    for (Py_ssize_t k = m->naks.n - 1; E->nak_ev >= 0 && k >= c->naks0; k--)
        if (m->naks.at[k].ev == E->nak_ev) {
            m->naks.at[k].taken = 0;
            m->naks.at[k].taker = -1;
            break;
        }
    E->nak_ev = E->nak_ext = E->nak_kind = -1;
    E->alt_of = E->alt_lo = E->alt_two = E->cut_of = -1;
    E->nak_early = E->near_taken = 0;
    R->contiguous++;
    extend(R, i, end);
    r->episode[i] = (int32_t)c->cut;
    c->open = c->cut;
    c->cut = -1;
    c->skip.ev = -1;
    return 1;
}

/* A resend while an episode is open: it continues the run (contiguous, or skipping
 * forward: a selective repeat's tail, a go-back-N an ACK overtook, resends lost before the
 * capture point), or starts a new episode (the PSN goes back, or it is exactly a PSN a
 * NAK the open episode did not answer asked for). */
static void resend(Machine *m, Conv *c, Py_ssize_t i, int64_t e, int64_t end, Slot *orig)
{
    Run *r = m->r;
    if (c->open < 0) {
        start_episode(m, c, i, e, end, orig, S_FIRST);
        return;
    }
    if (skip_out_of_place(m, c, i, e))
        m->eps.at[m->eps.n - 1].cut_of = -1; /* the lone copy cut nothing: the run goes on */
    if (m->oom || copies_then_run_goes_on(m, c, i, e, end))
        return;
    Episode *E = &m->eps.at[c->open];
    Py_ssize_t asked_nak = find_nak(m, c, i, e, 1, 0, 1);
    /* A run with no trigger of its own, inside the message of a NAKed PSN it now reaches:
     * a go-back-0 of that NAK whose first resends the capture point missed (a go-back-N
     * would have begun at the NAKed PSN itself). The run takes the NAK and goes on; not a
     * NAK recorded after the run's first resend, which that resend cannot answer. */
    if (asked_nak >= 0 && e == E->cursor && E->nak_ev < 0 && E->msg_first != NONE &&
        m->naks.at[asked_nak].ev < E->first_ev &&
        E->start_ext >= E->msg_first && same_message(m, e, E->msg_first)) {
        answer_nak(m, c, E, asked_nak, E->msg_first);
        asked_nak = -1;
    }
    /* A run of READ re-issues going on past its READ's span at a message's first PSN (right
     * after the span, or skipping forward: onto a PSN an older acknowledgement left next, as
     * a go-back-N an ACK overtook would), where a NAK the sender may have had asked for a
     * PSN of that message: a re-issue asks again for one READ's responses, so that resend
     * may as well be the NAK's go-back-0 (split off for it, in doubt: the NAK came before
     * the run began). */
    if (asked_nak < 0 && e >= E->cursor && E->nak_ev < 0 && E->read_ev >= 0 &&
        is_read_request((int16_t)E->start_opcode) && !is_read_request(r->opcode[i]) &&
        (r->pos[i] == P_FIRST || r->pos[i] == P_ONLY))
        asked_nak = find_nak(m, c, i, e, 0, c->sent_hi + 1, 1);
    int asked = asked_nak >= 0;
    /* That NAK was there before the open run began: the sender had both when it chose the
     * run, so which one this resend answers is open (the run may go on through it). Capture
     * order tells (a NAK recorded after the run's first resend reached the sender after it
     * was sent, at any capture point), not timestamps: a coarse clock ties them, a jittery
     * one swaps them. */
    int early = asked && m->naks.at[asked_nak].ev < E->first_ev;
    /* Or it came while a PFC pause held the open run at this very PSN (the run's next): a
     * go-back-N of that NAK and the run going on send the same resend, so which one this
     * is is open, as a NIC that has a NAK of where its run stands may just go on. */
    early = early || (asked && e == E->cursor && m->naks.at[asked_nak].ev > E->last_ev &&
                      r->paused[i] > r->paused[E->last_ev]);
    /* In a run of READ re-issues (no NAK: the requester asks again for the responses one
     * READ is missing), each READ request asked again is an episode of its own. A run that
     * went on from its READ through other requests is no run of re-issues (a re-issue asks
     * again for one READ's responses): a READ at its next PSN is more of it. */
    int reissue = is_read_request(r->opcode[i]) && is_read_request((int16_t)E->start_opcode) &&
                  E->read_ev >= 0 && E->nak_ev < 0 && is_read_request(r->opcode[E->last_ev]);
    /* A NIC sends a run back to back: a resend longer after the run's previous one than the
     * shortest ACK timer (less any PFC pause) is the timer's restart, not more of the run. */
    int64_t quiet = r->ts[i] - r->ts[E->last_ev] - (r->paused[i] - r->paused[E->last_ev]);
    int timer = quiet >= MIN_ACK_TIMEOUT_NS - r->tol;
    int64_t oldest = -1;
    int64_t resume = e < E->cursor && asked && early ? run_to_resume(m, c, e, c->open, &oldest)
                                                     : -1;
    int64_t open_near = E->near_split; /* E may move when the episodes grow */
    /* A READ asked again alone (a re-issue asks for one READ's responses; no run goes on
     * from it) that cut a run: a resend skipping forward from it to exactly where that run
     * would go on, sooner than any timer, resumes that run (resumes_cut). */
    int after_reissue = !asked && !reissue && !timer && e > E->cursor && E->n_resent == 1 &&
                        E->read_ev >= 0 && E->nak_ev < 0 &&
                        is_read_request((int16_t)E->start_opcode) && c->cut >= 0 &&
                        !c->new_data && resumes_cut(m, c, i, e);
    if (e < E->cursor || asked || reissue || timer || after_reissue) {
        start_episode(m, c, i, e, end, orig,
                      e < E->cursor ? S_RESTART
                      : asked       ? S_ASKED
                      : reissue     ? S_REISSUE
                                    : S_TIMER);
        if (asked && early && r->episode[i] == m->eps.n - 1) {
            Episode *N = &m->eps.at[m->eps.n - 1];
            /* a restart (below the open run) continues no run but one cut before it that
             * stopped at or below its PSN: with none, the NAK is its trigger. So too when the
             * open run went on through this PSN not much after its NAK (near_split): had
             * that resend answered the NAK, this restart would have no cause of its own, and
             * a NIC goes back only for a NAK, a timer or a run it resumes */
            int restart = N->start_kind == S_RESTART;
            int64_t other = !restart ? N->cut_of : resume;
            if (restart && other == -1 && !N->nak_early) {
                N->near_taken = open_near;
                return;
            }
            N->alt_lo = restart && other >= 0 ? oldest : -1;
            /* resumable too: the resend may continue either of two runs */
            if (N->nak_early && N->alt_of != other) {
                /* a split: the cut run it would resume (alt_two) or the run it split */
                N->alt_two = !restart && other >= 0 ? N->alt_of : -1;
                N->alt_of = -2;
            } else {
                N->alt_of = other;
            }
            N->nak_early = 1;
        }
        return;
    }
    E = swap_resumed_copy(m, c, i, e); /* more of the open run, or of the split it swaps with */
    /* a skip onto the PSN after one acknowledged, the newest acknowledgement or an older one
     * since the last new data (the sender may not have had the newest yet): what a go-back-N
     * the ACK overtook sends */
    int ack_skip = e > E->cursor && c->acked != NONE &&
                   (e == c->acked + 1 || acked_since_new_data(m, c, i, e - 1));
    Skip before = {i, E->cursor, E->end_ext, ack_skip, e == E->last_sent_first,
                   0, E->near_split, E->taken_split};
    Py_ssize_t near = find_nak(m, c, i, e, 1, 0, 0);
    if (near >= 0 && r->gate[c->id] > 0 &&
        2 * (r->ts[i] - r->ts[m->naks.at[near].ev]) >= r->gate[c->id])
        E->near_split = 1;
    if (e > E->cursor) {
        E->skips++;
        E->skipped += e - E->cursor;
        E->ack_skips += ack_skip;
        E->tail_skips += e == E->last_sent_first;
    } else {
        E->contiguous++;
    }
    int64_t taker = nak_taken_in_doubt(m, c, e);
    if (taker >= 0)
        E->taken_split = taker;
    if (e != E->start_ext && e != E->last_sent_first && !nak_seen(m, c, e)) {
        E->unasked++;
        before.unasked = 1;
    }
    c->skip.ev = e > before.cursor ? i : -1;
    if (e > before.cursor)
        c->skip = before;
    extend(E, i, end);
    r->episode[i] = (int32_t)c->open;
    Read *rd = is_read_request(r->opcode[i]) ? read_holding(m, c->reads0, e) : NULL;
    if (rd)
        rd->reissue_ep = c->open;
}

/* The new request that skipped PSN `ext` (the newest such), -1 when none is known. */
static int64_t gap_over(Machine *m, const Conv *c, int64_t ext)
{
    Py_ssize_t stop = m->gaps.n - 64 > c->gaps0 ? m->gaps.n - 64 : c->gaps0;
    for (Py_ssize_t k = m->gaps.n - 1; k >= stop; k--)
        if (m->gaps.at[k].lo <= ext && ext <= m->gaps.at[k].hi)
            return m->gaps.at[k].ev;
    return -1;
}

/* The first PSN of the message a request at `e` of position `pos` belongs to: itself for a
 * FIRST or ONLY (or a READ request), else that of the PSN before it (a MIDDLE or LAST
 * follows its message's previous packet); NONE when the capture never saw that one. */
static int64_t msg_first_of(Machine *m, int pos, int64_t e)
{
    if (pos == P_FIRST || pos == P_ONLY || pos == P_NONE)
        return e;
    Slot *before = slot_of(m, e - 1);
    return before ? before->msg_first : NONE;
}

/* Was a NAK or RNR NAK seen since event `since` at least the path's shortest answer (the
 * gate) before event i: one the sender may have answered by then? NAKs before `since` (the
 * request that skipped a PSN) asked for no PSN that request skipped. */
static int nak_answerable(Machine *m, const Conv *c, Py_ssize_t i, int64_t since)
{
    Run *r = m->r;
    for (Py_ssize_t k = m->naks.n - 1; k >= c->naks0 && m->naks.at[k].ev > since; k--)
        if (r->ts[m->naks.at[k].ev] <= r->ts[i] - r->gate[c->id])
            return 1;
    return 0;
}

/* The first PSN of the message holding request i (PSN `e`), NONE unknown. */
static int64_t message_of(Machine *m, Py_ssize_t i, int64_t e)
{
    Slot *s = slot_of(m, e);
    return s && s->msg_first != NONE ? s->msg_first : msg_first_of(m, m->r->pos[i], e);
}

/* The newest NAK (not an RNR NAK) not yet taken of a PSN above `e` inside e's message, for
 * a restart at `e` inside that message (not at its first PSN): it may be that NAK's
 * go-back-0 whose first resends were lost before the capture point; -1 none. */
static Py_ssize_t nak_above_in_message(Machine *m, const Conv *c, Py_ssize_t i, int64_t e)
{
    int64_t first = message_of(m, i, e);
    if (first == NONE || first >= e)
        return -1;
    for (Py_ssize_t k = m->naks.n - 1, stop = nak_search_stop(m, c); k >= stop; k--) {
        Nak *nk = &m->naks.at[k];
        if (!nk->taken && nk->kind == K_NAK && nk->ext > e &&
            same_message(m, nk->ext, first))
            return k;
    }
    return -1;
}

/* Could no ACK timer have fired by event i: sooner after the conversation's last progress
 * (what the capture shows of it comes no sooner than the sender has it) and after the
 * request that skipped the PSN (a timer resends no sooner after the first copy was sent)
 * than the shortest ACK timer? */
static int before_any_timer(Machine *m, const Conv *c, Py_ssize_t i, int64_t skip)
{
    Run *r = m->r;
    int64_t t = MIN_ACK_TIMEOUT_NS - r->tol;
    return c->progress_ev >= 0 && skip >= 0 && r->ts[i] - r->ts[c->progress_ev] < t &&
           r->ts[i] - r->ts[skip] < t;
}

/* Mark request i a late original (reordered, no resend), linked to the request `skip` that
 * skipped its PSN. */
static void mark_reordered(Machine *m, Conv *c, Py_ssize_t i, int64_t skip)
{
    Run *r = m->r;
    r->flags[i] = (r->flags[i] & ~F_RESENT) | F_LATE | F_REORDER;
    r->link[i] = (int32_t)skip;
    Anomaly a = {A_REORDER, i, skip, c->id};
    m->oom |= !PUSH(m->anomalies, a);
}

/* A resend at PSN `e` (event i) with no cause the capture shows: no NAK of it or of a later
 * PSN of its message left, no run it resumes, no NAK below it whose first resends were lost,
 * and sooner than any ACK timer (before_any_timer, from `skip`). */
static int no_cause_but_timer(Machine *m, Conv *c, Py_ssize_t i, int64_t e);
static int no_cause(Machine *m, Conv *c, Py_ssize_t i, int64_t e, int64_t skip)
{
    return before_any_timer(m, c, i, skip) && no_cause_but_timer(m, c, i, e);
}

/* no_cause but for the timer: no NAK of `e` or of a later PSN of its message left, no run
 * it resumes, no NAK below it whose first resends were lost. */
static int no_cause_but_timer(Machine *m, Conv *c, Py_ssize_t i, int64_t e)
{
    Run *r = m->r;
    if (find_nak(m, c, i, e, 1, 0, 0) >= 0)
        return 0;
    if ((r->pos[i] == P_FIRST || r->pos[i] == P_ONLY) &&
        find_nak(m, c, i, e, 0, c->sent_hi + 1, 0) >= 0)
        return 0;
    if (c->cut >= 0 && !c->new_data && resumes_cut(m, c, i, e))
        return 0;
    return skipped_over(m, c, i, e) || nak_below_unseen(m, c, i, e) < 0;
}

/* A second copy of a PSN the capture saw skipped, whose first copy it saw was a resend (the
 * original unseen) that began a run of resends or sat in a run that took the NAK of that
 * very PSN (a go-back-0 from its message's first), coming again with no cause (no_cause,
 * and no NAK left above it inside its message: a go-back-0 of that NAK whose first resends
 * were lost, nak_above_in_message): a NIC resends only for a NAK, a timer or a run it
 * resumes, and each cause the capture showed has its resend already. Were
 * the original lost before the capture point, this copy would be a resend with no cause: it
 * is the original, late (a sprayed path), and no resend. (Only a NAK the capture point did
 * not record, or a resend of the first copy's run delayed past it on the path, would make it
 * one.) */
static int late_copy_of_resent(Machine *m, Conv *c, Py_ssize_t i, int64_t e, Slot *orig)
{
    Run *r = m->r;
    if (orig->count != 1 || !(r->flags[orig->ev] & F_LATE) || !(r->flags[orig->ev] & F_RESENT))
        return 0;
    int32_t ep = r->episode[orig->ev];
    if (ep < 0 || m->eps.at[ep].n_resent < 2)
        return 0;
    const Episode *R = &m->eps.at[ep];
    if (R->first_ev != orig->ev &&
        (R->nak_ev < 0 || R->nak_ext != e || nak_above_in_message(m, c, i, e) >= 0))
        return 0;
    if (c->open >= 0 && e >= m->eps.at[c->open].cursor)
        return 0;
    int64_t skip = gap_over(m, c, e);
    if (skip < 0 || !no_cause(m, c, i, e, skip))
        return 0;
    mark_reordered(m, c, i, skip);
    orig->count++;
    return 1;
}

/* A second copy of a PSN the capture saw skipped, right after its first copy (no request
 * between), that first copy read as a resend (its original unseen), and this copy with no
 * cause (no_cause): a NIC resends only for a NAK, a timer or a run it resumes, so were the
 * first copy a resend this one would have none, unless the first copy was a resend and
 * this the original, late on a path that reorders. The first copy may be the original,
 * late, landing just before the resend it drew; which copy was the original is open, and
 * both copies are flagged F_OPEN (the copy stays a resend: the capture cannot say which). */
static void open_copy_after_first(Machine *m, Conv *c, Py_ssize_t i, int64_t e, Slot *orig)
{
    Run *r = m->r;
    int32_t first = r->flags[orig->ev];
    if (orig->count != 1 || orig->ev != c->prev_req_ev || !(first & F_LATE) ||
        !(first & F_RESENT))
        return;
    int64_t skip = gap_over(m, c, e);
    if (skip < 0 || !no_cause(m, c, i, e, skip))
        return;
    r->flags[orig->ev] |= F_OPEN;
    r->flags[i] |= F_OPEN;
}

/* Does episode `o` stand alone: it cut no run (it began after new data, or the capture's
 * first), and no episode since cut it, may continue it or took a NAK in doubt for it? */
static int stands_alone(Machine *m, const Conv *c, Py_ssize_t o)
{
    if (o == c->cut || m->eps.at[o].cut_of != -1)
        return 0;
    for (Py_ssize_t k = o + 1; k < m->eps.n; k++) {
        const Episode *E = &m->eps.at[k];
        if (E->cut_of == o || E->alt_of == o || E->alt_lo == o || E->taken_split == o ||
            E->split_by == o || E->alt_two == o)
            return 0;
    }
    return 1;
}

/* The request that skipped PSN `ext`: a gap's (gap_over), or the conversation's first
 * request for a PSN below it; -1 none. */
static int64_t skipped_by(Machine *m, const Conv *c, int64_t ext)
{
    int64_t skip = gap_over(m, c, ext);
    if (skip < 0 && ext < c->first_ext) {
        Slot *first = slot_of(m, c->first_ext);
        skip = first ? first->ev : -1;
    }
    return skip;
}

/* Is every copy in episode `o` the first the capture saw of its PSN, a PSN it saw skipped
 * (each may be the original, late)? The oldest request that skipped one, else -1. */
static int64_t first_copies_skip(Machine *m, const Conv *c, Py_ssize_t o)
{
    Run *r = m->r;
    const Episode *O = &m->eps.at[o];
    int64_t oldest = -1;
    for (Py_ssize_t j = O->first_ev; j <= O->last_ev; j++) {
        if (r->episode[j] != o)
            continue;
        Slot *s = slot_of(m, r->ext[j]);
        int64_t skip = skipped_by(m, c, r->ext[j]);
        if (!s || s->ev != j || skip < 0 || skip >= j)
            return -1;
        oldest = oldest < 0 || skip < oldest ? skip : oldest;
    }
    return oldest;
}

/* An episode of first copies alone (first_copies_skip) that took the NAK of its first PSN
 * (NAK k), and resend i (PSN `e`), with no cause of its own (no_cause), goes back to that PSN
 * or, for a NAK, to the first PSN of its message (a go-back-0): a NIC resends only for a
 * NAK, a timer or a run it resumes, so were those copies the NAK's answer this resend would
 * have none. They are originals, late (a sprayed path; a first copy the capture saw is no
 * resend but for a loss before the capture point): they leave the episode, each a
 * reordering anomaly, and give the NAK back for this resend to take. Returns that NAK, -1
 * when the newest NAK this resend would answer was taken by no such episode.
 * A resend inside the NAKed PSN's message, below it, may be that NAK's go-back-0 whose first
 * resends were lost before the capture point: the copies are originals all the same, but
 * the NAK is left for the run to take where it reaches the NAKed PSN (-1 returned).
 * Where the resend may have a cause of its own only in a timer (no_cause but for
 * before_any_timer) or in a go-back-0 of a later NAK of its message whose first resends
 * were lost (nak_above_in_message), which copy was the original is open: the copies and
 * this resend are flagged F_OPEN. So are they where the resend came right after the copies'
 * last, of the same PSN (right_after). */
static void open_original(Machine *m, Py_ssize_t o, Py_ssize_t i);
static int right_after(const Machine *m, const Conv *c, const Episode *O, int64_t e);
static void dissolve_first_copies(Machine *m, Conv *c, Py_ssize_t o);
/* The newest NAK taken that resend i (PSN `e`) would answer (of `e`, or for a NAK of a
 * later PSN of its message, a go-back-0), when an episode of first copies alone that
 * stands alone took it for its own first PSN; -1 none. `*skip`: the oldest request that
 * skipped one of those copies (first_copies_skip). */
static Py_ssize_t nak_of_first_copies(Machine *m, Conv *c, Py_ssize_t i, int64_t e,
                                      int64_t *skip)
{
    Run *r = m->r;
    int msg_start = r->pos[i] == P_FIRST || r->pos[i] == P_ONLY;
    int64_t first = msg_start ? e : message_of(m, i, e);
    Py_ssize_t k = m->naks.n - 1, stop = nak_search_stop(m, c);
    for (; k >= stop; k--) {
        Nak *nk = &m->naks.at[k];
        if (nk->taker >= 0 && (e == nk->ext || (nk->kind == K_NAK && first != NONE &&
                                                e < nk->ext && same_message(m, nk->ext, first))))
            break;
    }
    if (k < stop)
        return -1;
    Py_ssize_t o = m->naks.at[k].taker;
    Episode *O = &m->eps.at[o];
    if (O->conv != c->id || O->start_kind != S_FIRST || O->nak_ev != m->naks.at[k].ev ||
        O->nak_ext != O->start_ext || !stands_alone(m, c, o))
        return -1;
    *skip = first_copies_skip(m, c, o);
    return *skip < 0 ? -1 : k;
}

/* Resend i (PSN `e`) at its message's first PSN takes a NAK of a later PSN of that message
 * (a go-back-0), where a NAK of `e` itself was taken by an episode of first copies alone
 * (nak_of_first_copies): were those copies originals, late, this resend would answer that
 * NAK instead, which the capture does not exclude: which copy was the original is open,
 * as for a go-back-0 of a later NAK inside the message (late_first_copies). */
static void first_copies_open(Machine *m, Conv *c, Py_ssize_t i, int64_t e)
{
    int64_t skip = -1;
    Py_ssize_t k = nak_of_first_copies(m, c, i, e, &skip);
    if (k >= 0)
        open_original(m, m->naks.at[k].taker, i);
}

/* Resend i (PSN `e`) resumes the run the open episode cut, at the PSN of the NAK that
 * episode took or at the first PSN of that PSN's message, where the open episode holds
 * first copies alone (first_copies_skip): the resumed run goes through those PSNs again,
 * and may be that NAK's answer instead (a go-back-N from the NAKed PSN, a go-back-0 from
 * its message's first), the first copies the originals, late on a path that reorders, as
 * well as the NAK's answer themselves: which copy was the original is open
 * (open_original). */
static void first_copies_resumed_over(Machine *m, Conv *c, Py_ssize_t i, int64_t e)
{
    if (c->open < 0 || c->open == c->cut)
        return;
    const Episode *S = &m->eps.at[c->open];
    if (S->conv != c->id || S->nak_ev < 0 || e > S->nak_ext ||
        (e < S->nak_ext && !same_message(m, S->nak_ext, e)) ||
        first_copies_skip(m, c, c->open) < 0)
        return;
    open_original(m, c->open, i);
}

static Py_ssize_t late_first_copies(Machine *m, Conv *c, Py_ssize_t i, int64_t e)
{
    int msg_start = m->r->pos[i] == P_FIRST || m->r->pos[i] == P_ONLY;
    int64_t skip = -1;
    Py_ssize_t k = nak_of_first_copies(m, c, i, e, &skip);
    if (k < 0 || !no_cause_but_timer(m, c, i, e))
        return -1;
    Py_ssize_t o = m->naks.at[k].taker;
    Episode *O = &m->eps.at[o];
    if (!before_any_timer(m, c, i, skip) || nak_above_in_message(m, c, i, e) >= 0 ||
        right_after(m, c, O, e)) {
        open_original(m, o, i);
        return -1;
    }
    dissolve_first_copies(m, c, o);
    m->naks.at[k].taken = 0;
    m->naks.at[k].taker = -1;
    return e == m->naks.at[k].ext || msg_start ? k : -1;
}

/* Did resend i (PSN `e`) come right after episode O's last copy, of the same PSN (no
 * request between), that copy no sooner after O's NAK than the path's shortest answer (the
 * gate; any time where none is measured)? Then the resend may as well be the original,
 * late, landing right after the run's own first copy, the run going on from there: which
 * of the two copies was the late one the capture cannot tell. */
static int right_after(const Machine *m, const Conv *c, const Episode *O, int64_t e)
{
    const Run *r = m->r;
    int64_t gate = r->gate[c->id];
    return c->prev_req_ev == O->last_ev && r->ext[O->last_ev] == e &&
           (gate <= 0 || r->ts[O->first_ev] - r->ts[O->nak_ev] >= gate);
}

/* Episode `o`'s copies (first copies alone, late_first_copies) and resend i, which may
 * answer o's NAK instead: which copy was the original is open. */
static void open_original(Machine *m, Py_ssize_t o, Py_ssize_t i)
{
    Run *r = m->r;
    const Episode *O = &m->eps.at[o];
    for (Py_ssize_t j = O->first_ev; j <= O->last_ev; j++)
        if (r->episode[j] == o)
            r->flags[j] |= F_OPEN;
    r->flags[i] |= F_OPEN;
}

/* Episode `o`'s copies are originals, late: each leaves it, a reordering anomaly, and the
 * episode is dissolved. */
static void dissolve_first_copies(Machine *m, Conv *c, Py_ssize_t o)
{
    Run *r = m->r;
    Episode *O = &m->eps.at[o];
    for (Py_ssize_t j = O->first_ev; j <= O->last_ev; j++)
        if (r->episode[j] == o) {
            r->episode[j] = -1;
            mark_reordered(m, c, j, skipped_by(m, c, r->ext[j]));
        }
    if (o == c->open) {
        c->open = -1;
        c->new_data = 1; /* as before the episode: new data (or none) came last */
    }
    if (o == m->eps.n - 1) {
        m->eps.n--;
    } else { /* dropped when the pass ends (drop_dissolved) */
        O->conv = -1;
        O->n_resent = 0;
    }
}

/* Episodes dissolved by late_first_copies out of the record, every index to the others
 * renumbered (an index to a dissolved one: -1). */
static void drop_dissolved(Machine *m)
{
    Run *r = m->r;
    Py_ssize_t n = m->eps.n, kept = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        kept += m->eps.at[k].conv >= 0;
    if (kept == n)
        return;
    int64_t *to = malloc(sizeof(int64_t) * (size_t)n);
    if (!to) {
        m->oom = 1;
        return;
    }
    kept = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        to[k] = m->eps.at[k].conv >= 0 ? kept++ : -1;
    for (Py_ssize_t j = 0; j < r->n; j++)
        if (r->episode[j] >= 0)
            r->episode[j] = (int32_t)to[r->episode[j]];
#define RENUMBER(f) E.f = E.f >= 0 ? to[E.f] : E.f
    for (Py_ssize_t k = 0; k < n; k++) {
        if (to[k] < 0)
            continue;
        Episode E = m->eps.at[k];
        RENUMBER(cut_of);
        RENUMBER(alt_of);
        RENUMBER(alt_lo);
        RENUMBER(taken_split);
        RENUMBER(split_by);
        RENUMBER(alt_two);
        m->eps.at[to[k]] = E;
    }
#undef RENUMBER
    m->eps.n = kept;
    free(to);
}

/* A first copy of a PSN the capture saw skipped, while no resend run is under way (in a
 * run, PSNs nobody NAKed come again as a matter of course, and the capture point may have
 * missed some of them): a late original
 * (packet spraying, adaptive routing), not a resend, when it came sooner after the skip
 * than any resend could: sooner than the shortest ACK timer with no NAK of it to answer,
 * or sooner than the path's shortest NAK answer (the gate). The anomaly links it to the
 * skipping request. */
static int late_original(Machine *m, Conv *c, Py_ssize_t i, int64_t e)
{
    Run *r = m->r;
    int64_t skip = gap_over(m, c, e);
    if (skip < 0)
        return 0;
    int64_t dt = r->ts[i] - r->ts[skip];
    int nak = find_nak(m, c, i, e, 1, 0, 0) >= 0;
    int64_t gate = r->gate[c->id];
    int late = (!nak && dt < MIN_ACK_TIMEOUT_NS - r->tol) || (gate > 0 && dt < gate) ||
               (dt < MIN_ACK_TIMEOUT_NS - r->tol && gate > 0 && !nak_answerable(m, c, i, skip));
    if (late) {
        r->link[i] = (int32_t)skip;
        Anomaly a = {A_REORDER, i, skip, c->id};
        m->oom |= !PUSH(m->anomalies, a);
    }
    return late;
}

static void on_request(Machine *m, Conv *c, Py_ssize_t i)
{
    Run *r = m->r;
    int64_t e = unwrap(c, r->psn[i]);
    int64_t end = e + (span_of(r, i) > 0 ? span_of(r, i) : 1) - 1;
    int read = is_read_request(r->opcode[i]);
    r->ext[i] = e;
    if (c->sent_hi == NONE) {
        c->first_ext = e;
        c->expected = e;
    }
    /* The responder's view: expected PSN and the first out-of-sequence arrival. */
    if (e == c->expected) {
        c->expected = end + 1;
        c->oos_ev = -1;
    } else if (e > c->expected && c->oos_ev < 0) {
        c->oos_ev = i;
        r->flags[i] |= F_OOS;
    }
    Slot *orig = slot_of(m, e);
    Read *span = read_holding(m, c->reads0, e);
    int other = (orig && orig->opcode != r->opcode[i]) ||
                (!orig && span && span->first != e && !read);
    if (c->sent_hi == NONE || end > c->sent_hi) {
        if (c->sent_hi != NONE && e <= c->sent_hi && other) {
            r->flags[i] |= F_REUSE;
            Anomaly a = {A_REUSE, i, orig ? orig->ev : span->ev, c->id};
            m->oom |= !PUSH(m->anomalies, a);
        }
        if (c->sent_hi != NONE && e > c->sent_hi + 1) {
            r->gap[i] = e - c->sent_hi - 1;
            r->flags[i] |= F_GAP;
            note(m, c, 'G');
            Gap g = {c->sent_hi + 1, e - 1, i};
            m->oom |= !PUSH(m->gaps, g);
        }
        r->flags[i] |= F_NEW;
        note(m, c, 'D');
        c->sent_hi = end;
        c->last_sent_first = e;
        c->open = c->cut = -1;
        c->new_data = 1;
        c->new_data_ev = i;
        c->runs0 = m->eps.n;
        if (!orig || orig->opcode != r->opcode[i])
            remember(m, e, i, r->opcode[i], msg_first_of(m, r->pos[i], e));
        if (read) {
            Read rd = {e, end, i, e - 1, -1};
            m->oom |= !PUSH(m->reads, rd);
        }
        return;
    }
    if (other) { /* a new request at a PSN already taken: no resend */
        r->flags[i] |= F_REUSE;
        note(m, c, 'U');
        Anomaly a = {A_REUSE, i, orig ? orig->ev : span->ev, c->id};
        m->oom |= !PUSH(m->anomalies, a);
        return;
    }
    if (!orig && c->open < 0 && e >= c->first_ext && late_original(m, c, i, e)) {
        r->flags[i] |= F_LATE | F_REORDER;
        note(m, c, 'O');
        remember(m, e, i, r->opcode[i], msg_first_of(m, r->pos[i], e));
        return;
    }
    if (orig && late_copy_of_resent(m, c, i, e, orig)) {
        note(m, c, 'O');
        return;
    }
    if (orig)
        open_copy_after_first(m, c, i, e, orig);
    r->flags[i] |= F_RESENT;
    note(m, c, 'R');
    if (orig) {
        r->link[i] = (int32_t)orig->ev;
        orig->count++;
    } else {
        if (e >= c->first_ext)
            r->flags[i] |= F_LATE;
        if (!span || span->first == e)
            remember(m, e, i, r->opcode[i], msg_first_of(m, r->pos[i], e));
    }
    resend(m, c, i, e, end, orig);
}

/* Karn, for a cumulative ACK: does it time the round trip of PSN `p`? Only when `p` and
 * every PSN it acknowledges anew (above `acked`) were each seen once, as new data: a
 * responder acknowledges in order, so an ACK that also covers a resent PSN below `p` may
 * have waited for that resend (the hole it filled), and then times no round trip of `p`
 * (at a receiver, an ACK of PSNs buffered behind a hole leaves as the resend arrives). */
static int times_round_trip(Machine *m, int64_t acked, int64_t p, int64_t ack_ts)
{
    int64_t lo = acked == NONE ? p : acked + 1;
    if (p - lo >= RING)
        return 0;
    for (int64_t q = lo; q <= p; q++) {
        Slot *s = slot_of(m, q);
        if (!s || s->count != 1 || m->r->ts[s->ev] > ack_ts)
            return 0;
        if (q < p && (m->r->flags[s->ev] & F_RESENT))
            return 0;
    }
    return 1;
}

/* An ACK, atomic ACK, NAK or RNR NAK: what it acknowledges, and a NAK to be answered. */
static void on_ack(Machine *m, Conv *c, Py_ssize_t i)
{
    Run *r = m->r;
    int k = r->kind[i];
    int64_t p = unwrap(c, r->psn[i]);
    int nak = k == K_NAK || k == K_RNR;
    r->ext[i] = p;
    if (c->sent_hi != NONE && p > c->sent_hi) {
        r->flags[i] |= F_UNSENT;
        note(m, c, 'X');
        Anomaly a = {A_UNSENT, i, c->prev_req_ev, c->id};
        m->oom |= !PUSH(m->anomalies, a);
        return;
    }
    if (k == K_ATOMIC_ACK) { /* the response stream: a replayed atomic result is resent */
        if (c->data_hi != NONE && p <= c->data_hi)
            r->flags[i] |= F_RESENT;
        else
            c->data_hi = p;
    }
    int64_t acked = nak ? p - 1 : p;
    if (c->acked == NONE || acked > c->acked) {
        if (!nak && times_round_trip(m, c->acked, p, r->ts[i]))
            r->link[i] = (int32_t)slot_of(m, p)->ev; /* Karn: a PSN sent once times it */
        c->acked = acked;
        c->acked_ev = i;
        c->progress_ev = i;
        c->acked_by_nak = nak;
        r->flags[i] |= F_ADVANCE;
        if (!nak)
            note(m, c, 'A');
    } else if (nak && acked < c->acked && !c->acked_by_nak) {
        /* below an ACK: stale. Below only a NAK it is not: a go-back-0 responder takes the
         * restarted message again and NAKs a PSN it then misses */
        r->flags[i] |= F_STALE;
    } else if (!nak) {
        note(m, c, 'a');
    }
    if (p > c->resp_hi || c->resp_hi == NONE) {
        c->resp_hi = p;
        c->resp_hi_ev = i;
    }
    c->resp_new = p;
    c->resp_new_ev = i;
    if (!nak)
        return;
    note(m, c, k == K_RNR ? 'n' : 'N');
    if (r->flags[i] & F_STALE)
        return;
    if (c->oos_ev >= 0 && c->expected == p)
        r->link[i] = (int32_t)c->oos_ev; /* first out-of-sequence arrival -> this NAK */
    Nak entry = {i, p, k, 0, -1};
    if (!PUSH(m->naks, entry)) {
        m->oom = 1;
        return;
    }
}

/* A READ response: its place in its READ's span (gaps, resends) and what it acknowledges. */
static void on_read_response(Machine *m, Conv *c, Py_ssize_t i)
{
    Run *r = m->r;
    int64_t p = unwrap(c, r->psn[i]);
    r->ext[i] = p;
    Read *rd = read_holding(m, c->reads0, p);
    int resent = c->data_hi != NONE && p <= c->data_hi;
    if (rd) {
        r->link[i] = (int32_t)rd->ev;
        if (p > rd->resp_hi + 1) {
            r->gap[i] = p - rd->resp_hi - 1;
            r->flags[i] |= F_GAP;
            note(m, c, 'G');
        }
        if (p > rd->resp_hi)
            rd->resp_hi = p;
        if (resent && rd->reissue_ep >= 0)
            m->eps.at[rd->reissue_ep].n_resp++;
    }
    if (resent) {
        r->flags[i] |= F_RESENT;
        note(m, c, 's');
    } else {
        note(m, c, 'S');
    }
    if (c->acked == NONE || p > c->acked) {
        c->acked = p;
        c->acked_ev = i;
        c->progress_ev = i;
        c->acked_by_nak = 0;
        r->flags[i] |= F_ADVANCE;
    }
    if (c->resp_hi == NONE || p > c->resp_hi) {
        c->resp_hi = p;
        c->resp_hi_ev = i;
    }
    c->resp_new = p;
    c->resp_new_ev = i;
    if (c->data_hi == NONE || p > c->data_hi)
        c->data_hi = p;
}

/* Each lone resend of this conversation's episodes (from `eps0`) with no NAK, no run it
 * resumed and no READ it asks again for, the first copy the capture saw of a PSN below the
 * conversation's first request: the original may have been sent before the first request
 * and overtaken by it on a path that reorders (this copy the original, late), or lost
 * before the capture point or sent before the capture began, and this copy its resend for
 * a cause the capture cannot show (a timer armed before the capture saw the conversation,
 * a NAK it did not record). Nothing in the capture tells which: the copy is flagged F_OPEN
 * (which copy was the original is open). A copy of a PSN the capture saw skipped is a late
 * original by its timing (late_original) or a resend, its skip shown; one below the first
 * request has no skip to time it from. */
static void open_first_below(Machine *m, const Conv *c, Py_ssize_t eps0)
{
    Run *r = m->r;
    for (Py_ssize_t k = eps0; k < m->eps.n; k++) {
        const Episode *E = &m->eps.at[k];
        if (E->conv != c->id || E->n_resent != 1 || E->resumed || E->nak_ev >= 0 ||
            E->orig_ev >= 0 || E->read_ev >= 0 || c->first_ext == NONE ||
            E->start_ext >= c->first_ext)
            continue;
        r->flags[E->first_ev] |= F_OPEN;
    }
}

static void finish(Machine *m, Conv *c)
{
    int64_t *out = &m->r->conv_out[c->id * C_FIELDS];
    out[C_SENT_HI] = c->sent_hi;
    out[C_ACKED] = c->acked;
    out[C_PROGRESS_EV] = c->progress_ev;
    out[C_LAST_EV] = c->prev_ev;
    out[C_OUTSTANDING] = c->sent_hi != NONE && (c->acked == NONE || c->acked < c->sent_hi);
    out[C_FIRST_EXT] = c->first_ext;
}

static void run_conversation(Machine *m, Py_ssize_t b, Py_ssize_t e)
{
    Run *r = m->r;
    int64_t conv = r->conv[b];
    Conv c;
    memset(&c, 0, sizeof c);
    c.ref = c.sent_hi = c.last_sent_first = c.first_ext = c.acked = c.expected = NONE;
    c.resp_hi = c.data_hi = c.resp_new = NONE;
    c.acked_ev = c.progress_ev = c.oos_ev = c.resp_hi_ev = c.prev_ev = c.prev_req_ev = -1;
    c.resp_new_ev = -1;
    c.open = c.cut = -1;
    c.skip.ev = -1;
    c.id = conv;
    m->conv = conv;
    c.reads0 = m->reads.n;
    c.naks0 = m->naks.n;
    c.gaps0 = m->gaps.n;
    c.runs0 = m->eps.n;
    c.new_data_ev = b - 1;
    Py_ssize_t eps0 = m->eps.n;
    for (Py_ssize_t i = b; i < e && !m->oom; i++) {
        switch (r->kind[i]) {
        case K_REQUEST:
            on_request(m, &c, i);
            c.prev_req_ev = i;
            break;
        case K_ACK:
        case K_NAK:
        case K_RNR:
        case K_ATOMIC_ACK:
            on_ack(m, &c, i);
            break;
        case K_READ_RESPONSE:
            on_read_response(m, &c, i);
            break;
        default:
            break;
        }
        c.prev_ev = i;
    }
    open_first_below(m, &c, eps0);
    finish(m, &c);
}

static void run_all(Machine *m)
{
    Run *r = m->r;
    for (Py_ssize_t i = 0; i < RING; i++)
        m->ring[i].ev = -1;
    Py_ssize_t b = 0;
    while (b < r->n && !m->oom) {
        Py_ssize_t e = b + 1;
        while (e < r->n && r->conv[e] == r->conv[b])
            e++;
        if (r->conv[b] >= 0 && r->conv[b] < r->n_conv)
            run_conversation(m, b, e);
        b = e;
    }
}

/* The span array: int32, or int64 where a READ's span passes int32 (a hostile MTU). */
static int span_array(Arrs *arrs, PyObject *obj, Run *r)
{
    Py_buffer v;
    Py_ssize_t size = 4;
    if (PyObject_GetBuffer(obj, &v, PyBUF_ND | PyBUF_FORMAT) == 0) {
        size = v.itemsize;
        PyBuffer_Release(&v);
    } else {
        PyErr_Clear(); /* array() says what is wrong with it */
    }
    if (size == 8)
        return (r->span_wide = array(arrs, obj, "span", 'i', 8, 1, -1, r->n, 0)) != NULL;
    return (r->span = array(arrs, obj, "span", 'i', 4, 1, -1, r->n, 0)) != NULL;
}

static PyObject *py_run(PyObject *self, PyObject *args)
{
    PyObject *o[17];
    long long tol;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOOOL", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14],
                          &o[15], &o[16], &tol))
        return NULL;
    Arrs arrs = {.used = 0};
    Run r = {.tol = tol};
    r.conv = array(&arrs, o[0], "conv", 'i', 4, 1, -1, -1, 0);
    r.n = r.conv ? dim(&arrs, 0) : 0;
#define IN(obj, name, kind, size) array(&arrs, obj, name, kind, size, 1, -1, r.n, 0)
#define OUT(obj, name, kind, size) array(&arrs, obj, name, kind, size, 1, -1, r.n, 1)
    int ok = r.conv && (r.ts = IN(o[1], "ts", 'i', 8)) && (r.kind = IN(o[2], "kind", 'i', 1));
    ok = ok && (r.psn = IN(o[3], "psn", 'i', 4)) && span_array(&arrs, o[4], &r);
    ok = ok && (r.opcode = IN(o[5], "opcode", 'i', 2)) && (r.pos = IN(o[6], "pos", 'i', 1));
    ok = ok && (r.ext = OUT(o[7], "ext", 'i', 8)) && (r.gap = OUT(o[8], "gap", 'i', 8));
    ok = ok && (r.episode = OUT(o[9], "episode", 'i', 4)) && (r.link = OUT(o[10], "link", 'i', 4));
    ok = ok && (r.flags = OUT(o[11], "flags", 'i', 4));
    ok = ok && (r.history = array(&arrs, o[12], "history", 'x', 1, 2, -1, -1, 1));
    if (ok) {
        r.n_conv = dim(&arrs, 0);
        r.hist = dim(&arrs, 1);
    }
    ok = ok && (r.conv_out = array(&arrs, o[13], "conv_out", 'i', 8, 2, r.n_conv, C_FIELDS, 1));
    ok = ok && (r.gate = array(&arrs, o[14], "gate", 'i', 8, 1, -1, r.n_conv, 0));
    ok = ok && (r.paused = array(&arrs, o[15], "paused", 'i', 8, 1, -1, r.n, 0));
    ok = ok && (r.reserved = array(&arrs, o[16], "reserved", 'i', 1, 1, -1, r.n, 0));
#undef IN
#undef OUT
    if (ok && r.n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "run: at most 2^31 - 1 events (int32 indices)");
        ok = 0;
    }
    if (!ok)
        return done(&arrs, NULL);
    Machine m = {.r = &r};
    m.ring = malloc(sizeof(Slot) * RING);
    if (!m.ring)
        return done(&arrs, PyErr_NoMemory());
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < r.n; i++) { /* gap comes zeroed: few events write it */
        r.ext[i] = NONE;
        r.episode[i] = -1;
        r.link[i] = -1;
        r.flags[i] = 0;
    }
    run_all(&m);
    if (!m.oom)
        drop_dissolved(&m);
    Py_END_ALLOW_THREADS
    free(m.ring);
    free(m.reads.at);
    free(m.naks.at);
    free(m.gaps.at);
    PyObject *result = NULL;
    if (m.oom) {
        PyErr_NoMemory();
    } else {
        PyObject *eps = PyBytes_FromStringAndSize((const char *)m.eps.at,
                                                  (Py_ssize_t)(m.eps.n * sizeof(Episode)));
        PyObject *an = PyBytes_FromStringAndSize((const char *)m.anomalies.at,
                                                 (Py_ssize_t)(m.anomalies.n * sizeof(Anomaly)));
        if (eps && an)
            result = PyTuple_Pack(2, eps, an);
        Py_XDECREF(eps);
        Py_XDECREF(an);
    }
    free(m.eps.at);
    free(m.anomalies.at);
    return done(&arrs, result);
}

static PyMethodDef methods[] = {
    {"run", py_run, METH_VARARGS,
     "run(conv, ts, kind, psn, span, opcode, pos, ext, gap, episode, link, flags, history, "
     "conv_out, gate, paused, reserved, tol) -> (episodes bytes, anomalies bytes); conv "
     "int32, span int32 (int64 if a span passes int32), gap given zeroed"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_connection", NULL, -1, methods};

PyMODINIT_FUNC PyInit__connection(void)
{
    PyObject *mod = PyModule_Create(&module);
    if (mod && (PyModule_AddStringConstant(mod, "SOURCE_HASH", SOURCE_HASH) < 0 ||
                PyModule_AddIntConstant(mod, "EPISODE_FIELDS", (long)EPISODE_FIELDS) < 0 ||
                PyModule_AddIntConstant(mod, "CONV_FIELDS", (long)C_FIELDS) < 0)) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
