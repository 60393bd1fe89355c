/* dumpstream.c -- a heap dump read through a bounded window (gcs_dumpstream,
 * hprof_internal.h): a plain file (pread), a gzip file (zlib's inflate,
 * concatenated members as `GC.heap_dump -gz` writes them), or a buffer in
 * memory.  Both importers stream through one.
 *
 * A gzip dump can be read again from the middle: while a first pass reads
 * it, access points may be recorded (as zlib's examples/zran.c does): at the
 * end of a deflate block, the compressed offset and bit, the uncompressed
 * offset and the 32 KiB of output before it, which is all inflate needs to
 * go on from there.  The HPROF importer's second pass starts each of its
 * chunks at one, so that the dump is inflated on every thread at once
 * instead of on one (hprof.c).  A point costs 32 KiB; one every 2 MiB of
 * output is 1.6% of the dump, and the importer keeps only the points a
 * chunk starts at.
 *
 * A gzip dump read from its start (an importer's first or only pass) is
 * inflated on a thread of its own when there are two or more (the pipe):
 * blocks of output are made ahead while the importer parses, and copied
 * into the window as it asks for them, with the access points recorded for
 * them; so inflating and parsing overlap instead of adding up.  What is read,
 * the points and the errors (their offsets) are the same either way. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hprof_internal.h"

#define ZIN_BYTES (256u << 10) /* compressed input read at a time */
#define GZ_WINDOW 32768u

static int ds_fail(gcs_dumpstream *r, const char *msg)
{
    gcs_err_set(r->err, "%s: offset %llu: %s", r->name, (unsigned long long)(r->base + r->len), msg);
    return -1;
}

/* Up to n bytes at file offset off; the count (0 at the end), or -1 with
 * err set. */
static ssize_t ds_pread(gcs_dumpstream *r, uint8_t *to, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(r->fd, to + got, n - got, (off_t)(off + got));
        if (k == 0)
            break;
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return ds_fail(r, strerror(errno));
        }
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* Compressed input for inflate: 1 when there is some, 0 at the end of the
 * file, -1 on a read error. */
static int zin_more(gcs_dumpstream *r)
{
    z_stream *z = r->z;
    if (z->avail_in)
        return 1;
    ssize_t got = ds_pread(r, r->zin, ZIN_BYTES, r->foff);
    if (got < 0)
        return -1;
    r->foff += (uint64_t)got;
    z->next_in = r->zin;
    z->avail_in = (uInt)got;
    return got > 0;
}

/* At a member's end (its trailer consumed): another gzip member follows
 * (inflate reset to read its header: 1), or the file ends -- bytes that do
 * not start a gzip member are ignored, as gzread ignores them (0); -1 on a
 * read error. */
static int next_member(gcs_dumpstream *r)
{
    z_stream *z = r->z;
    uint8_t b[2];
    if (z->avail_in >= 2) {
        b[0] = z->next_in[0];
        b[1] = z->next_in[1];
    } else {
        ssize_t got = ds_pread(r, b, 2, r->foff - z->avail_in);
        if (got < 0)
            return -1;
        if (got < 2)
            return 0;
    }
    if (b[0] != 0x1f || b[1] != 0x8b)
        return 0;
    return inflateReset2(z, 31) == Z_OK ? 1 : ds_fail(r, "cannot restart inflate");
}

/* A raw deflate stream (resumed from an access point) has ended: its gzip
 * trailer (CRC and length, 8 bytes: checked by the first pass) is skipped. */
static int skip_trailer(gcs_dumpstream *r)
{
    z_stream *z = r->z;
    for (unsigned left = 8; left;) {
        int more = zin_more(r);
        if (more <= 0)
            return more < 0 ? -1 : ds_fail(r, "unexpected end of file");
        unsigned k = z->avail_in < left ? z->avail_in : left;
        z->next_in += k;
        z->avail_in -= k;
        left -= k;
    }
    return 0;
}

static int add_point(gcs_dumpstream *r)
{
    _gcs_gzindex *ix = r->ix;
    z_stream *z = r->z;
    if (ix->n == ix->cap) {
        size_t cap = ix->cap ? 2 * ix->cap : 64;
        _gcs_gzpoint *p = realloc(ix->p, cap * sizeof *p);
        if (!p)
            return ds_fail(r, "out of memory");
        ix->p = p;
        ix->cap = cap;
    }
    _gcs_gzpoint *pt = &ix->p[ix->n];
    memset(pt, 0, sizeof *pt);
    pt->window = malloc(GZ_WINDOW);
    uInt wlen = GZ_WINDOW;
    if (!pt->window || inflateGetDictionary(z, pt->window, &wlen) != Z_OK) {
        free(pt->window);
        return ds_fail(r, "out of memory");
    }
    pt->wlen = wlen;
    pt->in = r->foff - z->avail_in;
    pt->bits = z->data_type & 7;
    pt->out = r->base + r->len;
    ix->last_out = pt->out;
    if (ix->n == ix->used + 1) /* used is SIZE_MAX before the first: + 1 is 0 */
        ix->next_cut = pt->out;
    ix->n++;
    return 0;
}

/* Inflates into the window until it holds cap bytes, the region ends or
 * the file does. */
static int gz_fill(gcs_dumpstream *r, size_t cap)
{
    z_stream *z = r->z;
    while (r->len < cap && !r->eof) {
        uint64_t room = cap - r->len;
        if (r->base + r->len + room > r->limit)
            room = r->limit - (r->base + r->len);
        if (room == 0) {
            r->eof = 1;
            break;
        }
        int more = zin_more(r);
        if (more < 0)
            return -1;
        if (more == 0)
            return ds_fail(r, "unexpected end of file");
        z->next_out = r->own + r->len;
        z->avail_out = (uInt)room;
        int rc = inflate(z, r->ix ? Z_BLOCK : Z_NO_FLUSH);
        r->len += (size_t)(room - z->avail_out);
        if (rc == Z_STREAM_END) {
            if (r->raw) {
                if (skip_trailer(r) < 0)
                    return -1;
                r->raw = 0;
            }
            int next = next_member(r);
            if (next < 0)
                return -1;
            if (next == 0)
                r->eof = 1;
            continue;
        }
        if (rc == Z_BUF_ERROR)
            continue; /* no progress without more input: zin_more reads it */
        if (rc != Z_OK)
            return ds_fail(r, rc == Z_MEM_ERROR ? "out of memory" : z->msg ? z->msg : "invalid compressed data");
        /* the end of a deflate block that is not a member's last: a place
         * to resume from */
        if (r->ix && (z->data_type & 0xc0) == 0x80 && r->base + r->len - r->ix->last_out >= r->ix->span
            && add_point(r) < 0)
            return -1;
    }
    return 0;
}

static int plain_fill(gcs_dumpstream *r, size_t cap)
{
    uint64_t room = cap - r->len;
    if (r->base + r->len + room > r->limit)
        room = r->limit - (r->base + r->len);
    ssize_t got = room ? ds_pread(r, r->own + r->len, (size_t)room, r->foff) : 0;
    if (got < 0)
        return -1;
    r->foff += (uint64_t)got;
    r->len += (size_t)got;
    if ((uint64_t)got < room || r->base + r->len == r->limit)
        r->eof = 1;
    return 0;
}

/* ---- the pipe: inflating on a thread of its own ---------------------------------- */

#define PIPE_BLOCKS 3
#define PIPE_BLOCK (512u << 10) /* 1.5 MiB ahead: enough to overlap, little beside a 4 MiB window */

typedef struct pipe_block {
    uint8_t *data;
    size_t len, used;
    int full;               /* made, not yet given back by the consumer */
    int last, failed;       /* the output ends after it; it ends in an error (msg) */
    gcs_err msg;
    _gcs_gzpoint *pts;      /* the access points recorded while it was made */
    size_t npts;
} pipe_block;

struct ds_pipe {
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pipe_block b[PIPE_BLOCKS];
    uint64_t made, taken;   /* blocks; block k is b[k % PIPE_BLOCKS] */
    int stop;
    gcs_dumpstream src;     /* the producer's: the file and inflate */
    _gcs_gzindex ix;        /* the producer's points, handed on per block */
    gcs_err err;
};

static void *pipe_main(void *arg)
{
    struct ds_pipe *P = arg;
    gcs_dumpstream *p = &P->src;
    for (int last = 0; !last;) {
        pthread_mutex_lock(&P->mu);
        pipe_block *b = &P->b[P->made % PIPE_BLOCKS];
        while (b->full && !P->stop)
            pthread_cond_wait(&P->cv, &P->mu);
        int stop = P->stop;
        pthread_mutex_unlock(&P->mu);
        if (stop)
            break;
        p->own = b->data;
        p->base += p->len;
        p->pos = p->len = 0;
        P->ix.n = 0;
        int rc = gz_fill(p, PIPE_BLOCK);
        b->len = p->len;
        b->used = 0;
        b->pts = P->ix.p; /* the points move to the block */
        b->npts = P->ix.n;
        P->ix.p = NULL;
        P->ix.n = P->ix.cap = 0;
        b->failed = rc < 0;
        if (rc < 0)
            b->msg = P->err;
        last = b->last = rc < 0 || p->eof;
        pthread_mutex_lock(&P->mu);
        b->full = 1;
        P->made++;
        pthread_cond_broadcast(&P->cv);
        pthread_mutex_unlock(&P->mu);
    }
    p->own = NULL;
    return NULL;
}

/* The consumer's refill: blocks copied into the window, their points added
 * to its index as add_point would have. */
static int pipe_fill(gcs_dumpstream *r, size_t cap)
{
    struct ds_pipe *P = r->pipe;
    while (r->len < cap && !r->eof) {
        pipe_block *b = &P->b[P->taken % PIPE_BLOCKS];
        pthread_mutex_lock(&P->mu);
        while (!b->full)
            pthread_cond_wait(&P->cv, &P->mu);
        pthread_mutex_unlock(&P->mu);
        for (size_t k = 0; k < b->npts; k++) {
            _gcs_gzindex *ix = r->ix;
            if (ix->n == ix->cap) {
                size_t c2 = ix->cap ? 2 * ix->cap : 64;
                _gcs_gzpoint *q = realloc(ix->p, c2 * sizeof *q);
                if (!q)
                    return ds_fail(r, "out of memory");
                ix->p = q;
                ix->cap = c2;
            }
            ix->p[ix->n] = b->pts[k];
            b->pts[k].window = NULL;
            ix->last_out = ix->p[ix->n].out;
            if (ix->n == ix->used + 1)
                ix->next_cut = ix->p[ix->n].out;
            ix->n++;
        }
        free(b->pts);
        b->pts = NULL;
        b->npts = 0;
        size_t k = b->len - b->used < cap - r->len ? b->len - b->used : cap - r->len;
        memcpy(r->own + r->len, b->data + b->used, k);
        b->used += k;
        r->len += k;
        if (b->used < b->len)
            break;
        if (b->failed) {
            *r->err = b->msg;
            return -1;
        }
        r->eof = b->last;
        pthread_mutex_lock(&P->mu);
        b->full = 0;
        P->taken++;
        pthread_cond_broadcast(&P->cv);
        pthread_mutex_unlock(&P->mu);
    }
    return 0;
}

/* Hands r's file and inflate to a pipe; 0, or 1 when it could not start
 * (r reads on its own then). */
static int pipe_start(gcs_dumpstream *r)
{
    struct ds_pipe *P = calloc(1, sizeof *P);
    if (!P)
        return 1;
    for (int k = 0; k < PIPE_BLOCKS; k++)
        if (!(P->b[k].data = malloc(PIPE_BLOCK)))
            goto undo;
    P->src = *r;
    P->src.err = &P->err;
    P->src.ix = r->ix ? &P->ix : NULL;
    P->ix.span = r->ix ? r->ix->span : 0;
    P->src.own = NULL;
    if (pthread_mutex_init(&P->mu, NULL) != 0)
        goto undo;
    if (pthread_cond_init(&P->cv, NULL) != 0) {
        pthread_mutex_destroy(&P->mu);
        goto undo;
    }
    if (pthread_create(&P->tid, NULL, pipe_main, P) != 0) {
        pthread_cond_destroy(&P->cv);
        pthread_mutex_destroy(&P->mu);
        goto undo;
    }
    r->z = NULL; /* the pipe's now */
    r->zin = NULL;
    r->fd = -1;
    r->pipe = P;
    return 0;
undo:
    for (int k = 0; k < PIPE_BLOCKS; k++)
        free(P->b[k].data);
    free(P);
    return 1;
}

static void pipe_stop(gcs_dumpstream *r)
{
    struct ds_pipe *P = r->pipe;
    pthread_mutex_lock(&P->mu);
    P->stop = 1;
    pthread_cond_broadcast(&P->cv);
    pthread_mutex_unlock(&P->mu);
    pthread_join(P->tid, NULL);
    pthread_cond_destroy(&P->cv);
    pthread_mutex_destroy(&P->mu);
    for (int k = 0; k < PIPE_BLOCKS; k++) {
        for (size_t j = 0; j < P->b[k].npts; j++)
            free(P->b[k].pts[j].window);
        free(P->b[k].pts);
        free(P->b[k].data);
    }
    _gcs_gzindex_free(&P->ix);
    _gcs_dumpstream_close(&P->src);
    free(P);
    r->pipe = NULL;
}

int _gcs_dumpstream_refill(gcs_dumpstream *r, size_t cap)
{
    if (r->kind == DS_MEMORY)
        return 0;
    memmove(r->own, r->own + r->pos, r->len - r->pos);
    r->base += r->pos;
    r->len -= r->pos;
    r->pos = 0;
    if (r->pipe)
        return pipe_fill(r, cap);
    return r->kind == DS_GZIP ? gz_fill(r, cap) : plain_fill(r, cap);
}

static int ds_start(gcs_dumpstream *r, const char *path, size_t cap)
{
    _gcs_dumpstream_close(r);
    r->pos = r->len = 0;
    r->base = r->foff = 0;
    r->eof = 0;
    r->raw = 0;
    r->limit = UINT64_MAX;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        r->fd = -1;
        gcs_err_set(r->err, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    uint8_t magic[2];
    ssize_t got = ds_pread(r, magic, 2, 0);
    if (got < 0)
        return -1;
    r->kind = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b ? DS_GZIP : DS_PLAIN;
    if (!r->own && !(r->own = malloc(cap))) {
        gcs_err_set(r->err, "%s: out of memory", path);
        return -1;
    }
    r->buf = r->own;
    if (r->kind == DS_GZIP) {
        r->z = calloc(1, sizeof *r->z);
        r->zin = malloc(ZIN_BYTES);
        if (!r->z || !r->zin) {
            gcs_err_set(r->err, "%s: out of memory", path);
            return -1;
        }
    }
    return 0;
}

int _gcs_dumpstream_open(gcs_dumpstream *r, const char *path, size_t cap, _gcs_gzindex *ix)
{
    if (ds_start(r, path, cap) < 0)
        return -1;
    if (r->kind == DS_GZIP) {
        if (inflateInit2(r->z, 31) != Z_OK) {
            free(r->z);
            r->z = NULL;
            gcs_err_set(r->err, "%s: out of memory", path);
            return -1;
        }
        r->ix = ix;
        if (ix) {
            ix->last_out = 0;
            ix->used = SIZE_MAX;
            ix->next_cut = UINT64_MAX;
        }
        if (_gcs_heapdump_threads() > 1)
            (void)pipe_start(r);
    }
    return 0;
}

int _gcs_dumpstream_open_at(gcs_dumpstream *r, const char *path, size_t cap, const _gcs_gzpoint *pt, uint64_t start,
                            uint64_t limit)
{
    if (ds_start(r, path, cap) < 0)
        return -1;
    r->limit = limit;
    if (r->kind == DS_PLAIN) {
        r->base = r->foff = start;
        return 0;
    }
    z_stream *z = r->z;
    int ok;
    if (!pt) {
        ok = inflateInit2(z, 31) == Z_OK;
    } else {
        /* zran: a raw deflate stream, primed with the bits of the byte
         * before pt->in that belong to the next block, and the window */
        ok = inflateInit2(z, -15) == Z_OK;
        r->raw = 1;
        r->base = pt->out;
        r->foff = pt->in;
        if (ok && pt->bits) {
            uint8_t b;
            if (ds_pread(r, &b, 1, pt->in - 1) != 1)
                return ds_fail(r, "unexpected end of file");
            ok = inflatePrime(z, pt->bits, b >> (8 - pt->bits)) == Z_OK;
        }
        if (ok && pt->wlen)
            ok = inflateSetDictionary(z, pt->window, pt->wlen) == Z_OK;
    }
    if (!ok) {
        inflateEnd(z);
        free(r->z);
        r->z = NULL;
        return ds_fail(r, "cannot resume inflate");
    }
    /* inflate from the point up to start; those bytes are dropped */
    while (r->base + r->len < start) {
        r->pos = r->len;
        uint64_t want = start - r->base - r->pos;
        if (_gcs_dumpstream_refill(r, want < cap ? (size_t)want : cap) < 0)
            return -1;
        if (r->eof && r->base + r->len < start)
            return ds_fail(r, "unexpected end of file");
    }
    r->pos = (size_t)(start - r->base);
    return 0;
}

void _gcs_dumpstream_close(gcs_dumpstream *r)
{
    if (r->pipe)
        pipe_stop(r);
    if (r->z) {
        inflateEnd(r->z);
        free(r->z);
        r->z = NULL;
    }
    free(r->zin);
    r->zin = NULL;
    if (r->kind != DS_MEMORY && r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    r->kind = DS_MEMORY;
}

void _gcs_dumpstream_free(gcs_dumpstream *r)
{
    _gcs_dumpstream_close(r);
    free(r->own);
    r->own = NULL;
}

void _gcs_gzindex_free(_gcs_gzindex *ix)
{
    for (size_t k = 0; k < ix->n; k++)
        free(ix->p[k].window);
    free(ix->p);
    memset(ix, 0, sizeof *ix);
}
