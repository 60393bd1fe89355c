/* dumpstream.c -- a heap dump read through a bounded window (gcs_dumpstream,
 * heapdump_internal.h): a plain file (pread), a gzip file (zlib's inflate,
 * concatenated members as `GC.heap_dump -gz` writes them), or a buffer in
 * memory.  Both importers stream through one.
 *
 * A gzip dump can be read again from the middle: while a first pass reads
 * it, access points may be recorded (as zlib's examples/zran.c does): at the
 * end of a deflate block, the compressed offset and bit, the uncompressed
 * offset and the 32 KiB of output before it, which is all inflate needs to
 * go on from there.  The HPROF importer's second pass starts each of its
 * chunks at one, so that the dump is inflated on every thread at once
 * instead of on one (hprof_pass2.c).  A point costs 32 KiB; one every 2 MiB of
 * output is 1.6% of the dump, and the importer keeps only the points a
 * chunk starts at.
 *
 * A gzip dump read from its start (an importer's first or only pass) is
 * inflated on a thread of its own when there are two or more (the pipe):
 * blocks of output are made ahead while the importer parses, and copied
 * into the window as it asks for them, with the access points recorded for
 * them; so inflating and parsing overlap instead of adding up.  What is read,
 * the points and the errors (their offsets) are the same either way.
 *
 * HotSpot's `GC.heap_dump -gz` cuts the dump into blocks of at most
 * BLOCKSIZE bytes (1 MiB), each compressed as a gzip member of its own, and
 * names the bound in the first member's header (the comment "HPROF
 * BLOCKSIZE=N").  Such a dump is read member by member (ds_members):
 * libdeflate inflates a whole member in one call, about twice as fast as
 * zlib's streaming inflate, and says how many compressed bytes it used, so
 * the members' boundaries come for free; each member's start is an access
 * point that needs no window, and the first pass lists them all, so that a
 * later pass knows each member's extent in the file and in the dump: it
 * reads exactly the members of its region, inflating a member that runs
 * past the region's end only as far as needed (with zlib, which can stop
 * anywhere).  Whatever libdeflate refuses (a damaged or truncated member,
 * one over BLOCKSIZE, a header CRC, which libdeflate skips and zlib
 * checks) is inflated again with zlib, whose message and offset are the
 * ones the zlib path would report; a valid member libdeflate could not
 * take (more compressed bytes than the buffer holds) is then simply
 * zlib's.  Any other gzip file -- one member, as `gzip` writes -- is
 * streamed through zlib. */
#include <errno.h>
#include <fcntl.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapdump_internal.h"

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

/* A new point at the end of r->ix's, zeroed; NULL out of memory. */
static _gcs_gzpoint *new_point(_gcs_gzindex *ix)
{
    if (ix->n == ix->cap) {
        size_t cap = ix->cap ? 2 * ix->cap : 64;
        _gcs_gzpoint *p = realloc(ix->p, cap * sizeof *p);
        if (!p)
            return NULL;
        ix->p = p;
        ix->cap = cap;
    }
    _gcs_gzpoint *pt = &ix->p[ix->n];
    memset(pt, 0, sizeof *pt);
    return pt;
}

/* The point just filled in is the index's. */
static void point_added(_gcs_gzindex *ix)
{
    uint64_t out = ix->p[ix->n].out;
    ix->last_out = out;
    if (ix->n == ix->used + 1) /* used is SIZE_MAX before the first: + 1 is 0 */
        ix->next_cut = out;
    ix->n++;
}

static int add_point(gcs_dumpstream *r)
{
    _gcs_gzindex *ix = r->ix;
    z_stream *z = r->z;
    _gcs_gzpoint *pt = new_point(ix);
    if (!pt)
        return ds_fail(r, "out of memory");
    pt->window = malloc(GZ_WINDOW);
    uInt wlen = GZ_WINDOW;
    if (!pt->window || inflateGetDictionary(z, pt->window, &wlen) != Z_OK) {
        free(pt->window);
        pt->window = NULL;
        return ds_fail(r, "out of memory");
    }
    pt->wlen = wlen;
    pt->in = r->foff - z->avail_in;
    pt->bits = z->data_type & 7;
    pt->out = r->base + r->len;
    point_added(ix);
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

/* ---- gzip members inflated whole (libdeflate) ------------------------------------ */

#define GZ_BLOCK_MAX (4u << 20) /* HotSpot's is 1 MiB; a bigger one is streamed through zlib (buffers of 2-8
                                   * times it per thread) */

static int members_on = 1; /* _gcs_dumpstream_set_members */

void _gcs_dumpstream_set_members(int on) { __atomic_store_n(&members_on, on, __ATOMIC_RELAXED); }

struct ds_members {
    struct libdeflate_decompressor *ld;
    uint32_t block;          /* BLOCKSIZE: no member inflates to more */
    /* compressed input, in[ipos..ilen) being the file's bytes before foff
     * (a first pass: members of unknown extent; room for two of them at
     * the most a member of block bytes takes deflated, so that one lies
     * whole in what is read), or one member at a time (a later pass) */
    uint8_t *in;
    size_t icap, ipos, ilen;
    int ieof;                /* the file ends at foff */
    uint8_t *stage;          /* [block]: a member's output the window had no room for, [spos, slen) left */
    size_t spos, slen;
    uint64_t next_out;       /* the dump offset of the next member's first byte */
    int done;                /* no member follows */
    int zready;              /* r->z initialised (mb_zlib) */
    _gcs_gzindex *list;      /* a first pass: the index the members are listed in (may be NULL) */
    const _gcs_gzindex *from; /* a later pass: the list it reads, from member next */
    size_t next;
};

static int mb_fail(gcs_dumpstream *r, uint64_t off, const char *msg)
{
    gcs_err_set(r->err, "%s: offset %llu: %s", r->name, (unsigned long long)off, msg);
    return -1;
}

/* HotSpot's BLOCKSIZE, from the first member's comment "HPROF
 * BLOCKSIZE=N"; 0 when the file does not name one (or one over
 * GZ_BLOCK_MAX). */
static uint32_t gz_blocksize(gcs_dumpstream *r)
{
    uint8_t h[512];
    ssize_t got = ds_pread(r, h, sizeof h - 1, 0);
    if (got < 10 || h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 || (h[3] & 0xe0) || !(h[3] & 0x10))
        return 0;
    size_t n = (size_t)got, p = 10;
    if (h[3] & 4) /* FEXTRA */
        p = p + 2 <= n ? p + 2 + (h[p] | (size_t)h[p + 1] << 8) : n;
    if (h[3] & 8) /* FNAME */
        while (p < n && h[p++])
            ;
    static const char tag[] = "HPROF BLOCKSIZE=";
    if (p + sizeof tag > n || memcmp(h + p, tag, sizeof tag - 1) != 0)
        return 0;
    uint64_t v = 0;
    for (p += sizeof tag - 1; p < n && h[p] >= '0' && h[p] <= '9' && v <= GZ_BLOCK_MAX; p++)
        v = v * 10 + (uint64_t)(h[p] - '0');
    return p < n && h[p] == 0 && v >= 1 && v <= GZ_BLOCK_MAX ? (uint32_t)v : 0;
}

/* zlib inflates the member at file offset in (dump offset out) into dst:
 * the whole member, which must not make more than want bytes (whole), or
 * only its first want bytes.  The bytes made (whole: *used, the member's
 * compressed bytes), or -1 with err set as the zlib path sets it: zlib's
 * message at the dump offset where it stopped. */
static ssize_t mb_zlib(gcs_dumpstream *r, uint64_t in, uint64_t out, uint8_t *dst, size_t want, int whole,
                       uint64_t *used)
{
    struct ds_members *mb = r->mb;
    z_stream *z = r->z;
    if (!(mb->zready ? inflateReset2(z, 31) == Z_OK : inflateInit2(z, 31) == Z_OK))
        return mb_fail(r, out, "cannot restart inflate");
    mb->zready = 1;
    uint64_t foff = in;
    /* only want bytes: a few KiB of input at a time, not a whole member's */
    size_t step = whole || want > ZIN_BYTES / 2 ? ZIN_BYTES : want + 4096;
    uint8_t over; /* whole: where a byte past want would go */
    z->avail_in = 0;
    z->next_out = dst;
    z->avail_out = (uInt)want;
    for (;;) {
        if (!z->avail_in) {
            ssize_t got = ds_pread(r, r->zin, step, foff);
            if (got < 0)
                return -1;
            if (got == 0)
                return mb_fail(r, out + z->total_out, "unexpected end of file");
            foff += (uint64_t)got;
            z->next_in = r->zin;
            z->avail_in = (uInt)got;
        }
        int rc = inflate(z, Z_NO_FLUSH);
        if (z->total_out > want) {
            char msg[96];
            snprintf(msg, sizeof msg, "gzip member inflates to more than its BLOCKSIZE=%u bytes", mb->block);
            return mb_fail(r, out + want, msg);
        }
        if (rc == Z_STREAM_END) {
            if (used)
                *used = foff - z->avail_in - in;
            return (ssize_t)z->total_out;
        }
        if (z->avail_out == 0) {
            if (!whole)
                return (ssize_t)want;
            z->next_out = &over;
            z->avail_out = 1;
            continue;
        }
        if (rc == Z_BUF_ERROR && !z->avail_in)
            continue; /* more input */
        if (rc != Z_OK)
            return mb_fail(r, out + z->total_out,
                           rc == Z_MEM_ERROR ? "out of memory" : z->msg ? z->msg : "invalid compressed data");
    }
}

/* A first pass: the next member inflated into dst (room for block
 * bytes), *made its bytes: 1; 0 when no member follows (the file ends, or
 * what follows the last member does not start one: ignored, as the zlib
 * path and gzread ignore it); -1 with err set.  The member is listed, and
 * is an access point when it starts span bytes or more after the last. */
static int mb_next_seq(gcs_dumpstream *r, uint8_t *dst, size_t *made)
{
    struct ds_members *mb = r->mb;
    if (mb->ilen - mb->ipos < mb->icap / 2 && !mb->ieof) {
        memmove(mb->in, mb->in + mb->ipos, mb->ilen - mb->ipos);
        mb->ilen -= mb->ipos;
        mb->ipos = 0;
        ssize_t got = ds_pread(r, mb->in + mb->ilen, mb->icap - mb->ilen, r->foff);
        if (got < 0)
            return -1;
        r->foff += (uint64_t)got;
        mb->ilen += (size_t)got;
        mb->ieof = mb->ilen < mb->icap;
    }
    const uint8_t *p = mb->in + mb->ipos;
    size_t avail = mb->ilen - mb->ipos;
    if (avail < 2 || p[0] != 0x1f || p[1] != 0x8b) {
        mb->done = 1;
        return 0;
    }
    uint64_t in = r->foff - avail, out = mb->next_out;
    _gcs_gzindex *ls = mb->list;
    if (ls) {
        if (ls->nm == ls->mcap) {
            size_t cap = ls->mcap ? 2 * ls->mcap : 256;
            _gcs_gzmember *m = realloc(ls->m, cap * sizeof *m);
            if (!m)
                return mb_fail(r, out, "out of memory");
            ls->m = m;
            ls->mcap = cap;
        }
        if (r->ix && out - r->ix->last_out >= r->ix->span) {
            _gcs_gzpoint *pt = new_point(r->ix);
            if (!pt)
                return mb_fail(r, out, "out of memory");
            pt->in = in;
            pt->out = out;
            pt->member = ls->nm;
            point_added(r->ix);
        }
        ls->m[ls->nm++] = (_gcs_gzmember){in, out};
    }
    size_t used = 0;
    *made = 0;
    /* FHCRC: libdeflate skips the header's CRC, which zlib checks */
    enum libdeflate_result rc = avail > 3 && (p[3] & 2)
                                    ? LIBDEFLATE_BAD_DATA
                                    : libdeflate_gzip_decompress_ex(mb->ld, p, avail, dst, mb->block, &used, made);
    if (rc == LIBDEFLATE_SUCCESS) {
        mb->ipos += used;
    } else {
        uint64_t u;
        ssize_t k = mb_zlib(r, in, out, dst, mb->block, 1, &u);
        if (k < 0)
            return -1;
        *made = (size_t)k;
        used = (size_t)u;
        if (u <= avail) {
            mb->ipos += used;
        } else { /* longer than the buffer held: read on after it */
            mb->ipos = mb->ilen = 0;
            r->foff = in + u;
            mb->ieof = 0;
        }
    }
    mb->next_out += *made;
    if (ls) {
        ls->end_in = in + used;
        ls->end_out = mb->next_out;
        if (used > ls->max_in)
            ls->max_in = used;
    }
    return 1;
}

/* A later pass: the next member of the list, of which only what lies
 * before r->limit is needed -- into the window when it has room for that,
 * else into the stage.  1, 0 when the list ends, -1 with err set. */
static int mb_next_listed(gcs_dumpstream *r, size_t room)
{
    struct ds_members *mb = r->mb;
    const _gcs_gzindex *ls = mb->from;
    size_t j = mb->next;
    if (j >= ls->nm) {
        mb->done = 1;
        return 0;
    }
    mb->next++;
    uint64_t in = ls->m[j].in, out = ls->m[j].out;
    uint64_t in_end = j + 1 < ls->nm ? ls->m[j + 1].in : ls->end_in;
    uint64_t out_end = j + 1 < ls->nm ? ls->m[j + 1].out : ls->end_out;
    size_t clen = (size_t)(in_end - in), olen = (size_t)(out_end - out);
    uint64_t need = r->limit - out;
    mb->next_out = out_end;
    mb->spos = mb->slen = 0;
    if (need < olen / 2) {
        /* the region ends early in this member (a chunk's last record
         * begins before it): zlib inflates only that much */
        uint8_t *dst = room >= need ? r->own + r->len : mb->stage;
        if (mb_zlib(r, in, out, dst, (size_t)need, 0, NULL) < 0)
            return -1;
        if (dst == mb->stage)
            mb->slen = (size_t)need;
        else
            r->len += (size_t)need;
        mb->done = 1;
        return 1;
    }
    if (clen > mb->icap) {
        uint8_t *q = realloc(mb->in, clen);
        if (!q)
            return mb_fail(r, out, "out of memory");
        mb->in = q;
        mb->icap = clen;
    }
    ssize_t got = ds_pread(r, mb->in, clen, in);
    if (got < 0)
        return -1;
    uint8_t *dst = room >= olen && need >= olen ? r->own + r->len : mb->stage;
    size_t used = 0, made = 0;
    enum libdeflate_result rc =
        (size_t)got == clen && !(clen > 3 && (mb->in[3] & 2))
            ? libdeflate_gzip_decompress_ex(mb->ld, mb->in, clen, dst, olen, &used, &made)
            : LIBDEFLATE_BAD_DATA;
    if (rc != LIBDEFLATE_SUCCESS || used != clen || made != olen) {
        uint64_t u;
        ssize_t k = mb_zlib(r, in, out, mb->stage, mb->block, 1, &u);
        if (k < 0)
            return -1;
        if ((size_t)k != olen || u != clen)
            return mb_fail(r, out, "a gzip member changed between the passes (the dump changed?)");
        if (dst != mb->stage)
            memcpy(dst, mb->stage, olen);
    }
    if (dst == mb->stage)
        mb->slen = olen;
    else
        r->len += olen;
    return 1;
}

/* The window filled from the members until it holds cap bytes, the region
 * ends or the file does.  whole (the pipe's blocks, which need not be
 * full): stops where the next member might not fit, rather than inflating
 * it aside and copying it. */
static int mb_fill(gcs_dumpstream *r, size_t cap, int whole)
{
    struct ds_members *mb = r->mb;
    while (r->len < cap && !r->eof) {
        uint64_t at = r->base + r->len;
        size_t room = cap - r->len;
        if (r->limit - at < room)
            room = (size_t)(r->limit - at);
        if (room == 0) {
            r->eof = 1;
            break;
        }
        if (mb->spos < mb->slen) {
            size_t k = mb->slen - mb->spos < room ? mb->slen - mb->spos : room;
            memcpy(r->own + r->len, mb->stage + mb->spos, k);
            mb->spos += k;
            r->len += k;
            continue;
        }
        if (mb->done) {
            r->eof = 1;
            break;
        }
        int rc;
        if (mb->from) {
            rc = mb_next_listed(r, room);
        } else {
            if (whole && room < mb->block)
                break;
            uint8_t *dst = room >= mb->block ? r->own + r->len : mb->stage;
            size_t made;
            rc = mb_next_seq(r, dst, &made);
            if (rc > 0 && dst == mb->stage) {
                mb->spos = 0;
                mb->slen = made;
            } else if (rc > 0) {
                r->len += made;
            }
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* r reads members of at most block bytes (buffers allocated): 0, or -1
 * with err set. */
static int mb_start(gcs_dumpstream *r, uint32_t block, size_t icap)
{
    struct ds_members *mb = calloc(1, sizeof *mb);
    if (!mb)
        return mb_fail(r, 0, "out of memory");
    r->mb = mb;
    mb->block = block;
    mb->icap = icap;
    mb->ld = libdeflate_alloc_decompressor();
    mb->in = malloc(icap ? icap : 1);
    mb->stage = malloc(block);
    if (!mb->ld || !mb->in || !mb->stage)
        return mb_fail(r, 0, "out of memory");
    return 0;
}

static void mb_free(gcs_dumpstream *r)
{
    struct ds_members *mb = r->mb;
    if (!mb)
        return;
    if (mb->ld)
        libdeflate_free_decompressor(mb->ld);
    free(mb->in);
    free(mb->stage);
    free(mb);
    r->mb = NULL;
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
    size_t bsize;           /* each block's bytes: PIPE_BLOCK, or room for two members */
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
        int rc = p->mb ? mb_fill(p, P->bsize, 1) : gz_fill(p, P->bsize);
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
    P->bsize = r->mb && 2 * (size_t)r->mb->block > PIPE_BLOCK ? 2 * (size_t)r->mb->block : PIPE_BLOCK;
    for (int k = 0; k < PIPE_BLOCKS; k++)
        if (!(P->b[k].data = malloc(P->bsize)))
            goto undo;
    P->src = *r;
    P->src.err = &P->err;
    P->src.ix = r->ix ? &P->ix : NULL;
    P->ix.span = r->ix ? r->ix->span : 0;
    P->src.own = NULL;
    P->src.tap = NULL; /* the consumer's refills hand on what it read */
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
    r->mb = NULL;
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
    if (r->tap && r->pos)
        r->tap(r->tap_arg, r->own, r->pos, r->base);
    memmove(r->own, r->own + r->pos, r->len - r->pos);
    r->base += r->pos;
    r->len -= r->pos;
    r->pos = 0;
    if (r->pipe)
        return pipe_fill(r, cap);
    if (r->mb)
        return mb_fill(r, cap, 0);
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

/* A gzip dump read from its start: access points recorded into ix (may be
 * NULL), none cut yet, and inflated on a thread of its own where there
 * are two or more. */
static void first_pass_begin(gcs_dumpstream *r, _gcs_gzindex *ix)
{
    r->ix = ix;
    if (ix) {
        ix->last_out = 0;
        ix->used = SIZE_MAX;
        ix->next_cut = UINT64_MAX;
    }
    if (_gcs_heapdump_threads() > 1)
        (void)pipe_start(r);
}

int _gcs_dumpstream_open(gcs_dumpstream *r, const char *path, size_t cap, _gcs_gzindex *ix)
{
    if (ds_start(r, path, cap) < 0)
        return -1;
    uint32_t block = r->kind == DS_GZIP && __atomic_load_n(&members_on, __ATOMIC_RELAXED) ? gz_blocksize(r) : 0;
    if (ix) {
        ix->block = block;
        ix->nm = 0;
        ix->end_in = ix->end_out = ix->max_in = 0;
    }
    if (block) {
        /* a member of block bytes deflates to a little more at worst
         * (stored blocks: 5 bytes per 64 KiB), plus its header */
        size_t bound = (size_t)block + block / 8 + (64u << 10);
        if (mb_start(r, block, 2 * bound) < 0)
            return -1;
        r->mb->list = ix;
        first_pass_begin(r, ix);
        return 0;
    }
    if (r->kind == DS_GZIP) {
        if (inflateInit2(r->z, 31) != Z_OK) {
            free(r->z);
            r->z = NULL;
            gcs_err_set(r->err, "%s: out of memory", path);
            return -1;
        }
        first_pass_begin(r, ix);
    }
    return 0;
}

int _gcs_dumpstream_open_at(gcs_dumpstream *r, const char *path, size_t cap, const _gcs_gzindex *ix,
                            const _gcs_gzpoint *pt, uint64_t start, uint64_t limit)
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
    if (ix && ix->block) {
        /* the members from the point's (the first) on */
        if (mb_start(r, ix->block, (size_t)ix->max_in) < 0)
            return -1;
        r->mb->from = ix;
        r->mb->next = pt ? pt->member : 0;
        r->base = pt ? pt->out : 0;
        ok = 1;
    } else if (!pt) {
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
    mb_free(r);
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
    free(ix->m);
    memset(ix, 0, sizeof *ix);
}
