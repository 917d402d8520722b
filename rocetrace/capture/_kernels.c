/* rocetrace.capture._kernels: the C kernels of the capture path, as a CPython module.
 *
 * Arrays come in through the buffer protocol (no numpy headers): each entry point checks
 * every array's element type, dimensions and length before it releases the GIL, so the
 * kernels may index them freely; the capture bytes themselves are only read inside each
 * frame's cap, which frame_cap clips to the buffer. The per-frame kernels take a frame
 * range [start, stop) so the Python side can run halves of a window on two threads.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_buffers.h"
#include "_kernels.h"

Codes codes;
static int configured, n_slots;

static int need_configured(void)
{
    if (!configured)
        PyErr_SetString(PyExc_RuntimeError, "rocetrace.capture._kernels.configure() not called");
    return configured;
}

/* buf, base, caps and the slot matrix of frames [start, stop): checked and unpacked. */
static int frames(Arrs *arrs, PyObject *const objs[4], Py_ssize_t start, Py_ssize_t stop,
                  Frames *f, Slots *sl)
{
    if (!need_configured())
        return -1;
    f->buf = array(arrs, objs[0], "buf", 'x', 1, 1, -1, -1, 0);
    if (!f->buf)
        return -1;
    f->len = byte_len(arrs);
    f->base = array(arrs, objs[1], "base", 'i', 8, 1, -1, -1, 0);
    if (!f->base)
        return -1;
    f->n = dim(arrs, 0);
    f->caps = array(arrs, objs[2], "caps", 'i', 8, 1, -1, f->n, 0);
    sl->v = f->caps ? array(arrs, objs[3], "slots", 'i', 2, 2, -1, f->n, 1) : NULL;
    if (!sl->v)
        return -1;
    sl->n = f->n;
    sl->rows = dim(arrs, 0);
    if (dim(arrs, 0) < n_slots) {
        PyErr_Format(PyExc_ValueError, "slots: %zd rows, the walk needs %d", dim(arrs, 0), n_slots);
        return -1;
    }
    if (start < 0 || start > stop || stop > f->n) {
        PyErr_Format(PyExc_ValueError, "frame range [%zd, %zd) of %zd frames", start, stop, f->n);
        return -1;
    }
    return 0;
}

#define VEC(obj, name, kind, size, w) array(&arrs, obj, name, kind, size, 1, -1, f.n, w)

/* ---- configuration ---- */

static const char *const CODE_NAMES[] = {
    "truncated_ethernet", "truncated_ip", "unsupported_link_type", "short_udp", "truncated_bth",
    "truncated_ext_header", "unknown_opcode", "bad_icrc", "roce_v2", "roce_v1",
    "vxlan+roce_v2", "pfc", "icrc_ok", "icrc_bad", "icrc_uncheckable", "slot_smac",
    "slot_dmac", "slot_vlan", "slot_ip4", "slot_ip6", "slot_udp", "slot_bth", "slot_pfc",
    "slot_ext0", "n_slots", "bad_ip_header", "ip_fragment", "bad_udp_length",
};
#define N_CODES (int)(sizeof CODE_NAMES / sizeof *CODE_NAMES)

static void set_codes(const long v[N_CODES])
{
    Codes c = {
        (int8_t)v[0], (int8_t)v[1], (int8_t)v[2], (int8_t)v[3], (int8_t)v[4], (int8_t)v[5],
        (int8_t)v[6], (int8_t)v[7], (int8_t)v[8], (int8_t)v[9], (int8_t)v[10], (int8_t)v[11],
        (int8_t)v[12], (int8_t)v[13], (int8_t)v[14], (int)v[15], (int)v[16], (int)v[17],
        (int)v[18], (int)v[19], (int)v[20], (int)v[21], (int)v[22], (int)v[23],
        (int8_t)v[25], (int8_t)v[26], (int8_t)v[27],
    };
    codes = c;
    n_slots = (int)v[24];
}

static PyObject *py_configure(PyObject *self, PyObject *args)
{
    PyObject *values;
    long v[N_CODES];
    if (!PyArg_ParseTuple(args, "O!", &PyTuple_Type, &values))
        return NULL;
    if (PyTuple_GET_SIZE(values) != N_CODES)
        return PyErr_Format(PyExc_ValueError, "configure: %d codes expected", N_CODES);
    for (int k = 0; k < N_CODES; k++) {
        v[k] = PyLong_AsLong(PyTuple_GET_ITEM(values, k));
        if (v[k] == -1 && PyErr_Occurred())
            return NULL;
        if (v[k] < -1 || v[k] > 127)
            return PyErr_Format(PyExc_ValueError, "configure: %s = %ld", CODE_NAMES[k], v[k]);
    }
    for (int k = 15; k < 24; k++)
        if (v[k] < 0 || v[k] >= v[24])
            return PyErr_Format(PyExc_ValueError, "configure: %s outside the slots", CODE_NAMES[k]);
    set_codes(v);
    configured = 1;
    Py_RETURN_NONE;
}

/* ---- records ---- */

static int scan_out(Arrs *arrs, PyObject *const objs[5], ScanOut *out)
{
    out->off = array(arrs, objs[0], "out_off", 'i', 8, 1, -1, -1, 1);
    if (!out->off)
        return -1;
    out->room = dim(arrs, 0);
    out->cap = array(arrs, objs[1], "out_cap", 'i', 8, 1, -1, out->room, 1);
    out->wire = out->cap ? array(arrs, objs[2], "out_wire", 'i', 8, 1, -1, out->room, 1) : NULL;
    out->ts = out->wire ? array(arrs, objs[3], "out_ts", 'i', 8, 1, -1, out->room, 1) : NULL;
    out->lt = out->ts ? array(arrs, objs[4], "out_lt", 'i', 4, 1, -1, out->room, 1) : NULL;
    return out->lt ? 0 : -1;
}

static int scan_window(Arrs *arrs, PyObject *obj, Py_ssize_t pos, const uint8_t **buf,
                       int64_t *end)
{
    *buf = array(arrs, obj, "buf", 'x', 1, 1, -1, -1, 0);
    if (!*buf)
        return -1;
    *end = byte_len(arrs);
    if (pos < 0 || pos > *end) {
        PyErr_Format(PyExc_ValueError, "pos %zd outside the window of %lld bytes", pos,
                     (long long)*end);
        return -1;
    }
    return 0;
}

static PyObject *scan_result(Arrs *arrs, ScanResult r)
{
    return done(arrs, Py_BuildValue("LLi", (long long)r.n, (long long)r.pos, r.status));
}

static PyObject *py_scan_pcap(PyObject *self, PyObject *args)
{
    PyObject *buf_obj, *outs[5];
    Py_ssize_t pos, frac_ns, max_cap, limit;
    int big, linktype;
    if (!PyArg_ParseTuple(args, "Onpninn" "OOOOO", &buf_obj, &pos, &big, &frac_ns, &linktype,
                          &max_cap, &limit, &outs[0], &outs[1], &outs[2], &outs[3], &outs[4]))
        return NULL;
    Arrs arrs = {.used = 0};
    const uint8_t *buf;
    int64_t end;
    ScanOut out;
    PcapFile file = {big, frac_ns, linktype, max_cap};
    if (scan_window(&arrs, buf_obj, pos, &buf, &end) < 0 || scan_out(&arrs, outs, &out) < 0)
        return done(&arrs, NULL);
    ScanResult r;
    Py_BEGIN_ALLOW_THREADS
    r = scan_pcap(buf, end, pos, &file, limit, &out);
    Py_END_ALLOW_THREADS
    return scan_result(&arrs, r);
}

static PyObject *py_resync_pcap(PyObject *self, PyObject *args)
{
    PyObject *buf_obj;
    Py_ssize_t from, frac_ns, max_cap;
    int last, big, linktype, strict;
    if (!PyArg_ParseTuple(args, "Onppninp", &buf_obj, &from, &last, &big, &frac_ns, &linktype,
                          &max_cap, &strict))
        return NULL;
    Arrs arrs = {.used = 0};
    const uint8_t *buf;
    int64_t end;
    PcapFile file = {big, frac_ns, linktype, max_cap};
    if (scan_window(&arrs, buf_obj, from, &buf, &end) < 0)
        return done(&arrs, NULL);
    ScanResult r;
    Py_BEGIN_ALLOW_THREADS
    r = resync_pcap(buf, end, from, last, &file, strict);
    Py_END_ALLOW_THREADS
    return scan_result(&arrs, r);
}

static PyObject *py_resync_pcapng(PyObject *self, PyObject *args)
{
    PyObject *buf_obj;
    Py_ssize_t from, n_interfaces;
    int last, big, strict;
    if (!PyArg_ParseTuple(args, "Onppnp", &buf_obj, &from, &last, &big, &n_interfaces, &strict))
        return NULL;
    Arrs arrs = {.used = 0};
    const uint8_t *buf;
    int64_t end;
    if (scan_window(&arrs, buf_obj, from, &buf, &end) < 0)
        return done(&arrs, NULL);
    ScanResult r;
    Py_BEGIN_ALLOW_THREADS
    r = resync_pcapng(buf, end, from, last, big, n_interfaces, strict);
    Py_END_ALLOW_THREADS
    return scan_result(&arrs, r);
}

static int interfaces(Arrs *arrs, PyObject *const objs[5], Interfaces *ifs)
{
    static const char *const names[] = {"if_lt", "if_res", "if_snap", "if_offs"};
    int64_t **tables[] = {&ifs->lt, &ifs->res, &ifs->snap, &ifs->offs};
    ifs->state = array(arrs, objs[0], "state", 'i', 8, 1, -1, 3, 1);
    if (!ifs->state)
        return -1;
    for (int k = 0; k < 4; k++)
        if (!(*tables[k] = array(arrs, objs[k + 1], names[k], 'i', 8, 1, -1, MAX_INTERFACES, 1)))
            return -1;
    if (ifs->state[0] < 0 || ifs->state[0] > 1 || ifs->state[1] < 0 ||
        ifs->state[1] > MAX_INTERFACES) {
        PyErr_SetString(PyExc_ValueError, "state: byte order or interface count out of range");
        return -1;
    }
    return 0;
}

static PyObject *py_scan_pcapng(PyObject *self, PyObject *args)
{
    PyObject *buf_obj, *tables[5], *outs[5];
    Py_ssize_t pos, limit;
    if (!PyArg_ParseTuple(args, "On" "OOOOO" "n" "OOOOO", &buf_obj, &pos, &tables[0], &tables[1],
                          &tables[2], &tables[3], &tables[4], &limit, &outs[0], &outs[1],
                          &outs[2], &outs[3], &outs[4]))
        return NULL;
    Arrs arrs = {.used = 0};
    const uint8_t *buf;
    int64_t end;
    Interfaces ifs;
    ScanOut out;
    if (scan_window(&arrs, buf_obj, pos, &buf, &end) < 0 || interfaces(&arrs, tables, &ifs) < 0 ||
        scan_out(&arrs, outs, &out) < 0)
        return done(&arrs, NULL);
    ScanResult r;
    Py_BEGIN_ALLOW_THREADS
    r = scan_pcapng(buf, end, pos, ifs, limit, &out);
    Py_END_ALLOW_THREADS
    return scan_result(&arrs, r);
}

static PyObject *py_units_to_ns(PyObject *self, PyObject *args)
{
    unsigned long long units;
    long long tsresol;
    if (!PyArg_ParseTuple(args, "KL", &units, &tsresol))
        return NULL;
    return PyLong_FromLongLong(units_to_ns(units, tsresol));
}

/* ---- the walk ---- */

static int opcode_tables(Arrs *arrs, PyObject *const objs[3], OpcodeTables *t)
{
    t->lut_off = array(arrs, objs[0], "lut_off", 'i', 4, 2, 256, -1, 0);
    if (!t->lut_off)
        return -1;
    t->n_ext = (int)dim(arrs, 1);
    if (codes.slot_ext0 + t->n_ext > n_slots) {
        PyErr_Format(PyExc_ValueError, "lut_off: %d extended headers, %d slots", t->n_ext, n_slots);
        return -1;
    }
    t->lut_len = array(arrs, objs[1], "lut_len", 'i', 4, 1, -1, 256, 0);
    t->crc = t->lut_len ? array(arrs, objs[2], "table", 'u', 4, 1, -1, 256, 0) : NULL;
    return t->crc ? 0 : -1;
}

/* ---- columns ---- */

/* Every spec row (slot, byte offset, span, shift, kind, row, column) indexes inside the
 * arrays it names. */
static int gather_spec_ok(const Gather *g, const Py_ssize_t widths[5], Py_ssize_t rows)
{
    for (int64_t k = 0; k < g->n_sources; k++) {
        const int64_t *s = g->spec + 7 * k;
        int ok = s[0] >= 0 && s[0] < rows && s[1] >= 0 && s[1] <= MAX_RECORD && s[2] >= 1 &&
                 s[2] <= 8 && s[3] >= 0 && s[3] < 64 && s[4] >= 0 && s[4] <= 4 && s[5] >= 0 &&
                 s[5] < widths[s[4]] && s[6] >= 0 && s[6] < g->n_columns;
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "spec row %lld is out of range", (long long)k);
            return 0;
        }
    }
    return 1;
}

static int gather_outputs(Arrs *arrs, PyObject *const objs[7], Py_ssize_t n, Gather *g,
                          Py_ssize_t widths[5])
{
    static const char *const names[] = {"out8", "out16", "out32", "out64"};
    void **mats[] = {(void **)&g->out8, (void **)&g->out16, (void **)&g->out32,
                     (void **)&g->out64};
    for (int k = 0; k < 4; k++) {
        if (!(*mats[k] = array(arrs, objs[k], names[k], 'u', 1 << k, 2, -1, n, 1)))
            return -1;
        widths[k] = dim(arrs, 0);
    }
    g->nbytes = (n + 7) / 8;
    if (!(g->flags = array(arrs, objs[4], "flags", 'u', 1, 2, -1, g->nbytes, 1)))
        return -1;
    widths[4] = dim(arrs, 0);
    if (!(g->vbits = array(arrs, objs[5], "vbits", 'u', 1, 2, -1, g->nbytes, 1)))
        return -1;
    g->n_columns = dim(arrs, 0);
    g->counts = array(arrs, objs[6], "counts", 'i', 8, 1, -1, g->n_columns, 1);
    return g->counts ? 0 : -1;
}

static int walk_outputs(Arrs *arrs, PyObject *const objs[5], Py_ssize_t n, WalkOut *out)
{
    out->encap = array(arrs, objs[0], "encap", 'i', 1, 1, -1, n, 1);
    out->anomaly = out->encap ? array(arrs, objs[1], "anomaly", 'i', 1, 1, -1, n, 1) : NULL;
    out->payload = out->anomaly ? array(arrs, objs[2], "payload", 'i', 8, 1, -1, n, 1) : NULL;
    out->icrc = out->payload ? array(arrs, objs[3], "icrc_out", 'i', 8, 1, -1, n, 1) : NULL;
    out->status = out->icrc ? array(arrs, objs[4], "status", 'i', 1, 1, -1, n, 1) : NULL;
    return out->status ? 0 : -1;
}

static int walk_tables(Arrs *arrs, PyObject *lts_o, PyObject *ports_o, PyObject *const opc[3],
                       Py_ssize_t n, WalkTables *wt)
{
    wt->lts = array(arrs, lts_o, "lts", 'i', 4, 1, -1, n, 0);
    wt->ports = wt->lts ? array(arrs, ports_o, "ports", 'i', 8, 1, -1, 2, 0) : NULL;
    return wt->ports ? opcode_tables(arrs, opc, &wt->opcodes) : -1;
}

static int gather_inputs(Arrs *arrs, PyObject *spec_o, PyObject *masks_o, Gather *g)
{
    if (!(g->spec = array(arrs, spec_o, "spec", 'i', 8, 2, -1, 7, 0)))
        return -1;
    g->n_sources = dim(arrs, 0);
    g->masks = array(arrs, masks_o, "masks", 'u', 8, 1, -1, g->n_sources, 0);
    return g->masks ? 0 : -1;
}

/* walk_gather(buf, base, caps, lts, slots, ports, lut_off, lut_len, table, encap, anomaly,
 * payload, icrc_out, status, spec, masks, out8, out16, out32, out64, flags, vbits, counts,
 * start, stop) */
static PyObject *py_walk_gather(PyObject *self, PyObject *args)
{
    PyObject *o[4], *lts_o, *ports_o, *opc[3], *wouts[5], *spec_o, *masks_o, *gouts[7];
    Py_ssize_t start, stop, widths[5];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOOOOOOOOOnn", &o[0], &o[1], &o[2], &lts_o, &o[3],
                          &ports_o, &opc[0], &opc[1], &opc[2], &wouts[0], &wouts[1], &wouts[2],
                          &wouts[3], &wouts[4], &spec_o, &masks_o, &gouts[0], &gouts[1],
                          &gouts[2], &gouts[3], &gouts[4], &gouts[5], &gouts[6], &start, &stop))
        return NULL;
    Arrs arrs = {.used = 0};
    Frames f;
    Slots sl;
    WalkTables wt;
    WalkOut wout;
    Gather g;
    if (frames(&arrs, o, start, stop, &f, &sl) < 0)
        return done(&arrs, NULL);
    Py_ssize_t slot_rows = dim(&arrs, 0);
    if (start % 8) {
        PyErr_SetString(PyExc_ValueError, "walk_gather: start must be a multiple of 8");
        return done(&arrs, NULL);
    }
    if (walk_tables(&arrs, lts_o, ports_o, opc, f.n, &wt) < 0 ||
        walk_outputs(&arrs, wouts, f.n, &wout) < 0 || gather_inputs(&arrs, spec_o, masks_o, &g) < 0 ||
        gather_outputs(&arrs, gouts, f.n, &g, widths) < 0 || !gather_spec_ok(&g, widths, slot_rows))
        return done(&arrs, NULL);
    Py_BEGIN_ALLOW_THREADS
    walk_gather(&f, &wt, sl, &wout, &g, start, stop);
    Py_END_ALLOW_THREADS
    return done(&arrs, Py_NewRef(Py_None));
}

static int address_spec_ok(const AddressCodes *k, Py_ssize_t rows)
{
    for (int64_t r = 0; r < k->n_sources; r++) {
        const int64_t *s = k->spec + 5 * r;
        int ok = s[0] >= 0 && s[0] < k->n_columns && s[1] >= 0 && s[1] < rows && s[2] >= 0 &&
                 s[2] <= MAX_RECORD && s[3] >= 1 && s[3] <= 16 && s[4] >= 1 && s[4] <= 127;
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "address spec row %lld is out of range", (long long)r);
            return 0;
        }
    }
    return 1;
}

/* address_codes(buf, base, caps, slots, spec, codes, u_hi, u_lo, u_kind, n_unique) */
static PyObject *py_address_codes(PyObject *self, PyObject *args)
{
    PyObject *o[4], *spec_o, *codes_o, *hi_o, *lo_o, *kind_o, *n_unique_o;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &spec_o, &codes_o,
                          &hi_o, &lo_o, &kind_o, &n_unique_o))
        return NULL;
    Arrs arrs = {.used = 0};
    Frames f;
    Slots sl;
    AddressCodes k;
    if (frames(&arrs, o, 0, 0, &f, &sl) < 0)
        return done(&arrs, NULL);
    Py_ssize_t slot_rows = dim(&arrs, 0);
    if (!(k.spec = array(&arrs, spec_o, "spec", 'i', 8, 2, -1, 5, 0)))
        return done(&arrs, NULL);
    k.n_sources = dim(&arrs, 0), k.n = f.n;
    if (!(k.codes = array(&arrs, codes_o, "codes", 'i', 4, 2, -1, f.n, 1)))
        return done(&arrs, NULL);
    k.n_columns = dim(&arrs, 0);
    k.u_hi = array(&arrs, hi_o, "u_hi", 'u', 8, 2, k.n_columns, f.n, 1);
    k.u_lo = k.u_hi ? array(&arrs, lo_o, "u_lo", 'u', 8, 2, k.n_columns, f.n, 1) : NULL;
    k.u_kind = k.u_lo ? array(&arrs, kind_o, "u_kind", 'i', 1, 2, k.n_columns, f.n, 1) : NULL;
    k.n_unique = k.u_kind ? array(&arrs, n_unique_o, "n_unique", 'i', 8, 1, -1, k.n_columns, 1)
                          : NULL;
    if (!k.n_unique || !address_spec_ok(&k, slot_rows))
        return done(&arrs, NULL);
    if (k.n_columns > MAX_ADDRESS_COLUMNS) {
        PyErr_Format(PyExc_ValueError, "codes: at most %d address columns", MAX_ADDRESS_COLUMNS);
        return done(&arrs, NULL);
    }
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = address_codes(&f, sl, &k);
    Py_END_ALLOW_THREADS
    if (failed)
        return done(&arrs, PyErr_NoMemory());
    return done(&arrs, Py_NewRef(Py_None));
}

static PyObject *py_factorize_keys(PyObject *self, PyObject *args)
{
    PyObject *hi_o, *lo_o, *kind_o, *codes_o, *first_o;
    if (!PyArg_ParseTuple(args, "OOOOO", &hi_o, &lo_o, &kind_o, &codes_o, &first_o))
        return NULL;
    Arrs arrs = {.used = 0};
    const uint64_t *hi = array(&arrs, hi_o, "key_hi", 'u', 8, 1, -1, -1, 0);
    Py_ssize_t n = hi ? dim(&arrs, 0) : 0;
    const uint64_t *lo = hi ? array(&arrs, lo_o, "key_lo", 'u', 8, 1, -1, n, 0) : NULL;
    const int8_t *kind = lo ? array(&arrs, kind_o, "key_kind", 'i', 1, 1, -1, n, 0) : NULL;
    int32_t *codes_out = kind ? array(&arrs, codes_o, "codes", 'i', 4, 1, -1, n, 1) : NULL;
    int64_t *first = codes_out ? array(&arrs, first_o, "first", 'i', 8, 1, -1, n, 1) : NULL;
    if (!first)
        return done(&arrs, NULL);
    int64_t n_unique;
    Py_BEGIN_ALLOW_THREADS
    n_unique = factorize_keys(hi, lo, kind, n, codes_out, first);
    Py_END_ALLOW_THREADS
    if (n_unique < 0)
        return done(&arrs, PyErr_NoMemory());
    return done(&arrs, PyLong_FromLongLong(n_unique));
}

/* The writer's records: header rows, frame bytes and trailer rows of each record. */
typedef struct {
    uint8_t *out;
    int64_t out_len;
    const int64_t *starts, *offsets, *caps, *rec_len;
    const uint8_t *head, *buf, *tail;
    int64_t head_len, buf_len, tail_len, n;
} Layout;

static int record_fits(const Layout *l, int64_t i)
{
    int64_t s = l->starts[i], len = l->rec_len[i], off = l->offsets[i], cap = l->caps[i];
    if (s < 0 || s > l->out_len || len < 0 || len > l->out_len - s)
        return 0; /* the record inside out */
    if (off < 0 || off > l->buf_len || cap < 0 || cap > l->buf_len - off)
        return 0; /* its frame inside buf */
    return l->head_len + cap + l->tail_len <= len;
}

/* Lay out each record; returns -1, or the first record that does not fit (not written). */
static int64_t copy_records(const Layout *l)
{
    for (int64_t i = 0; i < l->n; i++) {
        if (!record_fits(l, i))
            return i;
        uint8_t *at = l->out + l->starts[i];
        if (l->head_len)
            memcpy(at, l->head + i * l->head_len, l->head_len);
        if (l->caps[i])
            memcpy(at + l->head_len, l->buf + l->offsets[i], l->caps[i]);
        if (l->tail_len)
            memcpy(at + l->rec_len[i] - l->tail_len, l->tail + i * l->tail_len, l->tail_len);
    }
    return -1;
}

static PyObject *py_copy_records(PyObject *self, PyObject *args)
{
    PyObject *out_o, *starts_o, *rec_o, *buf_o, *offsets_o, *caps_o, *trailer_o, *rec_len_o;
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &out_o, &starts_o, &rec_o, &buf_o, &offsets_o,
                          &caps_o, &trailer_o, &rec_len_o))
        return NULL;
    Arrs arrs = {.used = 0};
    Layout l;
    if (!(l.out = array(&arrs, out_o, "out", 'u', 1, 1, -1, -1, 1)))
        return done(&arrs, NULL);
    l.out_len = byte_len(&arrs);
    if (!(l.starts = array(&arrs, starts_o, "starts", 'i', 8, 1, -1, -1, 0)))
        return done(&arrs, NULL);
    l.n = dim(&arrs, 0);
    if (!(l.head = array(&arrs, rec_o, "rec", 'u', 1, 2, l.n, -1, 0)))
        return done(&arrs, NULL);
    l.head_len = dim(&arrs, 1);
    if (!(l.buf = array(&arrs, buf_o, "buf", 'x', 1, 1, -1, -1, 0)))
        return done(&arrs, NULL);
    l.buf_len = byte_len(&arrs);
    l.offsets = array(&arrs, offsets_o, "offsets", 'i', 8, 1, -1, l.n, 0);
    l.caps = l.offsets ? array(&arrs, caps_o, "caps", 'i', 8, 1, -1, l.n, 0) : NULL;
    l.tail = l.caps ? array(&arrs, trailer_o, "trailer", 'u', 1, 2, l.n, -1, 0) : NULL;
    if (!l.tail)
        return done(&arrs, NULL);
    l.tail_len = dim(&arrs, 1);
    if (!(l.rec_len = array(&arrs, rec_len_o, "rec_len", 'i', 8, 1, -1, l.n, 0)))
        return done(&arrs, NULL);
    int64_t bad;
    Py_BEGIN_ALLOW_THREADS
    bad = copy_records(&l);
    Py_END_ALLOW_THREADS
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "record %lld does not fit the output", (long long)bad);
        return done(&arrs, NULL);
    }
    return done(&arrs, Py_NewRef(Py_None));
}

static PyMethodDef methods[] = {
    {"configure", py_configure, METH_VARARGS, "Set the category codes and slot rows (CODE_NAMES order)."},
    {"scan_pcap", py_scan_pcap, METH_VARARGS, "Classic pcap records of a window."},
    {"scan_pcapng", py_scan_pcapng, METH_VARARGS, "pcapng blocks of a window."},
    {"resync_pcap", py_resync_pcap, METH_VARARGS, "Where pcap records resume after damage."},
    {"resync_pcapng", py_resync_pcapng, METH_VARARGS, "Where pcapng blocks resume."},
    {"units_to_ns", py_units_to_ns, METH_VARARGS, "pcapng timestamp units to ns."},
    {"walk_gather", py_walk_gather, METH_VARARGS, "The header walk and every integer column."},
    {"address_codes", py_address_codes, METH_VARARGS, "Address columns factorized."},
    {"factorize_keys", py_factorize_keys, METH_VARARGS, "Codes in first-appearance order."},
    {"copy_records", py_copy_records, METH_VARARGS, "Lay out capture records (the writer)."},
    {NULL, NULL, 0, NULL},
};

#ifndef SOURCE_HASH
#define SOURCE_HASH "unknown" /* setup.py passes the sources' hash (rocetrace/_source_hash.py) */
#endif

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels", "The C kernels of rocetrace's capture path.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernels(void)
{
    PyObject *m = PyModule_Create(&module);
    PyObject *names = m ? PyTuple_New(N_CODES) : NULL;
    if (!names)
        return Py_XDECREF(m), NULL;
    for (int k = 0; k < N_CODES; k++)
        PyTuple_SET_ITEM(names, k, PyUnicode_FromString(CODE_NAMES[k]));
    if (PyModule_AddObject(m, "CODE_NAMES", names) < 0 ||
        PyModule_AddIntConstant(m, "MAX_INTERFACES", MAX_INTERFACES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_RECORD", MAX_RECORD) < 0 ||
        PyModule_AddIntConstant(m, "MAX_OFFSET", MAX_OFFSET) < 0 ||
        PyModule_AddStringConstant(m, "SOURCE_HASH", SOURCE_HASH) < 0)
        return Py_DECREF(names), Py_DECREF(m), NULL;
    return m;
}
