/* rocetrace.analysis._streams: the PSN stream scans of the analysis, as a CPython module.
 *
 * Each scan is one pass over rows sorted by (flow, frame), carrying a value from row to row
 * within a flow. numpy can only express that as several full-length passes (cumulative
 * sums, repeats, shifts); here it is one loop. Arrays come in through the buffer protocol
 * (_buffers.h), checked before the GIL is released.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "../capture/_buffers.h"

#define PSN_MOD ((int64_t)1 << 24)
#define HALF ((int64_t)1 << 23)
#define NONE (INT64_MIN / 4) /* "no earlier row": far below any PSN, safe to subtract from */

/* The signed step from one 24-bit PSN to the next, in [-2^23, 2^23). */
static inline int64_t psn_step(int64_t psn, int64_t prev)
{
    uint64_t step = ((uint64_t)psn - (uint64_t)prev + (uint64_t)HALF) & (uint64_t)(PSN_MOD - 1);
    return (int64_t)step - HALF;
}

typedef struct {
    const int64_t *flow, *psn, *span; /* span NULL: each row occupies one PSN */
    uint8_t *first, *resent;
    int64_t *ext, *end, *high, *gap; /* end NULL when span is NULL: end is ext */
    Py_ssize_t n;
} Stream;

/* Per row: first of its flow; unwrapped PSN (the flow's first PSN as is, then signed 24-bit
 * steps); last PSN it occupies; the highest `end` earlier in the flow (NONE at the first
 * row); resent (not beyond that highest); PSNs skipped just before it. */
static void scan_stream(const Stream *s)
{
    int64_t ext = 0, high = NONE;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        int first = i == 0 || s->flow[i] != s->flow[i - 1];
        if (first) {
            ext = s->psn[i];
            high = NONE;
        } else {
            ext += psn_step(s->psn[i], s->psn[i - 1]);
        }
        int64_t end = s->span ? ext + s->span[i] - 1 : ext;
        s->first[i] = (uint8_t)first;
        s->ext[i] = ext;
        if (s->end)
            s->end[i] = end;
        s->high[i] = high;
        s->resent[i] = !first && ext <= high;
        s->gap[i] = first || ext - high - 1 < 0 ? 0 : ext - high - 1;
        if (first || end > high)
            high = end;
    }
}

static PyObject *py_scan_stream(PyObject *self, PyObject *args)
{
    PyObject *o[9];
    if (!PyArg_ParseTuple(args, "OOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7], &o[8]))
        return NULL;
    Arrs arrs = {.used = 0};
    Stream s = {.span = NULL, .end = NULL};
    s.flow = array(&arrs, o[0], "flow", 'i', 8, 1, -1, -1, 0);
    s.n = s.flow ? dim(&arrs, 0) : 0;
#define VEC(obj, name, kind, size, w) array(&arrs, obj, name, kind, size, 1, -1, s.n, w)
    int ok = s.flow && (s.psn = VEC(o[1], "psn", 'i', 8, 0));
    ok = ok && (o[2] == Py_None || (s.span = VEC(o[2], "span", 'i', 8, 0)));
    ok = ok && (s.first = VEC(o[3], "first", 'x', 1, 1)) && (s.ext = VEC(o[4], "ext", 'i', 8, 1));
    ok = ok && (o[5] == Py_None || (s.end = VEC(o[5], "end", 'i', 8, 1)));
    ok = ok && (s.high = VEC(o[6], "high", 'i', 8, 1));
    ok = ok && (s.resent = VEC(o[7], "resent", 'x', 1, 1)) && (s.gap = VEC(o[8], "gap", 'i', 8, 1));
#undef VEC
    if (!ok)
        return done(&arrs, NULL);
    if ((s.span == NULL) != (s.end == NULL)) {
        PyErr_SetString(PyExc_ValueError, "span and end: both arrays or both None");
        return done(&arrs, NULL);
    }
    Py_BEGIN_ALLOW_THREADS
    scan_stream(&s);
    Py_END_ALLOW_THREADS
    return done(&arrs, Py_NewRef(Py_None));
}

/* Per READ response row: the READ whose PSN span holds it and the PSNs skipped inside that
 * READ before it. READs: sorted `keys` (requesting flow, first PSN packed), their first and
 * last response PSN; `high` (one per READ, -1 on entry) keeps each READ's highest offset
 * seen, since re-issued READs interleave their answers. Rows: packed key, PSN, and the
 * index of the requesting flow's first READ (a PSN before it belongs to no READ). */
typedef struct {
    const int64_t *keys, *starts, *ends, *needle, *ext, *first_read;
    int64_t *high, *gap;
    Py_ssize_t n_reads, n;
} ReadGaps;

/* The last READ whose key is at most `needle`, -1 when none; `hint` is tried first. */
static Py_ssize_t read_at(const ReadGaps *r, int64_t needle, Py_ssize_t hint)
{
    int fits = hint >= 0 && r->keys[hint] <= needle;
    if (fits && (hint + 1 == r->n_reads || needle < r->keys[hint + 1]))
        return hint; /* responses mostly follow each other inside one READ */
    Py_ssize_t lo = 0, hi = r->n_reads; /* first key > needle lies in [lo, hi] */
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (r->keys[mid] <= needle)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

static void read_gaps(const ReadGaps *r)
{
    Py_ssize_t k = -1;
    for (Py_ssize_t i = 0; i < r->n; i++) {
        k = read_at(r, r->needle[i], k);
        Py_ssize_t at = k < r->first_read[i] ? r->first_read[i] : k;
        int64_t offset = r->ext[i] - r->starts[at];
        r->gap[i] = 0;
        if (offset < 0 || r->ext[i] > r->ends[at])
            continue;
        if (offset - r->high[at] - 1 > 0)
            r->gap[i] = offset - r->high[at] - 1;
        if (offset > r->high[at])
            r->high[at] = offset;
    }
}

static PyObject *py_read_gaps(PyObject *self, PyObject *args)
{
    PyObject *o[8];
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7]))
        return NULL;
    Arrs arrs = {.used = 0};
    ReadGaps r;
    r.keys = array(&arrs, o[0], "keys", 'i', 8, 1, -1, -1, 0);
    r.n_reads = r.keys ? dim(&arrs, 0) : 0;
    int ok = r.keys && (r.starts = array(&arrs, o[1], "starts", 'i', 8, 1, -1, r.n_reads, 0));
    ok = ok && (r.ends = array(&arrs, o[2], "ends", 'i', 8, 1, -1, r.n_reads, 0));
    ok = ok && (r.high = array(&arrs, o[3], "high", 'i', 8, 1, -1, r.n_reads, 1));
    ok = ok && (r.needle = array(&arrs, o[4], "needle", 'i', 8, 1, -1, -1, 0));
    r.n = ok ? dim(&arrs, 0) : 0;
    ok = ok && (r.ext = array(&arrs, o[5], "ext", 'i', 8, 1, -1, r.n, 0));
    ok = ok && (r.first_read = array(&arrs, o[6], "first_read", 'i', 8, 1, -1, r.n, 0));
    ok = ok && (r.gap = array(&arrs, o[7], "gap", 'i', 8, 1, -1, r.n, 1));
    if (!ok)
        return done(&arrs, NULL);
    for (Py_ssize_t i = 0; i < r.n; i++) /* every READ index the loop may read is valid */
        if (r.first_read[i] < 0 || r.first_read[i] >= r.n_reads) {
            PyErr_Format(PyExc_ValueError, "first_read[%zd] = %lld of %zd READs", i,
                         (long long)r.first_read[i], r.n_reads);
            return done(&arrs, NULL);
        }
    Py_BEGIN_ALLOW_THREADS
    read_gaps(&r);
    Py_END_ALLOW_THREADS
    return done(&arrs, Py_NewRef(Py_None));
}

static PyMethodDef methods[] = {
    {"scan_stream", py_scan_stream, METH_VARARGS, "Unwrap, resends and gaps of a PSN stream."},
    {"read_gaps", py_read_gaps, METH_VARARGS, "READ response PSNs skipped inside each READ."},
    {NULL, NULL, 0, NULL},
};

#ifndef SOURCE_HASH
#define SOURCE_HASH "unknown" /* setup.py passes the sources' hash (rocetrace/_source_hash.py) */
#endif

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_streams", "The PSN stream scans of rocetrace's analysis.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__streams(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddStringConstant(m, "SOURCE_HASH", SOURCE_HASH) < 0)
        return Py_DECREF(m), NULL;
    return m;
}
