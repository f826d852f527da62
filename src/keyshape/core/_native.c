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
#include <math.h>
#include <string.h>
#include <structmember.h>
#if defined(__SSE2__)
#include <emmintrin.h>  /* the key check's masks 16 bytes a step (every x86-64 has SSE2) */
#endif

#ifndef __SIZEOF_INT128__
#error "keyshape._native needs a compiler with __int128 (gcc, clang); keyshape falls back to Python without it"
#endif

typedef __int128 i128;

/* 1 when a[0:n] differs from b[0:n]: the compares here are of a few bytes (separators, salts,
 * short J), where a call into libc's memcmp costs more than the compare. */
static inline int
differs(const void *a, const void *b, Py_ssize_t n)
{
    const unsigned char *x = a, *y = b;
    for (Py_ssize_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------- hashes */

/* 31**8 .. 31**1 modulo 2**32: eight bytes a step of Java's h = 31*h + c (h * 31**8 + the eight
 * weighted by 31**7..1), one multiply on the dependency chain per eight bytes instead of one per
 * byte; the eight products are independent. */
#define HASH8(h, c)                                                                                  \
    (2487512833u * (h) + 1742810335u * c(0) + 887503681u * c(1) + 28629151u * c(2)                   \
     + 923521u * c(3) + 29791u * c(4) + 961u * c(5) + 31u * c(6) + c(7))

/* String.hashCode of ASCII bytes (their own UTF-16 code units) into *out: 0, or 1 when a byte is
 * not ASCII (the text must be decoded first). */
static inline int
ascii_hash(const unsigned char *s, Py_ssize_t n, uint32_t *out)
{
    /* 31**0 .. 31**7 modulo 2**32: the last n % 8 bytes weighted independently, then h moved
     * on by 31**(n % 8) in one multiply (no chain of one multiply per byte) */
    static const uint32_t p31[8] = {1u, 31u, 961u, 29791u, 923521u, 28629151u, 887503681u, 1742810335u};
    uint32_t h = 0;
    uint64_t any = 0, w;
    Py_ssize_t i = 0;
#define UB(k) ((uint32_t)s[i + (k)])
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        any |= w;
        h = HASH8(h, UB);
    }
#undef UB
    if (i < n) {
        Py_ssize_t r = n - i;
        uint32_t t = 0;
        for (Py_ssize_t k = 0; k < r; k++) {
            t += p31[r - 1 - k] * s[i + k];
            any |= s[i + k];
        }
        h = h * p31[r] + t;
    }
    *out = h;
    return (any & 0x8080808080808080ull) != 0;
}

/* Arrays.hashCode(byte[]): h = 31*h + byte from h = 1, bytes signed, as Java's int. */
static inline int32_t
signed_hash(const unsigned char *s, Py_ssize_t n)
{
    uint32_t h = 1;
    Py_ssize_t i = 0;
#define SB(k) ((uint32_t)(int32_t)(signed char)s[i + (k)])
    for (; i + 8 <= n; i += 8)
        h = HASH8(h, SB);
#undef SB
    for (; i < n; i++)
        h = 31u * h + (uint32_t)(int32_t)(signed char)s[i];
    return (int32_t)h;
}

/* a % d for 32-bit a by a divisor fixed per reader, with m = UINT64_MAX / d + 1 made once
 * (Lemire's fastmod): two multiplies instead of a division on every key's salt check. */
static inline uint32_t
fastmod(uint32_t a, uint64_t m, uint32_t d)
{
    return (uint32_t)(((unsigned __int128)(m * a) * d) >> 64);
}

/* String.hashCode of bytes read as text: ASCII bytes are their own UTF-16 code units; anything
 * else is decoded as UTF-8, else ISO-8859-1 (keyshape.schema.compiled.java_string_hash_u32). */
static int
string_hash_u32(const unsigned char *s, Py_ssize_t n, uint32_t *out)
{
    if (!ascii_hash(s, n, out))
        return 0;
    uint32_t h;
    Py_ssize_t i;
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
    return PyLong_FromLong((long)signed_hash((const unsigned char *)PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg)));
}

/* MD5 (RFC 1321) of one short message, for the md5 salt check; K[i] = floor(|sin(i + 1)| * 2**32),
 * made at import and checked there against MD5("") (a wrong table turns the md5 check off). */
static uint32_t MD5_K[64];
static const unsigned char MD5_S[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};
static int md5_ok;

static void
md5_block(uint32_t h[4], const unsigned char *b)
{
    uint32_t m[16], a = h[0], bb = h[1], c = h[2], d = h[3];
    for (int i = 0; i < 16; i++)
        m[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
    for (int i = 0; i < 64; i++) {
        uint32_t f;
        int g;
        if (i < 16) { f = (bb & c) | (~bb & d); g = i; }
        else if (i < 32) { f = (d & bb) | (~d & c); g = (5 * i + 1) & 15; }
        else if (i < 48) { f = bb ^ c ^ d; g = (3 * i + 5) & 15; }
        else { f = c ^ (bb | ~d); g = (7 * i) & 15; }
        f += a + MD5_K[i] + m[g];
        a = d;
        d = c;
        c = bb;
        bb += (f << MD5_S[i]) | (f >> (32 - MD5_S[i]));
    }
    h[0] += a;
    h[1] += bb;
    h[2] += c;
    h[3] += d;
}

static void
md5(const unsigned char *msg, Py_ssize_t len, unsigned char out[16])
{
    uint32_t h[4] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
    Py_ssize_t done = 0;
    for (; done + 64 <= len; done += 64)
        md5_block(h, msg + done);
    unsigned char tail[128] = {0};
    Py_ssize_t rest = len - done;
    memcpy(tail, msg + done, rest);
    tail[rest] = 0x80;
    Py_ssize_t blocks = rest + 9 <= 64 ? 1 : 2;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[64 * blocks - 8 + i] = (unsigned char)(bits >> (8 * i));
    for (Py_ssize_t i = 0; i < blocks; i++)
        md5_block(h, tail + 64 * i);
    for (int i = 0; i < 16; i++)
        out[i] = (unsigned char)(h[i / 4] >> (8 * (i % 4)));
}

static void
md5_init(void)
{
    static const unsigned char empty[16] = {0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04,
                                            0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e};
    unsigned char got[16];
    for (int i = 0; i < 64; i++)
        MD5_K[i] = (uint32_t)floor(fabs(sin((double)(i + 1))) * 4294967296.0);
    md5((const unsigned char *)"", 0, got);
    md5_ok = memcmp(got, empty, 16) == 0;
}

static PyObject *
md5_digest(PyObject *self, PyObject *arg)
{
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "md5 takes bytes");
        return NULL;
    }
    unsigned char out[16];
    md5((const unsigned char *)PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg), out);
    return PyBytes_FromStringAndSize((const char *)out, 16);
}

/* CRC-32 as zlib computes it (reflected, polynomial 0xEDB88320). */
static uint32_t CRC_T[8][256];  /* slicing-by-8: T[k][i] is byte i's CRC pushed on by k zero bytes */

static void
crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        CRC_T[0][i] = c;
    }
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++)
            CRC_T[k][i] = (CRC_T[k - 1][i] >> 8) ^ CRC_T[0][CRC_T[k - 1][i] & 0xFF];
}

/* zlib's CRC-32, eight bytes a step (eight independent table reads instead of a chain of eight) */
static uint32_t
crc32_of(const unsigned char *p, Py_ssize_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint32_t one = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24;
        uint32_t two = (uint32_t)p[i + 4] | (uint32_t)p[i + 5] << 8 | (uint32_t)p[i + 6] << 16 | (uint32_t)p[i + 7] << 24;
        one ^= c;
        c = CRC_T[7][one & 0xFF] ^ CRC_T[6][(one >> 8) & 0xFF] ^ CRC_T[5][(one >> 16) & 0xFF] ^ CRC_T[4][one >> 24]
            ^ CRC_T[3][two & 0xFF] ^ CRC_T[2][(two >> 8) & 0xFF] ^ CRC_T[1][(two >> 16) & 0xFF] ^ CRC_T[0][two >> 24];
    }
    for (; i < n; i++)
        c = CRC_T[0][(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* ------------------------------------------------------------------------------------- reader */

/* K_PINT: a Phoenix integer (1, 2, 4 or 8 bytes, big-endian, a signed type's sign bit flipped) */
enum { K_STR = 0, K_BYTES = 1, K_DIGITS = 2, K_INT32 = 3, K_INT64 = 4, K_FLOAT64 = 5, K_PINT = 6 };
enum { C_NONE = 0, C_MOD = 1, C_JAVA_HASH_SHORT = 2, C_PHOENIX = 3, C_MD5 = 4, C_CRC32 = 5, C_OPENTSDB = 6, C_MURMUR3 = 7 };
#define MAX_SEP 16
#define MAX_THREADS 8
#define ROWS_PER_THREAD 16384   /* a batch splits in chunks of at least this many rows */

typedef struct {
    int kind;
    Py_ssize_t width;   /* -1: variable */
    Py_ssize_t plan;    /* variable only: -1 ends at the next separator, n >= 0 ends n bytes before the key's end */
    int has_pad, pad_left, desc, domain;
    int term;           /* Phoenix layouts: the byte that ends a variable value (0 or 255), -1 none */
    int psigned;        /* K_PINT: a signed type (its sign bit flipped) */
    unsigned char pad[256]; /* bytes that strip() takes off (a set, as bytes.lstrip's argument is) */
    int64_t maxv, lo, hi;
} Field;

/* A direct-mapped cache of J -> md5 prefix (exact: J's bytes are compared): users and devices
 * repeat, and MD5 costs more than reading the rest of the key. One 64-byte line a slot; 32,768
 * slots (2 MiB, made on first use), so a few thousand devices seldom share one. */
#define MEMO_BITS 15
#define MEMO_J 47
#define MEMO_PRE 16
struct Md5Slot {
    unsigned char len;  /* J's length + 1; 0: empty */
    unsigned char j[MEMO_J];
    unsigned char pre[MEMO_PRE];
};
struct Md5Memo {
    struct Md5Slot slot[1 << MEMO_BITS];
};

typedef struct {
    PyObject_HEAD
    PyObject *names;    /* tuple of str, one per field */
    Py_ssize_t nf;
    Field *f;
    Py_ssize_t head, pwidth, lsep;
    int sepcheck;
    int phoenix;        /* a Phoenix row key: separators only after variable values (see cut_phoenix) */
    char sep[MAX_SEP];
    int check;          /* C_*: the salt re-derived from J and compared with the key's prefix */
    long buckets;
    uint64_t modm;      /* fastmod's multiplier for buckets */
    int from_k;         /* J is K (the whole key after the prefix) */
    Py_ssize_t nh, *hidx;
    Py_ssize_t metric;  /* opentsdb: the metric UID's width at the start of J */
    uint32_t seed;      /* murmur3: the hash's seed */
    /* md5 only (the one costly salt): recent J -> prefix, made on first use; memo[0] for read() and
     * a batch's first thread, memo[t] for its thread t */
    struct Md5Memo *memo[MAX_THREADS];
} Reader;

static void
Reader_dealloc(Reader *r)
{
    Py_XDECREF(r->names);
    for (int t = 0; t < MAX_THREADS; t++)
        PyMem_RawFree(r->memo[t]);
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
 *   check: None or (kind, buckets, from_k, hashed field indexes[, metric width[, murmur3 seed]]) */
static PyObject *
Reader_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *names, *fields, *check, *sep;
    Py_ssize_t head, pwidth;
    int sepcheck, phoenix = 0;
    if (!PyArg_ParseTuple(args, "O!nnSpO!O|p", &PyTuple_Type, &names, &head, &pwidth, &sep, &sepcheck,
                          &PyTuple_Type, &fields, &check, &phoenix))
        return NULL;
    Py_ssize_t nf = PyTuple_GET_SIZE(fields);
    if (nf != PyTuple_GET_SIZE(names) || nf == 0 || PyBytes_GET_SIZE(sep) > MAX_SEP) {
        PyErr_SetString(PyExc_ValueError, "Reader: one name per field, at least one field, a separator of at most 16 bytes");
        return NULL;
    }
    /* the reads below trust these: a key shorter than head is refused before any offset is used */
    if (pwidth < 0 || pwidth > 64 || head < pwidth || (sepcheck && head < pwidth + PyBytes_GET_SIZE(sep))) {
        PyErr_SetString(PyExc_ValueError, "Reader: 0 <= prefix_width <= 64, and head covers the prefix and its separator");
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
    r->phoenix = phoenix;
    r->lsep = PyBytes_GET_SIZE(sep);
    memcpy(r->sep, PyBytes_AS_STRING(sep), r->lsep);
    r->f = PyMem_Calloc(nf, sizeof(Field));
    if (r->f == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < nf; i++) {
        PyObject *t = PyTuple_GET_ITEM(fields, i);
        Field *f = &r->f[i];
        int64_t kind, width, plan, pad_left, desc, domain;
        Py_ssize_t items = phoenix ? 12 : 10;
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != items || !PyBytes_Check(PyTuple_GET_ITEM(t, 3))) {
            PyErr_SetString(PyExc_ValueError, "Reader: a field is (kind, width, plan, pad, pad_left, desc, max, lo, hi, domain), "
                                              "and for a Phoenix layout also (term, signed)");
            goto fail;
        }
        if (get_i64(t, 0, &kind) || get_i64(t, 1, &width) || get_i64(t, 2, &plan) || get_i64(t, 4, &pad_left)
            || get_i64(t, 5, &desc) || get_i64(t, 6, &f->maxv) || get_i64(t, 7, &f->lo) || get_i64(t, 8, &f->hi)
            || get_i64(t, 9, &domain))
            goto fail;
        int64_t term = -1, psigned = 0;
        if (phoenix && (get_i64(t, 10, &term) || get_i64(t, 11, &psigned)))
            goto fail;
        /* a Phoenix layout: VARCHAR/CHAR text and integers; a variable value ends at its term
         * byte (0 or 255), or, the last one, plan (0 or 1) bytes of 0xFF before the key's end */
        if (phoenix && (kind != K_STR && kind != K_PINT)) {
            PyErr_SetString(PyExc_ValueError, "Reader: a Phoenix layout reads text and integers only");
            goto fail;
        }
        if (phoenix && (kind == K_PINT ? width != 1 && width != 2 && width != 4 && width != 8
                        : width == -1 ? (i < nf - 1 ? term != 0 && term != 255 : term != -1 || plan < 0 || plan > 1)
                        : width < 1)) {
            PyErr_SetString(PyExc_ValueError, "Reader: a Phoenix integer is 1, 2, 4 or 8 bytes; a variable value ends at "
                                              "0 or 255, the last one at the key's end (plan 0 or 1)");
            goto fail;
        }
        if (kind < K_STR || kind > (phoenix ? K_PINT : K_FLOAT64) || width < -1
            || (!phoenix && width == -1 && (plan < -1 || (plan == -1 && PyBytes_GET_SIZE(sep) == 0)))
            || (kind >= K_INT32 && kind <= K_FLOAT64 && width != (kind == K_INT32 ? 4 : 8))) {
            PyErr_SetString(PyExc_ValueError, "Reader: a field's kind is 0..5; a variable-width one ends at a separator "
                                              "(plan -1, a separator given) or n >= 0 bytes before the key's end");
            goto fail;
        }
        f->kind = (int)kind;
        f->width = (Py_ssize_t)width;
        f->plan = (Py_ssize_t)plan;
        f->pad_left = (int)pad_left;
        f->desc = (int)desc;
        f->domain = (int)domain;
        f->term = (int)term;
        f->psigned = (int)psigned;
        PyObject *pad = PyTuple_GET_ITEM(t, 3);
        f->has_pad = PyBytes_GET_SIZE(pad) > 0;
        for (Py_ssize_t j = 0; j < PyBytes_GET_SIZE(pad); j++)
            f->pad[(unsigned char)PyBytes_AS_STRING(pad)[j]] = 1;
    }
    if (check != Py_None) {
        PyObject *idx;
        int ckind, from_k;
        long buckets;
        Py_ssize_t metric = 0;
        long long seed = 0;
        if (!PyArg_ParseTuple(check, "ilpO!|nL", &ckind, &buckets, &from_k, &PyTuple_Type, &idx, &metric, &seed))
            goto fail;
        r->seed = (uint32_t)seed;
        if (metric < 0) {
            PyErr_SetString(PyExc_ValueError, "Reader: the metric width is >= 0");
            goto fail;
        }
        r->metric = metric;
        r->check = ckind;
        r->buckets = buckets;
        r->modm = UINT64_MAX / (uint64_t)(buckets > 0 ? buckets : 1) + 1;
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
        if (buckets <= 0 || buckets > INT32_MAX || ckind < C_MOD || ckind > C_MURMUR3 || r->pwidth > 64
            || (ckind == C_MD5 && r->pwidth > 32) || (ckind == C_OPENTSDB && r->pwidth > 8)) {
            PyErr_SetString(PyExc_ValueError, "Reader: unknown salt check");
            goto fail;
        }
    }
    return (PyObject *)r;
fail:
    Py_DECREF(r);
    return NULL;
}

/* HBase's MurmurHash3 x86_32 of p[0:n] with seed (org.apache.hadoop.hbase.util.MurmurHash3), as
 * uint32 (keyshape.core.hashing.murmur3_32 gives it signed). */
static inline uint32_t
murmur3_x86_32(const unsigned char *p, Py_ssize_t n, uint32_t seed)
{
    const uint32_t c1 = 0xCC9E2D51u, c2 = 0x1B873593u;
    uint32_t h = seed, k;
    Py_ssize_t i = 0;
    for (; i + 4 <= n; i += 4) {
        k = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24;
        k *= c1;
        k = k << 15 | k >> 17;
        k *= c2;
        h ^= k;
        h = h << 13 | h >> 19;
        h = h * 5 + 0xE6546B64u;
    }
    k = 0;
    switch (n - i) {
    case 3:
        k ^= (uint32_t)p[i + 2] << 16;
        /* fall through */
    case 2:
        k ^= (uint32_t)p[i + 1] << 8;
        /* fall through */
    case 1:
        k ^= (uint32_t)p[i];
        k *= c1;
        k = k << 15 | k >> 17;
        k *= c2;
        h ^= k;
    }
    h ^= (uint32_t)n;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

/* The prefix a salt strategy gives J, into pre[0:r->pwidth]: 0, or 1 when the Python decoder
 * must decide (J is not ASCII for a String hash, whose text it would decode). */
static inline int
salt_of(Reader *r, const unsigned char *j, Py_ssize_t n, unsigned char *pre)
{
    static const char hex[] = "0123456789abcdef";
    Py_ssize_t w = r->pwidth;
    uint32_t h;
    switch (r->check) {
    case C_MURMUR3: {  /* the mod form over murmur3 of J's bytes */
        uint32_t b = fastmod(murmur3_x86_32(j, n, r->seed) & 0x7FFFFFFFu, r->modm, (uint32_t)r->buckets);
        for (Py_ssize_t i = w - 1; i >= 0; i--, b /= 10)
            pre[i] = (unsigned char)('0' + b % 10);
        return b != 0;
    }
    case C_MOD:
    case C_JAVA_HASH_SHORT:
        if (ascii_hash(j, n, &h))
            return 1;
        if (r->check == C_JAVA_HASH_SHORT) {
            if (w != 2)
                return 1;
            pre[0] = (unsigned char)((h & 0x7FFFu) >> 8);
            pre[1] = (unsigned char)(h & 0xFFu);
            return 0;
        }
        {
            uint32_t b = fastmod(h & 0x7FFFFFFFu, r->modm, (uint32_t)r->buckets);
            for (Py_ssize_t i = w - 1; i >= 0; i--, b /= 10)
                pre[i] = (unsigned char)('0' + b % 10);
            return b != 0;  /* more digits than the width: not this schema's prefix */
        }
    case C_PHOENIX:
    case C_OPENTSDB: {
        if (r->check == C_OPENTSDB) {
            Py_ssize_t m = n < r->metric ? n : r->metric, z = 0;
            while (z < m && j[z] == 0)
                z++;
            if (z == m) {  /* a zero (or empty) metric UID is not salted */
                memset(pre, 0, w);
                return 0;
            }
        }
        /* Java's remainder takes the dividend's sign, and the salt is its absolute value: |h| % b */
        int32_t h32 = signed_hash(j, n);
        uint32_t v = fastmod(h32 < 0 ? 0u - (uint32_t)h32 : (uint32_t)h32, r->modm, (uint32_t)r->buckets);
        if (r->check == C_PHOENIX) {
            if (w != 1)
                return 1;
            pre[0] = (unsigned char)v;
            return 0;
        }
        for (Py_ssize_t i = 1; i <= w; i++)  /* Java int shifts: the count wraps modulo 32 */
            pre[w - i] = (unsigned char)(((uint32_t)v >> ((8 * (i - 1)) % 32)) & 0xFF);
        return 0;
    }
    case C_MD5: {
        unsigned char d[16];
        if (!md5_ok)
            return 1;
        md5(j, n, d);
        for (Py_ssize_t i = 0; i < w; i++)
            pre[i] = (unsigned char)hex[i & 1 ? d[i / 2] & 15 : d[i / 2] >> 4];
        return 0;
    }
    case C_CRC32:
        if (w != 4)
            return 1;
        h = crc32_of(j, n) & 0xFFFFu;
        for (int i = 3; i >= 0; i--, h >>= 4)
            pre[i] = (unsigned char)hex[h & 15];
        return 0;
    }
    return 1;
}

/* J -> prefix through an md5 memo (computed and remembered on a miss; memo NULL: computed): 0, or
 * 1 when the Python decoder must decide. Needs no GIL, as nothing below salt_differs does. */
static int
md5_salt(Reader *r, struct Md5Memo *memo, const unsigned char *j, Py_ssize_t len, unsigned char *pre)
{
    if (memo == NULL || len > MEMO_J || r->pwidth > MEMO_PRE)
        return salt_of(r, j, len, pre);
    uint64_t f = (uint64_t)len;  /* where J's slot is: eight bytes a multiply */
    Py_ssize_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, j + i, 8);
        f = (f ^ w) * 0x9E3779B97F4A7C15ull;
    }
    if (i < len) {  /* the last bytes: the word that ends J (overlapping), or byte by byte */
        uint64_t w = 0;
        if (len >= 8)
            memcpy(&w, j + len - 8, 8);
        else
            for (; i < len; i++)
                w = w << 8 | j[i];
        f = (f ^ w) * 0x9E3779B97F4A7C15ull;
    }
    struct Md5Slot *slot = &memo->slot[(f ^ (f >> 29)) * 0xBF58476D1CE4E5B9ull >> (64 - MEMO_BITS)];
    if (slot->len == len + 1 && !differs(slot->j, j, len)) {
        memcpy(pre, slot->pre, MEMO_PRE);
        return 0;
    }
    if (salt_of(r, j, len, pre))
        return 1;
    slot->len = (unsigned char)(len + 1);
    memcpy(slot->j, j, len);
    memcpy(slot->pre, pre, MEMO_PRE);
    return 0;
}

/* The prefix of a J made of several fields joined by the separator (copied together first). */
static int
joined_salt(Reader *r, struct Md5Memo *memo, const unsigned char *s, Py_ssize_t (*span)[2], unsigned char *pre)
{
    unsigned char stack[256], *buf = stack;
    Py_ssize_t len = 0, at = 0;
    for (Py_ssize_t i = 0; i < r->nh; i++)
        len += (i ? r->lsep : 0) + span[r->hidx[i]][1] - span[r->hidx[i]][0];
    if (len > (Py_ssize_t)sizeof(stack) && (buf = PyMem_RawMalloc(len)) == NULL)
        return 1;  /* no memory: the Python decoder decides (and fails as it will) */
    for (Py_ssize_t i = 0; i < r->nh; i++) {
        if (i) {
            memcpy(buf + at, r->sep, r->lsep);
            at += r->lsep;
        }
        Py_ssize_t a = span[r->hidx[i]][0], b = span[r->hidx[i]][1];
        memcpy(buf + at, s + a, b - a);
        at += b - a;
    }
    int out = r->check == C_MD5 ? md5_salt(r, memo, buf, len, pre) : salt_of(r, buf, len, pre);
    if (buf != stack)
        PyMem_RawFree(buf);
    return out;
}

/* 0 when the key's prefix is the one its J gives (J: the hashed fields' bytes joined by the
 * separator, or K), 1 when not or when the Python decoder must decide. MD5 goes through a memo
 * of recent J (users and devices repeat; MD5 costs more than reading the rest of the key); the
 * other hashes cost less than a memo's look-up and are computed for every key. */
static inline int
salt_differs(Reader *r, struct Md5Memo *memo, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2])
{
    unsigned char pre[64];
    const unsigned char *j;
    Py_ssize_t len;
    if (r->from_k) {
        j = s + r->head;
        len = n - r->head;
    }
    else if (r->nh == 1) {  /* J is one field's bytes: read in place */
        j = s + span[r->hidx[0]][0];
        len = span[r->hidx[0]][1] - span[r->hidx[0]][0];
    }
    else
        return joined_salt(r, memo, s, span, pre) || differs(s, pre, r->pwidth);
    if (r->check == C_MD5)
        return md5_salt(r, memo, j, len, pre) || differs(s, pre, r->pwidth);
    return salt_of(r, j, len, pre) || differs(s, pre, r->pwidth);
}

/* Memo t of an md5 reader (made on first use), or NULL: no md5 check, or no memory (then the
 * salt is computed). GIL held. */
static struct Md5Memo *
reader_memo(Reader *r, int t)
{
    if (r->check != C_MD5)
        return NULL;
    if (r->memo[t] == NULL)
        r->memo[t] = PyMem_RawCalloc(1, sizeof(struct Md5Memo));
    return r->memo[t];
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

/* The value of eight ASCII digits (p[0] the most significant), or UINT64_MAX when a byte is not
 * '0'..'9': all eight checked and combined in a few word operations (SWAR) instead of a
 * dependent multiply per digit; the 19-digit reverse timestamps are most of a key. */
static inline uint64_t
eight_digits(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);  /* little-endian: p[0] in the low byte */
    if (((v & 0xF0F0F0F0F0F0F0F0ull) | (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4))
        != 0x3333333333333333ull)
        return UINT64_MAX;
    v -= 0x3030303030303030ull;
    v = v * 10 + (v >> 8);  /* pairs: each 16-bit lane's low byte holds two digits' value */
    return (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32)))
            + (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
}

/* The decimal value of p[0:len] (len <= 19, so it fits uint64) into *out: 0, or 1 when a byte is
 * not a digit. */
static inline int
digits_of(const unsigned char *p, Py_ssize_t len, uint64_t *out)
{
    static const uint64_t pow10[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
    uint64_t u = 0;
    Py_ssize_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t e = eight_digits(p + i);
        if (e == UINT64_MAX)
            return 1;
        u = u * 100000000u + e;
    }
    if (i && i < len) {
        /* the last r digits: the eight bytes that end the field, the digits already read
         * replaced by leading '0's (the low bytes, little-endian) */
        Py_ssize_t r = len - i;
        uint64_t v, e;
        memcpy(&v, p + len - 8, 8);
        v = (v >> (8 * (8 - r))) << (8 * (8 - r)) | (0x3030303030303030ull >> (8 * r));
        unsigned char b[8];
        memcpy(b, &v, 8);
        if ((e = eight_digits(b)) == UINT64_MAX)
            return 1;
        *out = u * pow10[r] + e;
        return 0;
    }
    for (; i < len; i++) {
        unsigned d = (unsigned)p[i] - '0';
        if (d > 9)
            return 1;
        u = u * 10 + d;
    }
    *out = u;
    return 0;
}

/* The integer of a number field's bytes p[0:len] (K_DIGITS, K_INT32, K_INT64), desc and domain
 * applied: 0, or 1 when the Python decoder must decide. */
static inline int
int_value(const Field *f, const unsigned char *p, Py_ssize_t len, i128 *out)
{
    int64_t v = 0;
    i128 x;
    if (f->kind == K_PINT) {
        if (len != f->width)
            return 1;
        uint64_t u = 0;
        for (Py_ssize_t i = 0; i < len; i++)
            u = u << 8 | p[i];
        if (f->desc)  /* every byte inverted */
            u = (len == 8 ? UINT64_MAX : (1ull << (8 * len)) - 1) - u;
        /* stored: value + 2**(bits-1) for a signed type (its sign bit flipped), value as is else */
        x = f->psigned ? (i128)u - ((i128)1 << (8 * len - 1)) : (i128)u;
    }
    else if (f->kind == K_DIGITS) {
        uint64_t u;
        if (len < 1 || len > 19 || digits_of(p, len, &u))
            return 1;
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
static inline Py_ssize_t
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

/* cut() for a Phoenix row key (RowKeySchema's walk; keyshape.schema.fieldtypes.phoenix gives its field tuples): the
 * salt byte, then each column's value; a variable value ends at its term byte (skipped before the
 * next column), the last one at the key's end (less a trailing 0xFF when DESC values end so). A
 * NULL (an empty value, a value starting with 0x00), trailing NULLs, or bytes past the last column
 * leave the key to Python. */
static int
cut_phoenix(Reader *r, struct Md5Memo *memo, int check, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2])
{
    Py_ssize_t o = r->head;
    if (n < o)
        return 1;
    for (Py_ssize_t i = 0; i < r->nf; i++) {
        const Field *f = &r->f[i];
        Py_ssize_t e;
        if (i > 0 && r->f[i - 1].width < 0)
            o++;  /* the term byte found after the previous value */
        if (f->width >= 0) {
            e = o + f->width;
            if (e > n)
                return 1;
        }
        else if (f->term >= 0) {
            if (o >= n || s[o] == 0)
                return 1;
            const unsigned char *q = memchr(s + o, f->term, n - o);
            if (q == NULL || q == s + o)
                return 1;
            e = q - s;
        }
        else {
            e = n - f->plan;
            if (e <= o || (f->plan && s[n - 1] != 0xFF))
                return 1;
        }
        span[i][0] = o;
        span[i][1] = e;
        o = f->width < 0 && f->term < 0 ? n : e;
    }
    return o != n || (check && salt_differs(r, memo, s, n, span));
}

/* Where each field of the key s[0:n] lies (span[i] = [start, end)), the separators and (check)
 * the salt checked: 0, or 1 when the key does not read as this layout (the Python decoder decides). */
static inline int
cut(Reader *r, struct Md5Memo *memo, int check, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2])
{
    if (r->phoenix)
        return cut_phoenix(r, memo, check, s, n, span);
    Py_ssize_t nf = r->nf, ls = r->lsep;
    if (n < r->head || (r->sepcheck && differs(s + r->pwidth, r->sep, ls)))
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
                if (s[q] == (unsigned char)r->sep[0] && !differs(s + q, r->sep, ls)) {
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
            if (pos + ls > n || differs(s + pos, r->sep, ls))
                return 1;
            pos += ls;
        }
    }
    return pos != n || (check && salt_differs(r, memo, s, n, span));
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
    if (cut(r, reader_memo(r, 0), r->check, s, n, span))
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

typedef struct {
    uint64_t code;  /* length << 56 | the value's bytes */
    PyObject *obj;
} Shared;

/* One columns() call: what its threads share. Every buffer is made before any thread starts,
 * sized by upper bounds, so the threads only write into their own rows. The calling thread holds
 * the GIL until all are done: no Python code runs meanwhile, so the list and its keys stay as
 * they are without a reference taken on each. */
typedef struct {
    Reader *r;
    PyObject *const *keyv;  /* the list's items */
    Py_ssize_t n;
    int arrow;
    char **num;           /* per field: native int64 / float64 rows, or NULL */
    char **text;          /* per field: UCS4 rows of room[i] code points, or Arrow data, or NULL */
    int32_t **offs;       /* per field with Arrow: its offsets (each chunk's from 0 until joined) */
    Py_ssize_t *room;     /* per text field: the longest value a row can hold (a bound, or measured) */
    PyObject **list;      /* per bytes field without Arrow: its list, filled once the threads are done */
    uint64_t **code;      /* per such field, a row's value when short (length << 56 | bytes), else NO_CODE */
    int64_t **span;       /* per such field that can hold long values: a row's [start, end) in its key */
} Batch;

#define NO_CODE UINT64_MAX  /* a code's top byte is its length, at most 7 */

/* One thread's rows [a, z) and what it found. */
typedef struct {
    Batch *b;
    Py_ssize_t a, z;
    struct Md5Memo *memo;
    Py_ssize_t *widest;   /* per field */
    Py_ssize_t *at;       /* per Arrow field: data bytes written from the chunk's base */
    Py_ssize_t maxlen;    /* scan_rows: the longest key */
    Py_ssize_t bytes;     /* scan_rows: the keys' bytes */
    Py_ssize_t *sum;      /* width_rows, per text field: its values' bytes */
    Py_ssize_t *base;     /* per Arrow field: where the chunk's data starts in the column's buffer */
    int status;           /* 0 read; 1 a key left to Python; 2 no memory */
    PyThread_type_lock done;
} Chunk;

/* Big-endian IEEE-754 double, as struct '>d' reads it (no Python call: threads run without the GIL). */
static inline double
double_of(const unsigned char *p)
{
    uint64_t u = 0;
    double d;
    for (int k = 0; k < 8; k++)
        u = u << 8 | p[k];
    memcpy(&d, &u, 8);
    return d;
}

/* Read the chunk's rows into the batch's columns. Reads no Python object but the keys (their
 * type, size and bytes) and calls no Python API: it runs on threads that do not hold the GIL. */
static void
read_rows(Chunk *c)
{
    Batch *b = c->b;
    Reader *r = b->r;
    Py_ssize_t nf = r->nf, stack[16][2], (*span)[2] = stack;
    if (nf > 16 && (span = PyMem_RawMalloc(nf * sizeof(*span))) == NULL) {
        c->status = 2;
        return;
    }
    for (Py_ssize_t row = c->a; row < c->z; row++) {
        PyObject *key = b->keyv[row];
        if (!PyBytes_CheckExact(key)) {
            c->status = 1;
            break;
        }
        const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(key);
        if (cut(r, c->memo, r->check, s, PyBytes_GET_SIZE(key), span)) {
            c->status = 1;
            break;
        }
        for (Py_ssize_t i = 0; i < nf; i++) {
            const Field *f = &r->f[i];
            const unsigned char *p = s + span[i][0];
            Py_ssize_t len = span[i][1] - span[i][0];
            if (b->text[i] != NULL) {
                p += strip_pad(f, p, &len);
                unsigned char x = f->desc ? 0xFF : 0;
                unsigned bad = 0;
                Py_ssize_t room = b->room[i];
                if (len > room) {  /* cannot be (room bounds every value); the Python routes decide */
                    c->status = 1;
                    goto out;
                }
                if (len > c->widest[i])
                    c->widest[i] = len;
                if (b->arrow) {
                    if (c->at[i] + len > INT32_MAX) {
                        c->status = 1;  /* a large_string column: the vector route's */
                        goto out;
                    }
                    unsigned char *d = (unsigned char *)b->text[i] + c->base[i] + c->at[i];
                    for (Py_ssize_t j = 0; j < len; j++) {
                        unsigned char v = p[j] ^ x;
                        bad |= (unsigned char)(v - 1) >= 0x7F;
                        d[j] = v;
                    }
                    b->offs[i][row] = (int32_t)c->at[i];
                    c->at[i] += len;
                }
                else {
                    Py_UCS4 *u = (Py_UCS4 *)b->text[i] + row * room;
                    Py_ssize_t j = 0;
                    for (; j < len; j++) {
                        unsigned char v = p[j] ^ x;
                        bad |= (unsigned char)(v - 1) >= 0x7F;
                        u[j] = v;
                    }
                    for (; j < room; j++)
                        u[j] = 0;
                }
                if (bad && f->kind == K_STR) {
                    c->status = 1;  /* NUL (numpy str drops it) or non-ASCII: Python decides */
                    goto out;
                }
            }
            else if (b->list[i] != NULL) {
                /* bytes objects need the GIL: the value's code (short ones) or its place, for later */
                Py_ssize_t a = strip_pad(f, p, &len);
                uint64_t code = NO_CODE;
                if (len <= 7 && !f->desc) {
                    code = (uint64_t)len << 56;
                    for (Py_ssize_t q = 0; q < len; q++)
                        code |= (uint64_t)p[a + q] << (8 * q);
                }
                else {
                    b->span[i][2 * row] = span[i][0];
                    b->span[i][2 * row + 1] = span[i][1];
                }
                b->code[i][row] = code;
            }
            else if (f->kind == K_FLOAT64) {
                double d = double_of(p);
                memcpy(b->num[i] + 8 * row, &d, 8);
            }
            else {
                i128 v;
                if (int_value(f, p, len, &v) || v < INT64_MIN || v > INT64_MAX) {
                    c->status = 1;  /* past int64: Python ints, key by key */
                    goto out;
                }
                int64_t w = (int64_t)v;
                memcpy(b->num[i] + 8 * row, &w, 8);
            }
        }
    }
out:
    if (span != stack)
        PyMem_RawFree(span);
}

/* Fill bytes field i's list from the codes and places the threads left (GIL held, the keys
 * alive): short values repeat (OpenTSDB's UIDs), so one bytes object per recent distinct value.
 * 0, or -1 with an error set. */
static int
bytes_list(Batch *b, Py_ssize_t i)
{
    Shared shared[1024];
    const Field *f = &b->r->f[i];
    int out = 0;
    memset(shared, 0, sizeof(shared));
    for (Py_ssize_t row = 0; row < b->n; row++) {
        uint64_t code = b->code[i][row];
        PyObject *v;
        if (code == NO_CODE) {
            const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(b->keyv[row]);
            v = value_of(f, s, b->span[i][2 * row], b->span[i][2 * row + 1]);
            if (v == NULL && !PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "Reader: a bytes value read once could not be made");
        }
        else {
            size_t at = (size_t)((code * 0x9E3779B97F4A7C15ull) >> 54);  /* 1024 slots */
            if (shared[at].obj != NULL && shared[at].code == code)
                v = Py_NewRef(shared[at].obj);
            else {
                unsigned char bytes[8];
                Py_ssize_t len = (Py_ssize_t)(code >> 56);
                for (Py_ssize_t q = 0; q < len; q++)
                    bytes[q] = (unsigned char)(code >> (8 * q));
                v = PyBytes_FromStringAndSize((const char *)bytes, len);
                if (v != NULL) {
                    Py_XSETREF(shared[at].obj, Py_NewRef(v));
                    shared[at].code = code;
                }
            }
        }
        if (v == NULL) {
            out = -1;
            break;
        }
        PyList_SET_ITEM(b->list[i], row, v);
    }
    for (int q = 0; q < 1024; q++)
        Py_XDECREF(shared[q].obj);
    return out;
}

/* The longest key of the chunk's rows (the room a variable text value can need), each a bytes. */
static void
scan_rows(Chunk *c)
{
    for (Py_ssize_t row = c->a; row < c->z; row++) {
        PyObject *key = c->b->keyv[row];
        if (!PyBytes_CheckExact(key)) {
            c->status = 1;
            return;
        }
        if (PyBytes_GET_SIZE(key) > c->maxlen)
            c->maxlen = PyBytes_GET_SIZE(key);
        c->bytes += PyBytes_GET_SIZE(key);
    }
}

/* Each text field's widest value and the bytes of its values over the chunk's rows (the salt not
 * checked yet): the exact room, when the longest key would give every row too much. */
static void
width_rows(Chunk *c)
{
    Batch *b = c->b;
    Reader *r = b->r;
    Py_ssize_t nf = r->nf, stack[16][2], (*span)[2] = stack;
    if (nf > 16 && (span = PyMem_RawMalloc(nf * sizeof(*span))) == NULL) {
        c->status = 2;
        return;
    }
    for (Py_ssize_t row = c->a; row < c->z; row++) {
        PyObject *key = b->keyv[row];
        const unsigned char *s = (const unsigned char *)PyBytes_AS_STRING(key);
        if (cut(r, NULL, 0, s, PyBytes_GET_SIZE(key), span)) {
            c->status = 1;
            break;
        }
        for (Py_ssize_t i = 0; i < nf; i++) {
            if (b->num[i] != NULL || b->list[i] != NULL)
                continue;  /* not a text (or, for Arrow, bytes) field */
            Py_ssize_t len = span[i][1] - span[i][0];
            strip_pad(&r->f[i], s + span[i][0], &len);
            if (len > c->widest[i])
                c->widest[i] = len;
            c->sum[i] += len;
        }
    }
    if (span != stack)
        PyMem_RawFree(span);
}

typedef struct {
    void (*fn)(Chunk *);
    Chunk *c;
} Job;

static void
job_thread(void *arg)
{
    Job *j = arg;
    j->fn(j->c);
    PyThread_release_lock(j->c->done);
}

/* fn over every chunk, chunk 0 on this thread (which keeps the GIL), the others on threads of
 * their own; returns when all are done. */
static void
run_chunks(Chunk *chunk, int nt, void (*fn)(Chunk *))
{
    Job job[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int t = 1; t < nt; t++) {
        job[t].fn = fn;
        job[t].c = &chunk[t];
        PyThread_acquire_lock(chunk[t].done, WAIT_LOCK);
        started[t] = PyThread_start_new_thread(job_thread, &job[t]) != PYTHREAD_INVALID_THREAD_ID;
        if (!started[t]) {
            PyThread_release_lock(chunk[t].done);
            fn(&chunk[t]);  /* no thread to be had: this one reads those rows too */
        }
    }
    fn(&chunk[0]);
    for (int t = 1; t < nt; t++)
        if (started[t]) {
            PyThread_acquire_lock(chunk[t].done, WAIT_LOCK);  /* until its thread is done */
            PyThread_release_lock(chunk[t].done);
        }
}

/* columns(keys, arrow=False, field_width=True, threads=1, chunk_rows=16384): the fields of a list of bytes keys as
 * columns, or None when some key is left to Python (the batch decoder's own routes then decide).
 * A number column is a bytearray of native int64 / float64; a text column, for ASCII text without
 * NUL, (width, bytearray of native UCS4 values, width code points a row, NUL-filled: the field's
 * width, or the longest value's without field_width), or with arrow (int32 offsets, UTF-8 bytes)
 * as bytearrays; a bytes column a list of bytes, or with arrow (int32 offsets, bytes) as a text's.
 * With threads > 1, the rows are read in chunks of at least chunk_rows rows on up to that many
 * threads (which call no Python API; this one keeps the GIL): the same columns, bit for bit. */
static PyObject *
Reader_columns(Reader *r, PyObject *args)
{
    PyObject *list;
    int arrow = 0, field_width = 1, threads = 1;
    Py_ssize_t chunk_rows = ROWS_PER_THREAD;
    if (!PyArg_ParseTuple(args, "O|ppin:columns", &list, &arrow, &field_width, &threads, &chunk_rows))
        return NULL;
    if (chunk_rows < 1)
        chunk_rows = 1;
    if (!PyList_CheckExact(list) || PyList_GET_SIZE(list) == 0)
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(list), nf = r->nf, maxlen = 0, fixed = r->head + (nf - 1) * r->lsep;
    PyObject *cols = PyTuple_New(nf), *out = NULL;
    Batch b = {.r = r, .n = n, .arrow = arrow};
    Chunk chunk[MAX_THREADS];
    int nt = 1, variable = 0;
    memset(chunk, 0, sizeof(chunk));
    b.num = PyMem_Calloc(nf, sizeof(char *));
    b.text = PyMem_Calloc(nf, sizeof(char *));
    b.offs = PyMem_Calloc(nf, sizeof(int32_t *));
    b.room = PyMem_Calloc(nf, sizeof(Py_ssize_t));
    b.list = PyMem_Calloc(nf, sizeof(PyObject *));
    b.code = PyMem_Calloc(nf, sizeof(uint64_t *));
    b.span = PyMem_Calloc(nf, sizeof(int64_t *));
    if (cols == NULL || !b.num || !b.text || !b.offs || !b.room || !b.list || !b.code || !b.span) {
        PyErr_NoMemory();
        goto done;
    }
    /* Every object the collector tracks (the tuples and lists returned) is made before the list
     * is read, so no collection, and no finalizer that could change the list, runs while its
     * items are taken; its size is checked after. */
    for (Py_ssize_t i = 0; i < nf; i++) {
        const Field *f = &r->f[i];
        PyObject *c = NULL;
        if (f->kind == K_BYTES && !arrow) {
            c = b.list[i] = PyList_New(n);
            b.code[i] = PyMem_Malloc(n * sizeof(uint64_t));
            if (f->desc || f->width < 0 || f->width > 7)  /* values that can need their place */
                b.span[i] = PyMem_Malloc(2 * n * sizeof(int64_t));
            if (c != NULL && (b.code[i] == NULL || ((f->desc || f->width < 0 || f->width > 7) && b.span[i] == NULL))) {
                Py_DECREF(c);
                PyErr_NoMemory();
                goto done;
            }
        }
        else if (f->kind == K_STR || f->kind == K_BYTES)
            c = PyTuple_New(2);  /* (width, UCS4) or (offsets, data): filled at the end */
        else if ((c = PyByteArray_FromStringAndSize(NULL, n * 8)) != NULL)
            b.num[i] = PyByteArray_AS_STRING(c);
        if (c == NULL)
            goto done;
        PyTuple_SET_ITEM(cols, i, c);
        if (f->width > 0)
            fixed += f->width;
    }
    if (PyList_GET_SIZE(list) != n)
        goto none;  /* changed by a collection while the columns were made: the Python routes decide */
    b.keyv = PySequence_Fast_ITEMS(list);
    for (Py_ssize_t i = 0; i < nf; i++)
        variable |= b.num[i] == NULL && b.list[i] == NULL && r->f[i].width < 0;
    if (threads > 1) {  /* chunks of at least chunk_rows: a thread costs ~0.05 ms to start */
        nt = threads < MAX_THREADS ? threads : MAX_THREADS;
        if (n / nt < chunk_rows)
            nt = n / chunk_rows > 1 ? (int)(n / chunk_rows) : 1;
    }
    for (int t = 0; t < nt; t++) {
        Chunk *c = &chunk[t];
        c->b = &b;
        c->a = n * t / nt;
        c->z = n * (t + 1) / nt;
        c->memo = reader_memo(r, t);
        c->widest = PyMem_Calloc(nf, sizeof(Py_ssize_t));
        c->at = PyMem_Calloc(nf, sizeof(Py_ssize_t));
        c->sum = PyMem_Calloc(nf, sizeof(Py_ssize_t));
        c->base = PyMem_Calloc(nf, sizeof(Py_ssize_t));
        if (c->widest == NULL || c->at == NULL || c->sum == NULL || c->base == NULL
            || (t > 0 && (c->done = PyThread_allocate_lock()) == NULL)) {
            PyErr_NoMemory();
            goto done;
        }
    }
    /* Text buffers, sized by what a row can hold: a fixed-width field its width, a variable one
     * what the longest key leaves after the prefix, the separators and the fixed-width fields.
     * When that room, on every row, would come to much more than the keys themselves (one long
     * key among short ones), the threads first measure each field's widest value and its bytes. */
    int exact = 0;
    if (variable) {
        Py_ssize_t bytes = 0;
        run_chunks(chunk, nt, scan_rows);
        for (int t = 0; t < nt; t++) {
            if (chunk[t].status)
                goto none;
            maxlen = chunk[t].maxlen > maxlen ? chunk[t].maxlen : maxlen;
            bytes += chunk[t].bytes;
        }
        Py_ssize_t room = maxlen > fixed ? maxlen - fixed : 0;
        exact = room > (4 * bytes + (1 << 20)) / (arrow ? 1 : 4) / n;
        if (exact) {
            run_chunks(chunk, nt, width_rows);
            for (int t = 0; t < nt; t++)
                if (chunk[t].status)
                    goto none;
        }
    }
    for (Py_ssize_t i = 0; i < nf; i++) {
        const Field *f = &r->f[i];
        if (b.num[i] != NULL || b.list[i] != NULL)
            continue;
        PyObject *c = PyTuple_GET_ITEM(cols, i), *buf, *offs = NULL;
        Py_ssize_t room = f->width >= 0 ? f->width : (maxlen > fixed ? maxlen - fixed : 0), size = 0;
        if (exact) {  /* the widest value; Arrow: each chunk's data right after the chunk before */
            room = 0;
            for (int t = 0; t < nt; t++) {
                room = chunk[t].widest[i] > room ? chunk[t].widest[i] : room;
                chunk[t].base[i] = size;
                size += chunk[t].sum[i];
            }
        }
        if (room > PY_SSIZE_T_MAX / 4 / n) {
            PyErr_NoMemory();
            goto done;
        }
        b.room[i] = room;
        if (!exact)
            for (int t = 0; t < nt; t++)
                chunk[t].base[i] = chunk[t].a * room;  /* Arrow: the chunk's rows' room */
        buf = PyByteArray_FromStringAndSize(NULL, arrow ? (exact ? size : n * room) : n * room * 4);
        if (buf == NULL)
            goto done;
        PyTuple_SET_ITEM(c, 1, buf);  /* bytearrays: not tracked */
        b.text[i] = PyByteArray_AS_STRING(buf);
        if (arrow) {
            if ((offs = PyByteArray_FromStringAndSize(NULL, (n + 1) * 4)) == NULL)
                goto done;
            PyTuple_SET_ITEM(c, 0, offs);
            b.offs[i] = (int32_t *)PyByteArray_AS_STRING(offs);
        }
    }
    run_chunks(chunk, nt, read_rows);
    for (int t = 0; t < nt; t++) {
        if (chunk[t].status == 2) {
            PyErr_NoMemory();
            goto done;
        }
        if (chunk[t].status == 1)
            goto none;
    }
    for (Py_ssize_t i = 0; i < nf; i++) {
        if (b.list[i] != NULL && bytes_list(&b, i) < 0)
            goto done;
    }
    for (Py_ssize_t i = 0; i < nf; i++) {
        const Field *f = &r->f[i];
        if (b.text[i] == NULL)
            continue;  /* not a text (or, for Arrow, bytes) column */
        PyObject *c = PyTuple_GET_ITEM(cols, i), *buf = PyTuple_GET_ITEM(c, 1);
        Py_ssize_t room = b.room[i], widest = 0;
        if (arrow) {
            /* each chunk's data moves down to follow the chunks before it, its offsets with it */
            Py_ssize_t total = 0;
            for (int t = 0; t < nt; t++) {
                Chunk *k = &chunk[t];
                if (total + k->at[i] > INT32_MAX)
                    goto none;  /* a large_string column: the vector route's */
                if (t > 0) {
                    if (k->base[i] != total)
                        memmove(b.text[i] + total, b.text[i] + k->base[i], k->at[i]);
                    for (Py_ssize_t row = k->a; row < k->z; row++)
                        b.offs[i][row] += (int32_t)total;
                }
                total += k->at[i];
            }
            b.offs[i][n] = (int32_t)total;
            if (PyByteArray_Resize(buf, total) < 0)
                goto done;
            continue;
        }
        for (int t = 0; t < nt; t++)
            widest = chunk[t].widest[i] > widest ? chunk[t].widest[i] : widest;
        /* with field_width a fixed-width field keeps its width as numpy's, as the vector route's
         * columns do; without, the longest value's, as numpy makes it from the values */
        Py_ssize_t w = field_width && f->width >= 0 ? f->width : widest;
        if (w < room) {  /* narrower than the room made: the rows close up, front to back */
            Py_UCS4 *u = (Py_UCS4 *)b.text[i];
            for (Py_ssize_t row = 1; row < n; row++)
                memmove(u + row * w, u + row * room, w * 4);
            if (PyByteArray_Resize(buf, n * w * 4) < 0)
                goto done;
        }
        PyObject *width = PyLong_FromSsize_t(w);  /* an int: not tracked either */
        if (width == NULL)
            goto done;
        PyTuple_SET_ITEM(c, 0, width);
    }
    out = cols;
    cols = NULL;
    goto done;
none:
    out = Py_None;
    Py_INCREF(out);
done:
    Py_XDECREF(cols);
    for (int t = 0; t < MAX_THREADS; t++) {
        PyMem_Free(chunk[t].widest);
        PyMem_Free(chunk[t].at);
        PyMem_Free(chunk[t].sum);
        PyMem_Free(chunk[t].base);
        if (chunk[t].done != NULL)
            PyThread_free_lock(chunk[t].done);
    }
    if (b.code != NULL && b.span != NULL)
        for (Py_ssize_t i = 0; i < nf; i++) {
            PyMem_Free(b.code[i]);
            PyMem_Free(b.span[i]);
        }
    PyMem_Free(b.code);
    PyMem_Free(b.span);
    PyMem_Free(b.list);
    PyMem_Free(b.room);
    PyMem_Free(b.offs);
    PyMem_Free(b.text);
    PyMem_Free(b.num);
    return out;
}

/* --------------------------------------------------------------------- fits: keys checked */

/* What fits() says of a key: it reads as this layout (salt re-derived when the reader checks one);
 * it does not (too short or long, a separator missing, a number field's bytes not digits); it
 * reads but its prefix is not the one its fields give; or the Python decoder must decide. */
enum { FIT_OK = 0, FIT_FOREIGN = 1, FIT_WRONG_SALT = 2, FIT_DOUBT = 3 };

/* salt_code() for every salt but the common one (a function of its own, so that the key loop
 * inlines the common one without this one's prefix buffer). */
static int
salt_code_other(Reader *r, struct Md5Memo *memo, const unsigned char *s, const unsigned char *j,
                Py_ssize_t len, Py_ssize_t (*span)[2])
{
    unsigned char pre[64];
    int undecided;
    if (j == NULL)
        undecided = joined_salt(r, memo, s, span, pre);
    else
        undecided = r->check == C_MD5 ? md5_salt(r, memo, j, len, pre) : salt_of(r, j, len, pre);
    if (undecided)
        return FIT_DOUBT;
    return differs(s, pre, r->pwidth) ? FIT_WRONG_SALT : FIT_OK;
}

/* The prefix J gives compared with the key's (salt_differs with the undecidable case apart):
 * FIT_OK, FIT_WRONG_SALT, or FIT_DOUBT when the Python decoder must compute it. */
static inline int
salt_code(Reader *r, struct Md5Memo *memo, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2])
{
    const unsigned char *j = NULL;  /* NULL: J is several fields joined */
    Py_ssize_t len = 0;
    if (r->from_k) {
        j = s + r->head;
        len = n - r->head;
    }
    else if (r->nh == 1) {
        j = s + span[r->hidx[0]][0];
        len = span[r->hidx[0]][1] - span[r->hidx[0]][0];
    }
    if (j != NULL && r->check == C_MOD && r->pwidth <= 9) {
        /* The common salt, read the other way round: the key's digits as a number against the
         * bucket (salt_of writes the bucket's digits and compares bytes: a loop of divisions).
         * The same answers: a bucket wider than the prefix is the decoder's to word, anything
         * but digits or another bucket is a wrong salt. */
        uint32_t h, b, v = 0, lim = 1;
        if (ascii_hash(j, len, &h))
            return FIT_DOUBT;
        b = fastmod(h & 0x7FFFFFFFu, r->modm, (uint32_t)r->buckets);
        for (Py_ssize_t i = 0; i < r->pwidth; i++) {
            unsigned d = (unsigned)s[i] - '0';
            if (d > 9)
                v = UINT32_MAX;  /* not a bucket number; b < 10**9 never equals it */
            else if (v != UINT32_MAX)
                v = v * 10 + d;
            lim *= 10;
        }
        if (b >= lim)
            return FIT_DOUBT;
        return v == b ? FIT_OK : FIT_WRONG_SALT;
    }
    return salt_code_other(r, memo, s, j, len, span);
}

/* 1 when every byte of p[0:n] (inverted when desc) is ASCII: eight bytes a step, the last ones
 * in one word ending at p + n (overlapping what was read) or in 4/2/1-byte pieces. */
static inline int
ascii_only(const unsigned char *p, Py_ssize_t n, int desc)
{
    uint64_t acc = 0, w, x = desc ? ~0ull : 0;
    Py_ssize_t j = 0;
    for (; j + 8 <= n; j += 8) {
        memcpy(&w, p + j, 8);
        acc |= w ^ x;
    }
    if (j < n) {
        if (n >= 8) {
            memcpy(&w, p + n - 8, 8);
            acc |= w ^ x;
        }
        else {
            uint32_t w4;
            uint16_t w2;
            if (j + 4 <= n) {
                memcpy(&w4, p + j, 4);
                acc |= (uint32_t)(w4 ^ (uint32_t)x);
                j += 4;
            }
            if (j + 2 <= n) {
                memcpy(&w2, p + j, 2);
                acc |= (uint16_t)(w2 ^ (uint16_t)x);
                j += 2;
            }
            if (j < n)
                acc |= (unsigned char)(p[j] ^ (unsigned char)x);
        }
    }
    return !(acc & 0x8080808080808080ull);
}

/* The first c in s[a:n] at or after a (its offset), or -1: eight bytes a step (a byte equal to c
 * is a zero byte of the word xor c repeated; the lowest flagged byte is exact), then byte by byte. */
static inline Py_ssize_t
find_byte(const unsigned char *s, Py_ssize_t a, Py_ssize_t n, unsigned char c)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull, cc = ones * c;
    for (; a + 8 <= n; a += 8) {
        uint64_t w;
        memcpy(&w, s + a, 8);
        w ^= cc;
        uint64_t z = (w - ones) & ~w & highs;
        if (z)
            return a + (__builtin_ctzll(z) >> 3);
    }
    for (; a < n; a++)
        if (s[a] == c)
            return a;
    return -1;
}

/* cut() for fits (not Phoenix keys, no salt): the same spans and the same refusals, the
 * separator after a variable value found a word at a time. */
static inline int
fit_cut(Reader *r, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2])
{
    Py_ssize_t nf = r->nf, ls = r->lsep;
    if (n < r->head || (r->sepcheck && differs(s + r->pwidth, r->sep, ls)))
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
            /* the first place the whole separator starts: its first byte, then the rest */
            e = pos;
            for (;;) {
                e = find_byte(s, e, n - ls + 1, (unsigned char)r->sep[0]);
                if (e < 0)
                    return 1;
                if (ls == 1 || !differs(s + e, r->sep, ls))
                    break;
                e++;
            }
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
            if (pos + ls > n || differs(s + pos, r->sep, ls))
                return 1;
            pos += ls;
        }
    }
    return pos != n;
}

/* The code of one key s[0:n]: the layout cut as read_rows cuts it, each value checked as the
 * Python decoder checks it (digits are digits; text that is not ASCII is the decoder's to judge
 * as UTF-8), then the salt. No Python API: runs without the GIL. */
static unsigned char
fit_code(Reader *r, struct Md5Memo *memo, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2])
{
    if (r->phoenix ? cut(r, NULL, 0, s, n, span) : fit_cut(r, s, n, span))
        return r->phoenix ? FIT_DOUBT : FIT_FOREIGN;  /* a Phoenix NULL is cut_phoenix's doubt, not a misfit */
    for (Py_ssize_t i = 0; i < r->nf; i++) {
        const Field *f = &r->f[i];
        const unsigned char *p = s + span[i][0];
        Py_ssize_t len = span[i][1] - span[i][0];
        if (f->kind == K_STR) {
            if (f->has_pad)
                p += strip_pad(f, p, &len);
            if (!ascii_only(p, len, f->desc))
                return FIT_DOUBT;
        }
        else if (f->kind == K_DIGITS) {
            uint64_t u;
            if (len == 0)
                return FIT_FOREIGN;  /* bytes.isdigit() is False: decode refuses it */
            if (len > 19) {
                for (Py_ssize_t j = 0; j < len; j++)
                    if ((unsigned)p[j] - '0' > 9)
                        return FIT_FOREIGN;
                return FIT_DOUBT;  /* past uint64: Python ints decide */
            }
            if (digits_of(p, len, &u))
                return FIT_FOREIGN;  /* a byte that is not a digit */
            i128 x = f->desc ? (i128)f->maxv - (i128)u : (i128)u;
            if (f->domain && (x < f->lo || x > f->hi))
                return FIT_DOUBT;  /* out of the field's domain: the decoder's re-encode decides */
        }
        else if (f->kind != K_BYTES && f->kind != K_FLOAT64) {
            i128 v;
            if (int_value(f, p, len, &v))
                return FIT_DOUBT;
        }
    }
    return r->check ? (unsigned char)salt_code(r, memo, s, n, span) : FIT_OK;
}

/* A key shape most key sets repeat: one length, so every field and separator at one offset.
 * Keys of that length are checked by masks over their 8-byte words (separators where they must
 * be, none inside a value that ends at one, digits, ASCII text, a number's bounds compared as
 * its digits), a few operations a word instead of a walk per field; a key that passes is exactly
 * one fit_code() would cut at these offsets and pass up to its salt, which salt_code() then
 * checks as there. Anything else (another length, a failed mask) goes to fit_code(), which
 * gives its code. */
#define TMPL_WORDS 8
typedef struct {
    Py_ssize_t n, words;            /* the key length; 0: no template (fit_code for every key) */
    Py_ssize_t at[TMPL_WORDS];      /* each word's offset (the last ends at n, overlapping) */
    uint64_t eq[TMPL_WORDS];        /* 0xFF where the byte is the separator */
    uint64_t ne[TMPL_WORDS];        /* 0x80 where it must not be (a value ending at one) */
    uint64_t dg[TMPL_WORDS];        /* 0xF0 where it is a digit */
    uint64_t asc[TMPL_WORDS];       /* 0x80 where text's high bit is checked ... */
    uint64_t hi[TMPL_WORDS];        /* ... and must be set (descending text, inverted) */
    uint64_t sepw;                  /* the separator byte, repeated */
    int mod;                        /* a mod salt read here: its digits in dg, J at jat, jlen */
    Py_ssize_t jat, jlen;
    uint32_t lim;                   /* 10 ** the prefix's width: buckets past it are the decoder's */
    int any_ne;                     /* some value ends at a separator (ne is not all 0) */
    Py_ssize_t nb;                  /* number fields with a domain: their digits against bounds, */
    struct {                        /* as big-endian words (the last ending at the digits' end) */
        Py_ssize_t at[3], words;
        int lo_open, hi_open;       /* 1: that end is the width's own (0...0, 9...9): not compared */
        uint64_t lo[3], hi[3];
    } bound[8];
#if defined(__SSE2__)
    /* The same masks over 16-byte vectors (keys of 16 bytes or more; the last vector ends at n,
     * overlapping): 0xFF where the byte is the separator / must not be it / is a digit, 0x80
     * where text's high bit is checked and must be set. */
    Py_ssize_t vecs, vat[TMPL_WORDS / 2];
    __m128i veq[TMPL_WORDS / 2], vne[TMPL_WORDS / 2], vdg[TMPL_WORDS / 2], vasc[TMPL_WORDS / 2], vhi[TMPL_WORDS / 2];
#endif
} Tmpl;

/* p[0:8] as a big-endian number: words of digits compare as the digits do */
static inline uint64_t
be64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

/* decimal digits of v (0 <= v < 10**len) into out[0:len] */
static void
digits_into(i128 v, Py_ssize_t len, unsigned char *out)
{
    for (Py_ssize_t i = len - 1; i >= 0; i--, v /= 10)
        out[i] = (unsigned char)('0' + (int)(v % 10));
}

/* The template of the key s[0:n] (a row fit_cut() cuts), or t->n = 0 when its layout has what
 * the masks do not cover: a Phoenix key, a separator of several bytes, integer fields, more than
 * 64 bytes, digits past 19, a number whose domain no digits of its width meet, non-ASCII pads. */
static void
tmpl_make(Reader *r, const unsigned char *s, Py_ssize_t n, Py_ssize_t (*span)[2], Tmpl *t)
{
    unsigned char eq[64] = {0}, ne[64] = {0}, dg[64] = {0}, asc[64] = {0}, hi[64] = {0};
    memset(t, 0, sizeof(*t));
    if (r->phoenix || r->lsep > 1 || n < 8 || n > 8 * TMPL_WORDS || fit_cut(r, s, n, span))
        return;
    unsigned char sep = r->lsep ? (unsigned char)r->sep[0] : 0;
    if (r->sepcheck)
        eq[r->pwidth] = 1;
    for (Py_ssize_t i = 0; i < r->nf; i++) {
        const Field *f = &r->f[i];
        Py_ssize_t a = span[i][0], e = span[i][1];
        if (i < r->nf - 1 && r->lsep)
            eq[e] = 1;
        if (f->width < 0 && f->plan < 0)
            for (Py_ssize_t k = a; k < e; k++)
                ne[k] = t->any_ne = 1;
        if (f->kind == K_STR) {
            if (f->has_pad)
                for (int b = 0x80; b < 256; b++)
                    if (f->pad[b])
                        return;  /* a non-ASCII pad: stripping it changes what is checked */
            for (Py_ssize_t k = a; k < e; k++) {
                asc[k] = 1;
                hi[k] = (unsigned char)f->desc;
            }
        }
        else if (f->kind == K_DIGITS) {
            Py_ssize_t len = e - a;
            if (len < 1 || len > 19)
                return;
            for (Py_ssize_t k = a; k < e; k++)
                dg[k] = 1;
            if (f->domain) {
                /* x = u (or maxv - u, descending) within [lo, hi] <=> u within [ulo, uhi] */
                i128 top = 1;
                for (Py_ssize_t k = 0; k < len; k++)
                    top *= 10;
                i128 ulo = f->desc ? (i128)f->maxv - f->hi : (i128)f->lo;
                i128 uhi = f->desc ? (i128)f->maxv - f->lo : (i128)f->hi;
                if (ulo < 0)
                    ulo = 0;
                if (uhi > top - 1)
                    uhi = top - 1;
                if (ulo > uhi || t->nb == 8 || len < 8)
                    return;  /* (fewer than 8 digits: not as words; fit_code checks them) */
                t->bound[t->nb].lo_open = ulo == 0;
                t->bound[t->nb].hi_open = uhi == top - 1;
                unsigned char lo[19], hi[19];
                digits_into(ulo, len, lo);
                digits_into(uhi, len, hi);
                Py_ssize_t words = (len + 7) / 8;
                t->bound[t->nb].words = words;
                for (Py_ssize_t w = 0; w < words; w++) {
                    Py_ssize_t at = w < words - 1 ? 8 * w : len - 8;
                    t->bound[t->nb].at[w] = a + at;
                    t->bound[t->nb].lo[w] = be64(lo + at);
                    t->bound[t->nb].hi[w] = be64(hi + at);
                }
                t->nb++;
            }
        }
        else if (f->kind != K_BYTES && f->kind != K_FLOAT64)
            return;
    }
    /* A mod salt of J in place: the prefix must be digits (a key whose prefix is not goes to
     * fit_code, which says wrong salt), J is at one offset */
    if (r->check == C_MOD && r->pwidth <= 9 && (r->from_k || r->nh == 1)) {
        t->mod = 1;
        t->lim = 1;
        for (Py_ssize_t k = 0; k < r->pwidth; k++)
            t->lim *= 10;
        t->jat = r->from_k ? r->head : span[r->hidx[0]][0];
        t->jlen = r->from_k ? n - r->head : span[r->hidx[0]][1] - span[r->hidx[0]][0];
        for (Py_ssize_t k = 0; k < r->pwidth; k++)
            dg[k] = 1;
    }
    t->words = (n + 7) / 8;
    for (Py_ssize_t w = 0; w < t->words; w++) {
        Py_ssize_t at = w < t->words - 1 ? 8 * w : n - 8;
        t->at[w] = at;
        for (int b = 0; b < 8; b++) {  /* little-endian: byte at + b is bits 8b..8b+7 */
            Py_ssize_t k = at + b;
            t->eq[w] |= (uint64_t)(eq[k] ? 0xFF : 0) << (8 * b);
            t->ne[w] |= (uint64_t)(ne[k] ? 0x80 : 0) << (8 * b);
            t->dg[w] |= (uint64_t)(dg[k] ? 0xF0 : 0) << (8 * b);
            t->asc[w] |= (uint64_t)(asc[k] ? 0x80 : 0) << (8 * b);
            t->hi[w] |= (uint64_t)(hi[k] ? 0x80 : 0) << (8 * b);
        }
    }
    t->sepw = 0x0101010101010101ull * sep;
#if defined(__SSE2__)
    if (n >= 16) {
        t->vecs = (n + 15) / 16;
        for (Py_ssize_t w = 0; w < t->vecs; w++) {
            Py_ssize_t at = w < t->vecs - 1 ? 16 * w : n - 16;
            unsigned char m[5][16];
            for (int b = 0; b < 16; b++) {
                Py_ssize_t k = at + b;
                m[0][b] = eq[k] ? 0xFF : 0;
                m[1][b] = ne[k] ? 0xFF : 0;
                m[2][b] = dg[k] ? 0xFF : 0;
                m[3][b] = asc[k] ? 0x80 : 0;
                m[4][b] = hi[k] ? 0x80 : 0;
            }
            t->vat[w] = at;
            t->veq[w] = _mm_loadu_si128((const __m128i *)m[0]);
            t->vne[w] = _mm_loadu_si128((const __m128i *)m[1]);
            t->vdg[w] = _mm_loadu_si128((const __m128i *)m[2]);
            t->vasc[w] = _mm_loadu_si128((const __m128i *)m[3]);
            t->vhi[w] = _mm_loadu_si128((const __m128i *)m[4]);
        }
    }
#endif
    t->n = n;
}

/* 1 when the key s[0:t->n] passes every mask and bound of the template (see Tmpl). */
static inline int
tmpl_fits(const Tmpl *t, const unsigned char *s)
{
    const uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full, f0 = 0xF0F0F0F0F0F0F0F0ull, three = 0x3030303030303030ull;
    uint64_t bad = 0;
#if defined(__SSE2__)
    if (t->vecs) {
        /* the word masks' checks, 16 bytes a step: a digit is a byte whose distance from '0'
         * (unsigned) is at most 9 */
        const __m128i sepv = _mm_set1_epi8((char)(t->sepw & 0xFF)), zero = _mm_setzero_si128();
        const __m128i c0 = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
        __m128i vbad = zero;
        for (Py_ssize_t w = 0; w < t->vecs; w++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + t->vat[w]));
            __m128i x = _mm_xor_si128(v, sepv);
            vbad = _mm_or_si128(vbad, _mm_and_si128(x, t->veq[w]));
            if (t->any_ne)
                vbad = _mm_or_si128(vbad, _mm_and_si128(_mm_cmpeq_epi8(x, zero), t->vne[w]));
            __m128i d = _mm_sub_epi8(v, c0);
            vbad = _mm_or_si128(vbad, _mm_andnot_si128(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d), t->vdg[w]));
            vbad = _mm_or_si128(vbad, _mm_and_si128(_mm_xor_si128(v, t->vhi[w]), t->vasc[w]));
        }
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(vbad, zero)) != 0xFFFF)
            return 0;
    }
    else
#endif
    for (Py_ssize_t w = 0; w < t->words; w++) {
        uint64_t v, x;
        memcpy(&v, s + t->at[w], 8);
        x = v ^ t->sepw;
        bad |= x & t->eq[w];
        if (t->any_ne)
            bad |= ~(((x & lo7) + lo7) | x) & t->ne[w];  /* 0x80 in a byte equal to the separator */
        /* a digit: high nibble 3, and still 3 with 6 added (a carry out of a byte past 0xF9
         * makes the next byte fail, never pass) */
        bad |= (((v & f0) ^ three) | (((v + 0x0606060606060606ull) & f0) ^ three)) & t->dg[w];
        bad |= ((v ^ t->hi[w]) & t->asc[w]);
    }
    if (bad)
        return 0;
    for (Py_ssize_t i = 0; i < t->nb; i++) {
        /* digits of one width compare as their numbers, and as their big-endian words in order
         * (the overlapping last word compares the digits the others left once they were equal) */
        int below = 0, above = 0, lo_open = t->bound[i].lo_open, hi_open = t->bound[i].hi_open;
        for (Py_ssize_t w = 0; w < t->bound[i].words; w++) {
            uint64_t v = be64(s + t->bound[i].at[w]);
            if (!lo_open && v != t->bound[i].lo[w]) {
                below = v < t->bound[i].lo[w];
                lo_open = 1;
            }
            if (!hi_open && v != t->bound[i].hi[w]) {
                above = v > t->bound[i].hi[w];
                hi_open = 1;
            }
            if (lo_open && hi_open)
                break;  /* both ends settled by a word that differs: the rest cannot change them */
        }
        if (below || above)
            return 0;
    }
    return 1;
}

typedef struct {
    Reader *r;
    const unsigned char *m;  /* the key matrix: row i at m + i * stride, lens[i] bytes */
    Py_ssize_t stride;
    const int64_t *lens;
    unsigned char *out;
    Py_ssize_t a, z;
    struct Md5Memo *memo;    /* this call's own (other threads may be in fits() on this reader) */
    PyThread_type_lock done;
} FitChunk;

static void
fit_rows(void *arg)
{
    FitChunk *c = arg;
    Reader *r = c->r;
    Py_ssize_t stack[16][2] = {{0}}, (*span)[2] = stack;
    if (r->nf > 16 && (span = PyMem_RawMalloc(r->nf * sizeof(*span))) == NULL) {
        memset(c->out + c->a, FIT_DOUBT, c->z - c->a);
        return;
    }
    Tmpl t;
    Py_ssize_t row = c->a;
    /* the template from the chunk's first row (its words are all read within each key: the
     * last one ends at the key's end) */
    t.n = 0;
    if (row < c->z)
        tmpl_make(r, c->m + row * c->stride, (Py_ssize_t)c->lens[row], span, &t);
    if (r->nf <= 16 && !r->phoenix) {
        Py_ssize_t tspan[16][2];
        int missed = 0;
        memcpy(tspan, span, r->nf * sizeof(*span));
        for (; row < c->z; row++) {
            const unsigned char *s = c->m + row * c->stride;
            Py_ssize_t n = (Py_ssize_t)c->lens[row];
            if (t.n && n == t.n && tmpl_fits(&t, s)) {
                if (t.mod) {  /* salt_code's mod route, its digits known to be digits */
                    uint32_t h, b, v;
                    if (ascii_hash(s + t.jat, t.jlen, &h)) {
                        c->out[row] = FIT_DOUBT;
                        continue;
                    }
                    b = fastmod(h & 0x7FFFFFFFu, r->modm, (uint32_t)r->buckets);
                    if (r->pwidth == 2)  /* the usual two digits (00-99) */
                        v = (uint32_t)(s[0] - '0') * 10 + (uint32_t)(s[1] - '0');
                    else {
                        v = 0;
                        for (Py_ssize_t i = 0; i < r->pwidth; i++)
                            v = v * 10 + (uint32_t)(s[i] - '0');
                    }
                    c->out[row] = b >= t.lim ? FIT_DOUBT : v == b ? FIT_OK : FIT_WRONG_SALT;
                    continue;
                }
                c->out[row] = r->check ? (unsigned char)salt_code(r, c->memo, s, n, tspan) : FIT_OK;
                continue;
            }
            c->out[row] = fit_code(r, c->memo, s, n, span);
            /* keys that fit but not the template (the first row was an odd one, or the shape
             * changed): after 32 of them, the template is taken from the one just read */
            if (c->out[row] == FIT_OK && ++missed >= 32) {
                missed = 0;
                tmpl_make(r, s, n, span, &t);
                memcpy(tspan, span, r->nf * sizeof(*span));
            }
        }
    }
    for (; row < c->z; row++)
        c->out[row] = fit_code(r, c->memo, c->m + row * c->stride, (Py_ssize_t)c->lens[row], span);
    if (span != stack)
        PyMem_RawFree(span);
}

static void
fit_thread(void *arg)
{
    fit_rows(arg);
    PyThread_release_lock(((FitChunk *)arg)->done);
}

/* fits(matrix, lengths, threads=1) -> bytes, one code per key (0 fits, 1 does not read as the
 * layout, 2 wrong salt, 3 the Python decoder decides). matrix: a C-contiguous 2-D buffer of
 * bytes (one key per row, zero-padded, as a KeyArray's), lengths: int64, one per row. The GIL is
 * released while the rows are read, on up to threads threads (chunks of at least 16,384 rows). */
static PyObject *
Reader_fits(Reader *r, PyObject *args)
{
    PyObject *mobj, *lobj, *out = NULL;
    int threads = 1;
    Py_buffer mb = {0}, lb = {0};
    if (!PyArg_ParseTuple(args, "OO|i:fits", &mobj, &lobj, &threads))
        return NULL;
    if (PyObject_GetBuffer(mobj, &mb, PyBUF_C_CONTIGUOUS | PyBUF_ND) < 0)
        return NULL;
    if (PyObject_GetBuffer(lobj, &lb, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        goto done;
    if (mb.ndim != 2 || mb.itemsize != 1 || lb.itemsize != 8 || lb.len / 8 != mb.shape[0]
        || (lb.format != NULL && strcmp(lb.format, "l") && strcmp(lb.format, "q") && strcmp(lb.format, "<q")
            && strcmp(lb.format, "<l") && strcmp(lb.format, "=q") && strcmp(lb.format, "=l"))) {
        PyErr_SetString(PyExc_ValueError, "fits: a 2-D byte matrix and one int64 length per row");
        goto done;
    }
    Py_ssize_t n = mb.shape[0], width = mb.shape[1];
    const int64_t *lens = lb.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        if (lens[i] < 0 || lens[i] > width) {
            PyErr_SetString(PyExc_ValueError, "fits: a length is negative or longer than the matrix row");
            goto done;
        }
    out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL || n == 0)
        goto done;
    int nt = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    if (n / nt < ROWS_PER_THREAD)
        nt = n / ROWS_PER_THREAD > 1 ? (int)(n / ROWS_PER_THREAD) : 1;
    FitChunk chunk[MAX_THREADS];
    int started[MAX_THREADS] = {0}, failed = 0;
    memset(chunk, 0, sizeof(chunk));
    for (int t = 0; t < nt; t++) {
        FitChunk *c = &chunk[t];
        c->r = r;
        c->m = mb.buf;
        c->stride = width;
        c->lens = lens;
        c->out = (unsigned char *)PyBytes_AS_STRING(out);
        c->a = n * t / nt;
        c->z = n * (t + 1) / nt;
        if (r->check == C_MD5 && (c->memo = PyMem_RawCalloc(1, sizeof(struct Md5Memo))) == NULL)
            failed = 1;  /* computed without a memo */
        if (t > 0 && (c->done = PyThread_allocate_lock()) == NULL)
            failed = 2;
    }
    if (failed == 2) {
        PyErr_NoMemory();
        Py_CLEAR(out);
        goto free_chunks;
    }
    Py_BEGIN_ALLOW_THREADS
    for (int t = 1; t < nt; t++) {
        PyThread_acquire_lock(chunk[t].done, WAIT_LOCK);
        started[t] = PyThread_start_new_thread(fit_thread, &chunk[t]) != PYTHREAD_INVALID_THREAD_ID;
        if (!started[t]) {
            PyThread_release_lock(chunk[t].done);
            fit_rows(&chunk[t]);
        }
    }
    fit_rows(&chunk[0]);
    for (int t = 1; t < nt; t++)
        if (started[t]) {
            PyThread_acquire_lock(chunk[t].done, WAIT_LOCK);
            PyThread_release_lock(chunk[t].done);
        }
    Py_END_ALLOW_THREADS
free_chunks:
    for (int t = 0; t < nt; t++) {
        PyMem_RawFree(chunk[t].memo);
        if (chunk[t].done != NULL)
            PyThread_free_lock(chunk[t].done);
    }
done:
    if (lb.obj != NULL)
        PyBuffer_Release(&lb);
    PyBuffer_Release(&mb);
    return out;
}

static PyMethodDef Reader_methods[] = {
    {"read", (PyCFunction)Reader_read, METH_O,
     "read(key) -> dict of the key's fields, or None when the Python decoder must decide"},
    {"columns", (PyCFunction)Reader_columns, METH_VARARGS,
     "columns(keys, arrow=False, field_width=True, threads=1, chunk_rows=16384) -> a column per field (see _native.c), or None when some key is left to Python"},
    {"fits", (PyCFunction)Reader_fits, METH_VARARGS,
     "fits(matrix, lengths, threads=1) -> bytes, a code per key: 0 fits, 1 does not read as the layout, 2 wrong salt, 3 the Python decoder decides"},
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
    {"md5", md5_digest, METH_O, "the MD5 digest of bytes (the md5 salt check's own; hashlib elsewhere)"},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "keyshape.core._native", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&ReaderType) < 0 || PyType_Ready(&DecoderType) < 0)
        return NULL;
    md5_init();
    crc_init();
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddType(m, &ReaderType) < 0 || PyModule_AddType(m, &DecoderType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
