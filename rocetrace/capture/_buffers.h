/* Arrays through the buffer protocol, shared by rocetrace's C extensions (no numpy
 * headers): an entry point checks each array's element type, dimensions and length with
 * array() before it releases the GIL, then indexes them freely, and releases them all with
 * done() on every way out.
 */
#ifndef ROCETRACE_BUFFERS_H
#define ROCETRACE_BUFFERS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_buffer view;
    int held;
} Arr;

#define MAX_ARRS 32

typedef struct {
    Arr a[MAX_ARRS];
    int used;
} Arrs;

static inline void release(Arrs *arrs)
{
    for (int k = 0; k < arrs->used; k++)
        if (arrs->a[k].held)
            PyBuffer_Release(&arrs->a[k].view);
    arrs->used = 0;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_ORDER '<'
#else
#define NATIVE_ORDER '>'
#endif

/* kind 'i' signed, 'u' unsigned integers of `itemsize` bytes; 'x' any 1-byte items. */
static inline int format_matches(const Py_buffer *v, char kind, Py_ssize_t itemsize)
{
    const char *fmt = v->format ? v->format : "B";
    if (*fmt == '@' || *fmt == '=' || *fmt == NATIVE_ORDER)
        fmt++;
    if (v->itemsize != itemsize || fmt[0] == '\0' || fmt[1] != '\0')
        return 0;
    if (kind == 'x')
        return 1;
    return strchr(kind == 'u' ? "BHILQ" : "bhilq", fmt[0]) != NULL;
}

/* A C-contiguous array of ndim dimensions; shape[0] must be rows unless rows < 0, the
 * last dimension must be n unless n < 0. Returns its data, NULL with an exception set. */
static inline void *array(Arrs *arrs, PyObject *obj, const char *name, char kind, int itemsize,
                   int ndim, Py_ssize_t rows, Py_ssize_t n, int writable)
{
    if (arrs->used >= MAX_ARRS) {
        PyErr_Format(PyExc_SystemError, "too many arrays at %s", name);
        return NULL;
    }
    Arr *a = &arrs->a[arrs->used++];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    a->held = PyObject_GetBuffer(obj, &a->view, flags) == 0;
    if (!a->held) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous%s array", name,
                     writable ? " writable" : "");
        return NULL;
    }
    const Py_buffer *v = &a->view;
    int bad_shape = v->ndim != ndim || (rows >= 0 && v->shape[0] != rows) ||
                    (n >= 0 && v->shape[ndim - 1] != n);
    if (!format_matches(v, kind, itemsize) || bad_shape) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d-D %s%d (%zd rows, %zd long; -1 any), "
                     "got %d-D '%s'", name, ndim, kind == 'u' ? "uint" : "int", itemsize * 8,
                     rows, n, v->ndim, v->format ? v->format : "B");
        return NULL;
    }
    return v->buf;
}

static inline Py_ssize_t dim(const Arrs *arrs, int dimension)
{
    return arrs->a[arrs->used - 1].view.shape[dimension];
}

static inline Py_ssize_t byte_len(const Arrs *arrs) { return arrs->a[arrs->used - 1].view.len; }

static inline PyObject *done(Arrs *arrs, PyObject *result)
{
    release(arrs);
    return result;
}

#endif
