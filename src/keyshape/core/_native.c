/* keyshape's per-record kernels in C: Java's String.hashCode and Arrays.hashCode, and a reader
 * that cuts a row key into its fields (and re-checks its salt) in one call.
 *
 * Optional: keyshape.core.native falls back to the Python implementations when this module was
 * not built, and the tests hold both routes to the same results. The reader never decides an
 * error: anything it cannot read exactly as the Python decoders do (a short key, a bad digit,
 * invalid UTF-8, a salt that does not match, a non-ASCII J, a value it has no exact form for)
 * makes it return None, and the Python decoder decides and words the error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#ifndef __SIZEOF_INT128__
#error "keyshape._native needs a compiler with __int128 (gcc, clang); keyshape falls back to Python without it"
#endif

typedef __int128 i128;

/* ------------------------------------------------------------------------------------- hashes */

/* String.hashCode of bytes read as text: ASCII bytes are their own UTF-16 code units; anything
 * else is decoded as UTF-8, else ISO-8859-1 (keyshape.schema.compiled.java_string_hash_u32). */
static int
string_hash_u32(const unsigned char *s, Py_ssize_t n, uint32_t *out)
{
    uint32_t h = 0;
    Py_ssize_t i;
    for (i = 0; i < n && s[i] < 0x80; i++)
        h = 31u * h + s[i];
    if (i == n) {
        *out = h;
        return 0;
    }
    PyObject *u = PyUnicode_DecodeUTF8((const char *)s, n, NULL);
    if (u == NULL) {
        PyErr_Clear();
        u = PyUnicode_DecodeLatin1((const char *)s, n, NULL);
        if (u == NULL)
            return -1;
    }
    int kind = PyUnicode_KIND(u);
    const void *data = PyUnicode_DATA(u);
    Py_ssize_t len = PyUnicode_GET_LENGTH(u);
    h = 0;
    for (i = 0; i < len; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 0x10000) { /* a surrogate pair, as Java's UTF-16 strings hold it */
            c -= 0x10000;
            h = 31u * h + (0xD800u + (c >> 10));
            h = 31u * h + (0xDC00u + (c & 0x3FFu));
        }
        else {
            h = 31u * h + c;
        }
    }
    Py_DECREF(u);
    *out = h;
    return 0;
}

static PyObject *
string_hash(PyObject *self, PyObject *arg)
{
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "string_hash takes bytes");
        return NULL;
    }
    uint32_t h;
    if (string_hash_u32((const unsigned char *)PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg), &h) < 0)
        return NULL;
    return PyLong_FromUnsignedLong(h);
}

static PyObject *
bytes_hash(PyObject *self, PyObject *arg)
{
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "bytes_hash takes bytes");
        return NULL;
    }
    const signed char *s = (const signed char *)PyBytes_AS_STRING(arg);
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    uint32_t h = 1;
    for (Py_ssize_t i = 0; i < n; i++)
        h = 31u * h + (uint32_t)(int32_t)s[i];
    return PyLong_FromLong((long)(int32_t)h);
}

/* ------------------------------------------------------------------------------------- reader */

enum { K_STR = 0, K_BYTES = 1, K_DIGITS = 2, K_INT32 = 3, K_INT64 = 4, K_FLOAT64 = 5 };
enum { C_NONE = 0, C_MOD = 1, C_JAVA_HASH_SHORT = 2, C_PHOENIX = 3 };
#define MAX_SEP 16

typedef struct {
    int kind;
    Py_ssize_t width;   /* -1: variable */
    Py_ssize_t plan;    /* variable only: -1 ends at the next separator, n >= 0 ends n bytes before the key's end */
    int has_pad, pad_left, desc, domain;
    unsigned char pad[256]; /* bytes that strip() takes off (a set, as bytes.lstrip's argument is) */
    int64_t maxv, lo, hi;
} Field;

typedef struct {
    PyObject_HEAD
    PyObject *names;    /* tuple of str, one per field */
    Py_ssize_t nf;
    Field *f;
    Py_ssize_t head, pwidth, lsep;
    int sepcheck;
    char sep[MAX_SEP];
    int check;          /* C_*: the salt re-derived from J and compared with the key's prefix */
    long buckets;
    int from_k;         /* J is K (the whole key after the prefix) */
    Py_ssize_t nh, *hidx;
} Reader;

static void
Reader_dealloc(Reader *r)
{
    Py_XDECREF(r->names);
    PyMem_Free(r->f);
    PyMem_Free(r->hidx);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int
get_i64(PyObject *t, Py_ssize_t i, int64_t *out)
{
    long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = v;
    return 0;
}

/* Reader(names, head, prefix_width, sep, sepcheck, fields, check)
 *   fields: tuples (kind, width, plan, pad, pad_left, desc, max, lo, hi, domain)
 *   check: None or (kind, buckets, from_k, hashed field indexes) */
static PyObject *
Reader_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *names, *fields, *check, *sep;
    Py_ssize_t head, pwidth;
    int sepcheck;
    if (!PyArg_ParseTuple(args, "O!nnSpO!O", &PyTuple_Type, &names, &head, &pwidth, &sep, &sepcheck,
                          &PyTuple_Type, &fields, &check))
        return NULL;
    Py_ssize_t nf = PyTuple_GET_SIZE(fields);
    if (nf != PyTuple_GET_SIZE(names) || nf == 0 || PyBytes_GET_SIZE(sep) > MAX_SEP) {
        PyErr_SetString(PyExc_ValueError, "Reader: one name per field, at least one field, a separator of at most 16 bytes");
        return NULL;
    }
    Reader *r = (Reader *)type->tp_alloc(type, 0);
    if (r == NULL)
        return NULL;
    Py_INCREF(names);
    r->names = names;
    r->nf = nf;
    r->head = head;
    r->pwidth = pwidth;
    r->sepcheck = sepcheck;
    r->lsep = PyBytes_GET_SIZE(sep);
    memcpy(r->sep, PyBytes_AS_STRING(sep), r->lsep);
    r->f = PyMem_Calloc(nf, sizeof(Field));
    if (r->f == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < nf; i++) {
        PyObject *t = PyTuple_GET_ITEM(fields, i);
        Field *f = &r->f[i];
        int64_t kind, width, plan, pad_left, desc, domain;
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 10 || !PyBytes_Check(PyTuple_GET_ITEM(t, 3))) {
            PyErr_SetString(PyExc_ValueError, "Reader: a field is (kind, width, plan, pad, pad_left, desc, max, lo, hi, domain)");
            goto fail;
        }
        if (get_i64(t, 0, &kind) || get_i64(t, 1, &width) || get_i64(t, 2, &plan) || get_i64(t, 4, &pad_left)
            || get_i64(t, 5, &desc) || get_i64(t, 6, &f->maxv) || get_i64(t, 7, &f->lo) || get_i64(t, 8, &f->hi)
            || get_i64(t, 9, &domain))
            goto fail;
        f->kind = (int)kind;
        f->width = (Py_ssize_t)width;
        f->plan = (Py_ssize_t)plan;
        f->pad_left = (int)pad_left;
        f->desc = (int)desc;
        f->domain = (int)domain;
        PyObject *pad = PyTuple_GET_ITEM(t, 3);
        f->has_pad = PyBytes_GET_SIZE(pad) > 0;
        for (Py_ssize_t j = 0; j < PyBytes_GET_SIZE(pad); j++)
            f->pad[(unsigned char)PyBytes_AS_STRING(pad)[j]] = 1;
    }
    if (check != Py_None) {
        PyObject *idx;
        int ckind, from_k;
        long buckets;
        if (!PyArg_ParseTuple(check, "ilpO!", &ckind, &buckets, &from_k, &PyTuple_Type, &idx))
            goto fail;
        r->check = ckind;
        r->buckets = buckets;
        r->from_k = from_k;
        r->nh = PyTuple_GET_SIZE(idx);
        r->hidx = PyMem_Calloc(r->nh + 1, sizeof(Py_ssize_t));
        if (r->hidx == NULL)
            goto fail;
        for (Py_ssize_t i = 0; i < r->nh; i++) {
            r->hidx[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(idx, i));
            if (r->hidx[i] < 0 || r->hidx[i] >= nf) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_ValueError, "Reader: a hashed field index is out of range");
                goto fail;
            }
        }
        if (buckets <= 0 || (ckind != C_MOD && ckind != C_JAVA_HASH_SHORT && ckind != C_PHOENIX)) {
            PyErr_SetString(PyExc_ValueError, "Reader: unknown salt check");
            goto fail;
        }
    }
    return (PyObject *)r;
fail:
    Py_DECREF(r);
    return NULL;
}

/* The prefix the salt check expects, from J's bytes (the spans of the hashed fields joined by the
 * separator, or K); 0 when it matches the key's, 1 when not (or J is not ASCII for a String hash:
 * the Python decoder decides then). */
static int
salt_differs(Reader *r, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2])
{
    uint32_t h = r->check == C_PHOENIX ? 1u : 0u;
    int ascii = 1;
#define FEED(p, len) do { \
        for (Py_ssize_t _i = 0; _i < (len); _i++) { \
            unsigned char _c = (p)[_i]; \
            ascii &= _c < 0x80; \
            h = 31u * h + (r->check == C_PHOENIX ? (uint32_t)(int32_t)(signed char)_c : (uint32_t)_c); \
        } } while (0)
    if (r->from_k) {
        FEED(s + r->head, n - r->head);
    }
    else {
        for (Py_ssize_t i = 0; i < r->nh; i++) {
            if (i)
                FEED((const unsigned char *)r->sep, r->lsep);
            Py_ssize_t j = r->hidx[i];
            FEED(s + span[j][0], span[j][1] - span[j][0]);
        }
    }
#undef FEED
    if (r->check == C_PHOENIX) {
        int32_t v = (int32_t)h % (int32_t)r->buckets;  /* Java's remainder: the dividend's sign */
        return r->pwidth != 1 || s[0] != (unsigned char)(v < 0 ? -v : v);
    }
    if (!ascii)
        return 1;
    if (r->check == C_JAVA_HASH_SHORT) {
        uint32_t v = h & 0x7FFFu;
        return r->pwidth != 2 || s[0] != (v >> 8) || s[1] != (v & 0xFF);
    }
    /* mod: the bucket (h & 0x7FFFFFFF) % n in pwidth zero-padded decimal digits */
    unsigned long b = (h & 0x7FFFFFFFu) % (unsigned long)r->buckets;
    for (Py_ssize_t i = r->pwidth - 1; i >= 0; i--) {
        if (s[i] != '0' + b % 10)
            return 1;
        b /= 10;
    }
    return b != 0;
}

/* A Python int for v, or NULL with no error set when it has no int64/uint64 form. */
static PyObject *
int_of(i128 v)
{
    if (v >= INT64_MIN && v <= INT64_MAX)
        return PyLong_FromLongLong((long long)v);
    if (v > 0 && v <= (i128)UINT64_MAX)
        return PyLong_FromUnsignedLongLong((unsigned long long)v);
    return NULL;
}

/* The integer of a number field's bytes p[0:len] (K_DIGITS, K_INT32, K_INT64), desc and domain
 * applied: 0, or 1 when the Python decoder must decide. */
static int
int_value(const Field *f, const unsigned char *p, Py_ssize_t len, i128 *out)
{
    int64_t v = 0;
    i128 x;
    if (f->kind == K_DIGITS) {
        if (len < 1 || len > 19)
            return 1;
        uint64_t u = 0;
        for (Py_ssize_t i = 0; i < len; i++) {
            unsigned d = (unsigned)p[i] - '0';
            if (d > 9)
                return 1;
            u = u * 10 + d;
        }
        x = f->desc ? (i128)f->maxv - (i128)u : (i128)u;
    }
    else {
        if (len != (f->kind == K_INT32 ? 4 : 8))
            return 1;
        if (f->kind == K_INT32)
            v = (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
        else {
            uint64_t u = 0;
            for (int i = 0; i < 8; i++)
                u = (u << 8) | p[i];
            v = (int64_t)u;
        }
        x = f->desc ? (i128)f->maxv - (i128)v : (i128)v;
    }
    if (f->domain && (x < f->lo || x > f->hi))
        return 1;
    *out = x;
    return 0;
}

/* A text/bytes field's value within p[0:*len] once its padding is stripped: the offset of its
 * first byte, *len set to its length. Descending fields are stripped as their inverted bytes. */
static Py_ssize_t
strip_pad(const Field *f, const unsigned char *p, Py_ssize_t *len)
{
    Py_ssize_t a = 0, n = *len;
    unsigned char x = f->desc ? 0xFF : 0;
    if (f->has_pad) {
        if (f->pad_left)
            while (a < n && f->pad[p[a] ^ x]) a++;
        else
            while (n > a && f->pad[p[n - 1] ^ x]) n--;
    }
    *len = n - a;
    return a;
}

/* The value of field f from s[a:b], or NULL: with an error set on a real failure (memory), with
 * none when the Python decoder must decide. */
static PyObject *
value_of(const Field *f, const unsigned char *s, Py_ssize_t a, Py_ssize_t b)
{
    Py_ssize_t len = b - a;
    const unsigned char *p = s + a;
    if (f->kind == K_STR || f->kind == K_BYTES) {
        p += strip_pad(f, p, &len);
        unsigned char stack[256], *buf = stack;
        if (f->desc) {
            if (len > (Py_ssize_t)sizeof(stack)) {
                buf = PyMem_Malloc(len);
                if (buf == NULL)
                    return PyErr_NoMemory();
            }
            for (Py_ssize_t i = 0; i < len; i++)
                buf[i] = p[i] ^ 0xFF;
            p = buf;
        }
        PyObject *out;
        if (f->kind == K_BYTES)
            out = PyBytes_FromStringAndSize((const char *)p, len);
        else {
            out = PyUnicode_DecodeUTF8((const char *)p, len, NULL);
            if (out == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                PyErr_Clear();
        }
        if (buf != stack)
            PyMem_Free(buf);
        return out;
    }
    if (f->kind == K_FLOAT64) {
        if (len != 8)
            return NULL;
        double d = PyFloat_Unpack8((const char *)p, 0);  /* big-endian, as struct '>d' reads it */
        if (d == -1.0 && PyErr_Occurred())
            return NULL;
        return PyFloat_FromDouble(d);
    }
    i128 x;
    if (int_value(f, p, len, &x))
        return NULL;
    return int_of(x);
}

/* Where each field of the key s[0:n] lies (span[i] = [start, end)), the separators and the
 * salt checked: 0, or 1 when the key does not read as this layout (the Python decoder decides). */
static int
cut(Reader *r, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2])
{
    Py_ssize_t nf = r->nf, ls = r->lsep;
    if (n < r->head || (r->sepcheck && memcmp(s + r->pwidth, r->sep, ls) != 0))
        return 1;
    Py_ssize_t pos = r->head;
    for (Py_ssize_t i = 0; i < nf; i++) {
        const Field *f = &r->f[i];
        Py_ssize_t e;
        if (f->width >= 0) {
            e = pos + f->width;
            if (e > n)
                return 1;
        }
        else if (f->plan < 0) {
            e = -1;
            for (Py_ssize_t q = pos; q + ls <= n; q++)
                if (s[q] == (unsigned char)r->sep[0] && memcmp(s + q, r->sep, ls) == 0) {
                    e = q;
                    break;
                }
            if (e < 0)
                return 1;
        }
        else {
            e = n - f->plan;
            if (e < pos)
                return 1;
        }
        span[i][0] = pos;
        span[i][1] = e;
        pos = e;
        if (i < nf - 1 && ls) {
            if (pos + ls > n || memcmp(s + pos, r->sep, ls) != 0)
                return 1;
            pos += ls;
        }
    }
    return pos != n || (r->check && salt_differs(r, s, n, span));
}

static PyObject *
Reader_read(Reader *r, PyObject *key)
{
    if (!PyBytes_CheckExact(key))
        Py_RETURN_NONE;
    const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(key);
    Py_ssize_t n = PyBytes_GET_SIZE(key), nf = r->nf;
    Py_ssize_t stack[16][2], (*span)[2] = stack;
    PyObject *vals[16], **v = vals;
    PyObject *out = NULL;
    if (nf > 16) {
        span = PyMem_Malloc(nf * sizeof(*span));
        v = PyMem_Calloc(nf, sizeof(PyObject *));
        if (span == NULL || v == NULL) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (cut(r, s, n, span))
        goto none;
    for (Py_ssize_t i = 0; i < nf; i++)
        v[i] = NULL;
    for (Py_ssize_t i = 0; i < nf; i++) {
        v[i] = value_of(&r->f[i], s, span[i][0], span[i][1]);
        if (v[i] == NULL)
            goto release;
    }
    out = PyDict_New();
    if (out != NULL) {
        for (Py_ssize_t i = 0; i < nf; i++)
            if (PyDict_SetItem(out, PyTuple_GET_ITEM(r->names, i), v[i]) < 0) {
                Py_CLEAR(out);
                break;
            }
    }
release:
    for (Py_ssize_t i = 0; i < nf; i++)
        Py_XDECREF(v[i]);
    if (out == NULL && !PyErr_Occurred())
        goto none;
    goto done;
none:
    out = Py_None;
    Py_INCREF(out);
done:
    if (span != stack)
        PyMem_Free(span);
    if (v != vals)
        PyMem_Free(v);
    return out;
}

/* columns(keys): the fields of a list of bytes keys as columns, or None when some key is left to
 * Python (the batch decoder's own routes then decide). A number column is a bytearray of native
 * int64 / float64; a text column (width, bytearray of native UCS4 values, width code points a row,
 * NUL-filled) for ASCII text without NUL; a bytes column a list of bytes. */
static PyObject *
Reader_columns(Reader *r, PyObject *keys)
{
    if (!PyList_CheckExact(keys) || PyList_GET_SIZE(keys) == 0)
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(keys), nf = r->nf;
    Py_ssize_t stack[16][2], (*span)[2] = stack;
    PyObject *cols = PyTuple_New(nf), *out = NULL;
    Py_ssize_t **text = PyMem_Calloc(nf, sizeof(Py_ssize_t *));  /* per text field: (start, length) a row */
    Py_ssize_t *widest = PyMem_Calloc(nf, sizeof(Py_ssize_t));
    if (nf > 16)
        span = PyMem_Malloc(nf * sizeof(*span));
    if (cols == NULL || text == NULL || widest == NULL || span == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nf; i++) {
        const Field *f = &r->f[i];
        PyObject *c;
        if (f->kind == K_BYTES)
            c = PyList_New(n);
        else if (f->kind == K_STR) {
            c = Py_None;
            Py_INCREF(c);
            text[i] = PyMem_Malloc(2 * n * sizeof(Py_ssize_t));
            if (text[i] == NULL) {
                Py_DECREF(c);
                PyErr_NoMemory();
                goto done;
            }
        }
        else
            c = PyByteArray_FromStringAndSize(NULL, n * 8);
        if (c == NULL)
            goto done;
        PyTuple_SET_ITEM(cols, i, c);
    }
    for (Py_ssize_t row = 0; row < n; row++) {
        PyObject *key = PyList_GET_ITEM(keys, row);
        if (!PyBytes_CheckExact(key))
            goto none;
        const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(key);
        if (cut(r, s, PyBytes_GET_SIZE(key), span))
            goto none;
        for (Py_ssize_t i = 0; i < nf; i++) {
            const Field *f = &r->f[i];
            const unsigned char *p = s + span[i][0];
            Py_ssize_t len = span[i][1] - span[i][0];
            PyObject *c = PyTuple_GET_ITEM(cols, i);
            if (f->kind == K_STR) {
                Py_ssize_t a = strip_pad(f, p, &len);
                unsigned char x = f->desc ? 0xFF : 0;
                for (Py_ssize_t j = a; j < a + len; j++) {
                    unsigned char b = p[j] ^ x;
                    if (b == 0 || b >= 0x80)
                        goto none;  /* NUL (numpy str drops it) or non-ASCII: Python decides */
                }
                text[i][2 * row] = span[i][0] + a;
                text[i][2 * row + 1] = len;
                if (len > widest[i])
                    widest[i] = len;
            }
            else if (f->kind == K_BYTES) {
                PyObject *v = value_of(f, s, span[i][0], span[i][1]);
                if (v == NULL)
                    goto fail;
                PyList_SET_ITEM(c, row, v);
            }
            else if (f->kind == K_FLOAT64) {
                double d = PyFloat_Unpack8((const char *)p, 0);
                if (d == -1.0 && PyErr_Occurred())
                    goto done;
                memcpy(PyByteArray_AS_STRING(c) + 8 * row, &d, 8);
            }
            else {
                i128 v;
                if (int_value(f, p, len, &v) || v < INT64_MIN || v > INT64_MAX)
                    goto none;  /* past int64: Python ints, key by key */
                int64_t w = (int64_t)v;
                memcpy(PyByteArray_AS_STRING(c) + 8 * row, &w, 8);
            }
        }
    }
    for (Py_ssize_t i = 0; i < nf; i++) {
        const Field *f = &r->f[i];
        if (f->kind != K_STR)
            continue;
        /* a fixed-width field keeps its width as numpy's, as the vector route's columns do */
        Py_ssize_t w = f->width >= 0 ? f->width : widest[i];
        PyObject *buf = PyByteArray_FromStringAndSize(NULL, n * w * 4);
        if (buf == NULL)
            goto done;
        Py_UCS4 *u = (Py_UCS4 *)PyByteArray_AS_STRING(buf);
        memset(u, 0, n * w * 4);
        for (Py_ssize_t row = 0; row < n; row++) {
            const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(PyList_GET_ITEM(keys, row));
            const unsigned char *p = s + text[i][2 * row];
            unsigned char x = f->desc ? 0xFF : 0;
            for (Py_ssize_t j = 0; j < text[i][2 * row + 1]; j++)
                u[row * w + j] = p[j] ^ x;
        }
        PyObject *pair = Py_BuildValue("(nN)", w, buf);
        if (pair == NULL)
            goto done;
        PyObject *placeholder = PyTuple_GET_ITEM(cols, i);  /* None until now */
        PyTuple_SET_ITEM(cols, i, pair);
        Py_DECREF(placeholder);
    }
    out = cols;
    cols = NULL;
    goto done;
none:
    out = Py_None;
    Py_INCREF(out);
    goto done;
fail:
    if (!PyErr_Occurred())
        goto none;
done:
    Py_XDECREF(cols);
    if (text != NULL)
        for (Py_ssize_t i = 0; i < nf; i++)
            PyMem_Free(text[i]);
    PyMem_Free(text);
    PyMem_Free(widest);
    if (span != stack)
        PyMem_Free(span);
    return out;
}

static PyMethodDef Reader_methods[] = {
    {"read", (PyCFunction)Reader_read, METH_O,
     "read(key) -> dict of the key's fields, or None when the Python decoder must decide"},
    {"columns", (PyCFunction)Reader_columns, METH_O,
     "columns(keys) -> a column per field (see _native.c), or None when some key is left to Python"},
    {NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyshape.core._native.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A row-key layout compiled once; read(key) cuts a key into its fields.",
    .tp_methods = Reader_methods,
    .tp_new = Reader_new,
};

/* ------------------------------------------------------------------------------------ decoder */

/* decode(key, verify=True): the C reader for that verify (None: none), else the Python decoder.
 * One C call when the reader answers; the Python decoder gets the call exactly as it came. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *plain, *verified, *fallback;
} Decoder;

static PyObject *
Decoder_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Decoder *d = (Decoder *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *verify = Py_True;
    if (kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0) {
        if (nargs == 2)
            verify = args[1];
        else if (nargs != 1)
            goto fallback;
    }
    else if (nargs == 1 && PyTuple_GET_SIZE(kwnames) == 1
             && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "verify") == 0) {
        verify = args[1];
    }
    else {
        goto fallback;
    }
    int v = PyObject_IsTrue(verify);
    if (v < 0)
        return NULL;
    PyObject *reader = v ? d->verified : d->plain;
    if (reader != Py_None) {
        PyObject *r = Reader_read((Reader *)reader, args[0]);
        if (r != Py_None)
            return r;  /* the fields, or NULL on a real failure (memory) */
        Py_DECREF(r);
    }
fallback:
    return PyObject_Vectorcall(d->fallback, args, nargsf, kwnames);
}

static PyObject *
Decoder_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *plain, *verified, *fallback;
    if (!PyArg_ParseTuple(args, "OOO:Decoder", &plain, &verified, &fallback))
        return NULL;
    if ((plain != Py_None && !PyObject_TypeCheck(plain, &ReaderType))
        || (verified != Py_None && !PyObject_TypeCheck(verified, &ReaderType)) || !PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Decoder(plain: Reader | None, verified: Reader | None, fallback: callable)");
        return NULL;
    }
    Decoder *d = (Decoder *)type->tp_alloc(type, 0);
    if (d == NULL)
        return NULL;
    d->vectorcall = Decoder_vectorcall;
    Py_INCREF(plain);
    Py_INCREF(verified);
    Py_INCREF(fallback);
    d->plain = plain;
    d->verified = verified;
    d->fallback = fallback;
    return (PyObject *)d;
}

/* The Python decoder refers back to its schema, which holds this decoder: a cycle for the GC. */
static int
Decoder_traverse(Decoder *d, visitproc visit, void *arg)
{
    Py_VISIT(d->plain);
    Py_VISIT(d->verified);
    Py_VISIT(d->fallback);
    return 0;
}

static int
Decoder_clear(Decoder *d)
{
    Py_CLEAR(d->plain);
    Py_CLEAR(d->verified);
    Py_CLEAR(d->fallback);
    return 0;
}

static void
Decoder_dealloc(Decoder *d)
{
    PyObject_GC_UnTrack(d);
    Decoder_clear(d);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static PyMemberDef Decoder_members[] = {
    {"fallback", T_OBJECT, offsetof(Decoder, fallback), READONLY, "the Python decoder, for what the readers leave"},
    {"plain", T_OBJECT, offsetof(Decoder, plain), READONLY, "the Reader for verify=False, or None"},
    {"verified", T_OBJECT, offsetof(Decoder, verified), READONLY, "the Reader for verify=True, or None"},
    {NULL},
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "keyshape.core._native.Decoder",
    .tp_basicsize = sizeof(Decoder),
    .tp_dealloc = (destructor)Decoder_dealloc,
    .tp_vectorcall_offset = offsetof(Decoder, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "decode(key, verify=True) -> dict: a C Reader first, the Python decoder for what it leaves.",
    .tp_traverse = (traverseproc)Decoder_traverse,
    .tp_clear = (inquiry)Decoder_clear,
    .tp_members = Decoder_members,
    .tp_new = Decoder_new,
};

static PyMethodDef methods[] = {
    {"string_hash", string_hash, METH_O, "String.hashCode of bytes read as text, as 0..2**32-1"},
    {"bytes_hash", bytes_hash, METH_O, "Arrays.hashCode(byte[]) (signed bytes), as a signed 32-bit int"},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "keyshape.core._native", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&ReaderType) < 0 || PyType_Ready(&DecoderType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddType(m, &ReaderType) < 0 || PyModule_AddType(m, &DecoderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
