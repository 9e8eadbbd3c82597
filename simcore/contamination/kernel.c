/* The overlap scan's cheap test, compiled: simcore.contamination.kernel.

   candidates(units, fold_other, fold_run, tables) folds a batch of units (letters and digits,
   lower-cased, one line break between units) into one buffer, reads it as the numpy path of
   simcore.contamination.ngrams does (8-byte reads at multiples of 8 against the grid anchors,
   4-byte reads at multiples of 4 for the short runs) and returns the positions in the batch of
   the units that pass, ascending: the units the numpy path returns for the same batch.

   A str unit's ASCII characters are folded here, each run of other characters by fold_run(run)
   (a Python callable returning its folded bytes, as ngrams.fold folds such a run); any other unit
   (a token list) by fold_other(unit) (line breaks there are dropped: a unit's own line break is a
   space in the batch, which folding drops too). ``tables`` is the tuple built by ngrams.Scanner;
   each table of flags is (shift, first flags, second flags, sorted hashes), the flags packed 8 to
   a byte (bit i of byte j: entry 8j + i), so that a table of 2^24 entries is 2 MB and stays in the
   processor's cache. A run of 15 to 22 bytes found by its 8-byte window is then looked for whole
   (ngrams.Scanner._confirmed). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define ANCHOR_MAX 48
#define MIX64 0xD6E8FEB86659FD93ULL
#define MIX32 0x9E3779B1U
#define SEVEN ((1ULL << 56) - 1)
#define MAX_WHOLE 16
#define MAX_CONFIRM 8  /* runs of 15 to 22 bytes */
#define PREFETCH 8  /* reads ahead whose flags are fetched while this one is tested */
#define PAD (ANCHOR_MAX + 8 * PREFETCH + 16)  /* zeros after the batch: room for every read */

static inline uint64_t load8(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint32_t load4(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* A sorted array of hashes, and its two tables of flags (ngrams.Tables). */
typedef struct {
    int present;
    unsigned shift;
    Py_buffer first, second, wanted;
} Table;

static int member64(const uint64_t *sorted, Py_ssize_t n, uint64_t v) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo < n && sorted[lo] == v;
}

static int member32(const uint32_t *sorted, Py_ssize_t n, uint32_t v) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < v) lo = mid + 1; else hi = mid;
    }
    return lo < n && sorted[lo] == v;
}

static inline int maybe(const Table *t, uint64_t h) {
    const unsigned char *first = t->first.buf, *second = t->second.buf;
    uint64_t a = h >> t->shift, b = (h * MIX64) >> t->shift;
    return ((first[a >> 3] >> (a & 7)) & 1) && ((second[b >> 3] >> (b & 7)) & 1);
}

static inline int find(const Table *t, uint64_t h) {
    return maybe(t, h) && member64(t->wanted.buf, t->wanted.len / 8, h);
}

static void release_table(Table *t) {
    if (!t->present) return;
    PyBuffer_Release(&t->first);
    PyBuffer_Release(&t->second);
    PyBuffer_Release(&t->wanted);
    t->present = 0;
}

static int get_table(PyObject *item, Table *t) {
    t->present = 0;
    if (item == Py_None) return 0;
    unsigned shift;
    PyObject *a, *b, *c;
    if (!PyArg_ParseTuple(item, "IOOO", &shift, &a, &b, &c)) return -1;
    if (PyObject_GetBuffer(a, &t->first, PyBUF_SIMPLE) < 0) return -1;
    if (PyObject_GetBuffer(b, &t->second, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&t->first);
        return -1;
    }
    if (PyObject_GetBuffer(c, &t->wanted, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&t->first);
        PyBuffer_Release(&t->second);
        return -1;
    }
    t->shift = shift;
    t->present = 1;
    Py_ssize_t size = ((Py_ssize_t)1 << (64 - shift)) / 8;
    if (shift < 40 || shift > 63 || t->first.len < size || t->second.len < size
        || t->wanted.len % 8) {
        release_table(t);
        PyErr_SetString(PyExc_ValueError, "a table of flags of the wrong size");
        return -1;
    }
    return 0;
}

/* Growable byte buffer. */
typedef struct {
    unsigned char *data;
    Py_ssize_t len, cap;
} Bytes;

static int reserve(Bytes *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more) cap *= 2;
    unsigned char *data = PyMem_Realloc(b->data, cap);
    if (!data) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

/* What folding keeps of an ASCII byte: letters and digits (lower-cased) and '_' (a \w character);
   0 for the rest. */
static unsigned char KEEP[128];

static void init_keep(void) {
    for (int c = 0; c < 128; c++) {
        if (c >= 'A' && c <= 'Z') KEEP[c] = (unsigned char)(c + 32);
        else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')
            KEEP[c] = (unsigned char)c;
        else KEEP[c] = 0;
    }
}

static int append_folded(Bytes *out, PyObject *folded) {
    char *s;
    Py_ssize_t n;
    if (!folded) return -1;
    if (PyBytes_AsStringAndSize(folded, &s, &n) < 0 || reserve(out, n) < 0) {
        Py_DECREF(folded);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (s[i] != '\n') out->data[out->len++] = (unsigned char)s[i];
    Py_DECREF(folded);
    return 0;
}

/* A str unit: its ASCII characters here, each run of other characters by fold_run (as ngrams.fold
   folds them: the runs end at ASCII characters there too). */
static int fold_text(Bytes *out, PyObject *unit, PyObject *fold_run) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(unit);
    if (reserve(out, n) < 0) return -1;
    if (PyUnicode_IS_ASCII(unit)) {
        const unsigned char *s = PyUnicode_1BYTE_DATA(unit);
        unsigned char *w = out->data + out->len;
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned char k = KEEP[s[i]];
            *w = k;
            w += (k != 0);
        }
        out->len = w - out->data;
        return 0;
    }
    int kind = PyUnicode_KIND(unit);
    const void *data = PyUnicode_DATA(unit);
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 128) {
            if (KEEP[c]) {
                if (reserve(out, 1) < 0) return -1;
                out->data[out->len++] = KEEP[c];
            }
            i++;
            continue;
        }
        Py_ssize_t end = i + 1;
        while (end < n && PyUnicode_READ(kind, data, end) >= 128) end++;
        PyObject *run = PyUnicode_Substring(unit, i, end);
        if (!run) return -1;
        PyObject *folded = PyObject_CallOneArg(fold_run, run);
        Py_DECREF(run);
        if (append_folded(out, folded) < 0) return -1;
        i = end;
    }
    return 0;
}

static int fold_unit(Bytes *out, PyObject *unit, PyObject *fold_other, PyObject *fold_run) {
    if (PyUnicode_Check(unit)) return fold_text(out, unit, fold_run);
    return append_folded(out, PyObject_CallOneArg(fold_other, unit));
}

/* The unit holding byte ``position``: the number of unit starts at or before it, less one. */
static inline void mark(const Py_ssize_t *starts, Py_ssize_t units, char *passed,
                        Py_ssize_t position) {
    Py_ssize_t lo = 0, hi = units;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= position) lo = mid + 1; else hi = mid;
    }
    passed[lo - 1] = 1;
}

enum { T_GRID1, T_FIRST16, T_GRID2, T_GRID4, T_COUNT };

/* The hash of the ``length`` bytes (at most 24) at ``p``: each 8 bytes' read, those past
   ``length`` masked, times its place's constant (ngrams._short_hashes). */
static inline uint64_t run_hash(const unsigned char *p, unsigned length, const uint64_t *G) {
    uint64_t h = 0;
    for (unsigned m = 0; 8 * m < length; m++) {
        unsigned take = length - 8 * m;
        uint64_t mask = take >= 8 ? ~0ULL : (1ULL << (8 * take)) - 1;
        h += (load8(p + 8 * m) & mask) * G[m];
    }
    return h;
}

/* Whether the 8-byte window at ``at`` lies in a run of one of ``lengths`` held whole. */
static int confirmed(const unsigned char *d, Py_ssize_t at, const uint64_t *G,
                     const unsigned *lengths, const Py_buffer *wanted, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) {
        unsigned length = lengths[k];
        for (Py_ssize_t back = 0; back <= (Py_ssize_t)length - 8 && back <= at; back++)
            if (member64(wanted[k].buf, wanted[k].len / 8, run_hash(d + at - back, length, G)))
                return 1;
    }
    return 0;
}

/* The scan itself, on the folded batch ``d`` of ``len`` bytes (zeros after it). */
static void scan(const unsigned char *d, Py_ssize_t len, const uint64_t *G, const Table *t,
                 const unsigned char *four_flags, const uint32_t *four, Py_ssize_t n_four,
                 const uint64_t *seven, Py_ssize_t n_seven, const unsigned *whole_length,
                 Py_buffer *whole, Py_ssize_t n_whole, const unsigned *confirm_length,
                 const Py_buffer *confirm, Py_ssize_t n_confirm, const Py_ssize_t *starts,
                 Py_ssize_t n_units, char *passed) {
    /* 8-byte reads at multiples of 8: an anchor of 8 bytes (a small table, in the processor's
       nearest cache), then the first 16 bytes of one of 16 or 32, then all of it */
    const Table *f16 = &t[T_FIRST16];
    for (Py_ssize_t at = 0; at < len; at += 8) {
        uint64_t eight = load8(d + at) * G[0];
        if (t[T_GRID1].present && find(&t[T_GRID1], eight)
            && confirmed(d, at, G, confirm_length, confirm, n_confirm))
            mark(starts, n_units, passed, at);
        if (!f16->present) continue;
#if defined(__GNUC__)
        /* the flags of the read PREFETCH reads on, fetched while this one is tested */
        const unsigned char *d_ahead = d + at + 8 * PREFETCH;
        uint64_t ahead = load8(d_ahead) * G[0] + load8(d_ahead + 8) * G[1];
        __builtin_prefetch((const unsigned char *)f16->first.buf + ((ahead >> f16->shift) >> 3));
        __builtin_prefetch((const unsigned char *)f16->second.buf
                           + (((ahead * MIX64) >> f16->shift) >> 3));
#endif
        uint64_t first = eight + load8(d + at + 8) * G[1];
        if (!maybe(f16, first)) continue;
        if (t[T_GRID2].present && find(&t[T_GRID2], first)) mark(starts, n_units, passed, at);
        if (t[T_GRID4].present) {
            uint64_t h = first + load8(d + at + 16) * G[2] + load8(d + at + 24) * G[3];
            if (find(&t[T_GRID4], h)) mark(starts, n_units, passed, at);
        }
    }
    if (!n_four) return;
    /* 4-byte reads at multiples of 4: the rarest 4 bytes of a short run, then the run, which starts
       up to 10 bytes before them: its first 7 bytes, then all of it */
    for (Py_ssize_t at = 0; at < len; at += 4) {
        uint32_t r = load4(d + at);
        if (!four_flags[(uint32_t)(r * MIX32) >> 16] || !member32(four, n_four, r)) continue;
        for (Py_ssize_t s = at < 10 ? 0 : at - 10; s <= at; s++) {
            if (!member64(seven, n_seven, load8(d + s) & SEVEN)) continue;
            for (Py_ssize_t k = 0; k < n_whole; k++) {
                uint64_t h = run_hash(d + s, whole_length[k], G);
                if (member64(whole[k].buf, whole[k].len / 8, h)) {
                    mark(starts, n_units, passed, s);
                    break;
                }
            }
        }
    }
}

/* ``item``: a tuple of at most ``max`` (length, sorted hashes), each length from ``lo`` to ``hi``
   bytes, read into ``lengths`` and ``buffers``; ``*n``: the buffers taken (the caller releases
   them, on error too). */
static int get_runs(PyObject *item, Py_ssize_t max, unsigned lo, unsigned hi, const char *what,
                    unsigned *lengths, Py_buffer *buffers, Py_ssize_t *n) {
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) > max) {
        PyErr_Format(PyExc_ValueError, "tables: at most %zd lengths of %s", max, what);
        return -1;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(item); k++) {
        PyObject *h;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(item, k), "IO", &lengths[k], &h)) return -1;
        if (lengths[k] < lo || lengths[k] > hi) {
            PyErr_Format(PyExc_ValueError, "tables: %s of %u to %u bytes", what, lo, hi);
            return -1;
        }
        if (PyObject_GetBuffer(h, &buffers[k], PyBUF_SIMPLE) < 0) return -1;
        *n = k + 1;
        if (buffers[k].len % 8) {
            PyErr_SetString(PyExc_ValueError, "tables: wrong sizes");
            return -1;
        }
    }
    return 0;
}

static PyObject *candidates(PyObject *self, PyObject *args) {
    PyObject *units, *fold_other, *fold_run, *tables;
    if (!PyArg_ParseTuple(args, "O!OOO!", &PyList_Type, &units, &fold_other, &fold_run,
                          &PyTuple_Type, &tables))
        return NULL;
    /* (place constants, grid1, first16, grid2, grid4, four flags, four, seven,
        ((length, sorted hashes), ...) of whole short runs, the same of runs to confirm) */
    if (PyTuple_GET_SIZE(tables) != 10) {
        PyErr_SetString(PyExc_ValueError, "tables: a tuple of 10");
        return NULL;
    }
    Table t[T_COUNT];
    memset(t, 0, sizeof t);
    Py_buffer buffers[4 + MAX_WHOLE], confirm[MAX_CONFIRM];
    int n_buffers = 0;
    unsigned whole_length[MAX_WHOLE], confirm_length[MAX_CONFIRM];
    Py_ssize_t n_whole = 0, n_confirm = 0;
    Bytes data = {0};
    Py_ssize_t *starts = NULL;
    char *passed = NULL;
    PyObject *result = NULL;

    for (int k = 0; k < T_COUNT; k++)
        if (get_table(PyTuple_GET_ITEM(tables, 1 + k), &t[k]) < 0) goto done;
    for (int k = 0; k < 4; k++) {
        PyObject *item = PyTuple_GET_ITEM(tables, k == 0 ? 0 : 4 + k);
        if (PyObject_GetBuffer(item, &buffers[k], PyBUF_SIMPLE) < 0) goto done;
        n_buffers = k + 1;
    }
    Py_buffer *place = &buffers[0], *four_flags = &buffers[1], *four = &buffers[2];
    Py_buffer *seven = &buffers[3];
    if (place->len < 32 || four_flags->len < (1 << 16) || four->len % 4
        || seven->len % 8) {
        PyErr_SetString(PyExc_ValueError, "tables: wrong sizes");
        goto done;
    }
    if (get_runs(PyTuple_GET_ITEM(tables, 8), MAX_WHOLE, 1, 16, "whole runs", whole_length,
                 &buffers[4], &n_whole) < 0
        || get_runs(PyTuple_GET_ITEM(tables, 9), MAX_CONFIRM, 8, 24, "runs to confirm",
                    confirm_length, confirm, &n_confirm) < 0)
        goto done;

    Py_ssize_t n_units = PyList_GET_SIZE(units);
    starts = PyMem_Malloc(sizeof(Py_ssize_t) * (n_units + 1));
    passed = PyMem_Calloc(n_units + 1, 1);
    if (!starts || !passed) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t u = 0; u < n_units; u++) {
        if (u) {
            if (reserve(&data, 1) < 0) goto done;
            data.data[data.len++] = '\n';
        }
        starts[u] = data.len;
        if (fold_unit(&data, PyList_GET_ITEM(units, u), fold_other, fold_run) < 0) goto done;
    }
    Py_ssize_t len = data.len;
    if (reserve(&data, PAD) < 0) goto done;
    memset(data.data + len, 0, PAD);
    Py_BEGIN_ALLOW_THREADS
    scan(data.data, len, place->buf, t, four_flags->buf, four->buf, four->len / 4, seven->buf,
         seven->len / 8, whole_length, &buffers[4], n_whole, confirm_length, confirm, n_confirm,
         starts, n_units, passed);
    Py_END_ALLOW_THREADS
    result = PyList_New(0);
    if (!result) goto done;
    for (Py_ssize_t u = 0; u < n_units; u++) {
        if (!passed[u]) continue;
        PyObject *i = PyLong_FromSsize_t(u);
        if (!i || PyList_Append(result, i) < 0) {
            Py_XDECREF(i);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(i);
    }
done:
    PyMem_Free(data.data);
    PyMem_Free(starts);
    PyMem_Free(passed);
    for (int k = 0; k < T_COUNT; k++) release_table(&t[k]);
    for (int k = 0; k < n_buffers; k++) PyBuffer_Release(&buffers[k]);
    for (Py_ssize_t k = 0; k < n_whole; k++) PyBuffer_Release(&buffers[4 + k]);
    for (Py_ssize_t k = 0; k < n_confirm; k++) PyBuffer_Release(&confirm[k]);
    return result;
}

static PyMethodDef methods[] = {
    {"candidates", candidates, METH_VARARGS,
     "candidates(units, fold_other, fold_run, tables) -> positions of the units that pass"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kernel", "The overlap scan's cheap test, compiled.", -1, methods,
};

PyMODINIT_FUNC PyInit_kernel(void) {
    init_keep();
    return PyModule_Create(&module);
}
