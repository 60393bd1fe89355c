/* format.c -- tracepoint format files: parsing, field access, finding tracefs.
 *
 * A format file looks like
 *     name: sched_switch
 *     ID: 372
 *     format:
 *         field:unsigned short common_type;  offset:0;  size:2;  signed:0;
 *         ...
 *         field:char prev_comm[16];  offset:8;  size:16;  signed:0;
 *         field:__data_loc char[] parent_comm;  offset:8;  size:4;  signed:0;
 *     print fmt: ...
 * Field offsets and even field types (char[16] became __data_loc in 6.x for
 * sched_process_fork) change between kernels, so nothing is hard-coded. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "schedtrace_internal.h"

/* The field's name: the last identifier of the declaration, ignoring a
 * trailing "[N]" ("char prev_comm[16]", "u32 * uaddr", "__data_loc char[] x"). */
static int decl_name(const char *decl, size_t len, char *name, size_t n)
{
    size_t end = len;
    while (end > 0 && isspace((unsigned char)decl[end - 1]))
        end--;
    if (end > 0 && decl[end - 1] == ']') {
        while (end > 0 && decl[end - 1] != '[')
            end--;
        if (end == 0)
            return -1;
        end--; /* the '[' */
    }
    size_t start = end;
    while (start > 0 && (isalnum((unsigned char)decl[start - 1]) || decl[start - 1] == '_'))
        start--;
    /* A declaration is a type and a name: a lone word has no name. */
    if (start == end || start == 0 || end - start >= n)
        return -1;
    memcpy(name, decl + start, end - start);
    name[end - start] = '\0';
    return 0;
}

static int parse_u32_after(const char *line, const char *key, uint32_t *v)
{
    const char *p = strstr(line, key);
    if (!p)
        return -1;
    p += strlen(key);
    char *end;
    errno = 0;
    unsigned long x = strtoul(p, &end, 10);
    if (end == p || errno || x > UINT32_MAX)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

static int parse_field_line(const char *line, gcs_schedtrace_field *f)
{
    const char *decl = strstr(line, "field:");
    if (!decl)
        return -1;
    decl += strlen("field:");
    const char *semi = strchr(decl, ';');
    if (!semi)
        return -1;
    memset(f, 0, sizeof *f);
    if (decl_name(decl, (size_t)(semi - decl), f->name, sizeof f->name) < 0)
        return -1;
    f->data_loc = strncmp(decl, "__data_loc", 10) == 0 ? 1 : strncmp(decl, "__rel_loc", 9) == 0 ? 2 : 0;
    uint32_t sgn;
    if (parse_u32_after(semi, "offset:", &f->offset) < 0 || parse_u32_after(semi, "size:", &f->size) < 0)
        return -1;
    if (parse_u32_after(semi, "signed:", &sgn) < 0)
        sgn = 0; /* very old kernels had no "signed:" */
    f->is_signed = sgn != 0;
    if (f->size == 0 || (f->data_loc && f->size != 4))
        return -1;
    return 0;
}

int gcs_schedtrace_format_parse(const char *text, gcs_schedtrace_format *fmt, gcs_err *err)
{
    memset(fmt, 0, sizeof *fmt);
    int have_name = 0, have_id = 0, lineno = 0;
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[512];
        lineno++;
        if (len >= sizeof line) {
            /* Only the print fmt line is long, and nothing after it matters. */
            const char *s0 = p;
            while (s0 < p + len && isspace((unsigned char)*s0))
                s0++;
            if (strncmp(s0, "print fmt:", 10) == 0)
                break;
            gcs_err_set(err, "tracepoint format: line %d too long", lineno);
            return -1;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (nl ? 1 : 0);

        const char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (strncmp(s, "name:", 5) == 0) {
            s += 5;
            while (isspace((unsigned char)*s))
                s++;
            size_t n = strcspn(s, " \t\r");
            if (n == 0 || n >= sizeof fmt->name) {
                gcs_err_set(err, "tracepoint format: bad name line %d", lineno);
                return -1;
            }
            memcpy(fmt->name, s, n);
            fmt->name[n] = '\0';
            have_name = 1;
        } else if (strncmp(s, "ID:", 3) == 0) {
            if (parse_u32_after(s, "ID:", &fmt->id) < 0) {
                gcs_err_set(err, "tracepoint format: bad ID line %d", lineno);
                return -1;
            }
            have_id = 1;
        } else if (strncmp(s, "field:", 6) == 0) {
            if (fmt->nfields == GCS_SCHEDTRACE_MAX_FIELDS) {
                gcs_err_set(err, "tracepoint format %s: more than %d fields", fmt->name,
                            GCS_SCHEDTRACE_MAX_FIELDS);
                return -1;
            }
            if (parse_field_line(s, &fmt->fields[fmt->nfields]) < 0) {
                gcs_err_set(err, "tracepoint format %s: cannot read field line %d: %.80s",
                            fmt->name[0] ? fmt->name : "?", lineno, s);
                return -1;
            }
            fmt->nfields++;
        } else if (strncmp(s, "print fmt:", 10) == 0) {
            break; /* nothing after it is needed */
        }
    }
    if (!have_name || !have_id || fmt->nfields == 0) {
        gcs_err_set(err, "tracepoint format: no %s", !have_name ? "name" : !have_id ? "ID" : "fields");
        return -1;
    }
    return 0;
}

const gcs_schedtrace_field *gcs_schedtrace_format_find(const gcs_schedtrace_format *fmt, const char *name)
{
    for (int i = 0; i < fmt->nfields; i++)
        if (strcmp(fmt->fields[i].name, name) == 0)
            return &fmt->fields[i];
    return NULL;
}

static int read_int(const unsigned char *p, uint32_t size, int is_signed, int64_t *v)
{
    switch (size) {
    case 1: {
        uint8_t x = p[0];
        *v = is_signed ? (int64_t)(int8_t)x : (int64_t)x;
        return 0;
    }
    case 2: {
        uint16_t x;
        memcpy(&x, p, 2);
        *v = is_signed ? (int64_t)(int16_t)x : (int64_t)x;
        return 0;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, p, 4);
        *v = is_signed ? (int64_t)(int32_t)x : (int64_t)x;
        return 0;
    }
    case 8: {
        uint64_t x;
        memcpy(&x, p, 8);
        *v = (int64_t)x;
        return 0;
    }
    default:
        return -1;
    }
}

int gcs_schedtrace_field_int(const gcs_schedtrace_field *f, const void *raw, uint32_t raw_size, int64_t *value)
{
    if (!f || f->data_loc || (uint64_t)f->offset + f->size > raw_size)
        return -1;
    return read_int((const unsigned char *)raw + f->offset, f->size, f->is_signed, value);
}

int gcs_schedtrace_field_elem(const gcs_schedtrace_field *f, uint32_t elem_size, uint32_t index,
                              const void *raw, uint32_t raw_size, int64_t *value)
{
    if (!f || f->data_loc || elem_size == 0 || (uint64_t)(index + 1) * elem_size > f->size ||
        (uint64_t)f->offset + f->size > raw_size)
        return -1;
    return read_int((const unsigned char *)raw + f->offset + (uint64_t)index * elem_size, elem_size,
                    f->is_signed, value);
}

int gcs_schedtrace_field_str(const gcs_schedtrace_field *f, const void *raw, uint32_t raw_size, char *buf, size_t n)
{
    if (!f || n == 0 || (uint64_t)f->offset + f->size > raw_size)
        return -1;
    const unsigned char *base = raw;
    uint64_t off = f->offset, len = f->size;
    if (f->data_loc) {
        uint32_t loc;
        memcpy(&loc, base + f->offset, 4);
        off = loc & 0xffff;
        len = loc >> 16;
        if (f->data_loc == 2) /* __rel_loc offsets count from the end of the field itself */
            off += (uint64_t)f->offset + 4;
        if (off + len > raw_size)
            return -1;
    }
    size_t k = 0;
    while (k < len && k + 1 < n && base[off + k] != '\0') {
        buf[k] = (char)base[off + k];
        k++;
    }
    buf[k] = '\0';
    return 0;
}

int gcs_schedtrace_futex_op_waits(int64_t op)
{
    switch (op & ~(int64_t)(128 | 256)) { /* FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */
    case 0:  /* FUTEX_WAIT */
    case 6:  /* FUTEX_LOCK_PI */
    case 9:  /* FUTEX_WAIT_BITSET */
    case 11: /* FUTEX_WAIT_REQUEUE_PI */
    case 13: /* FUTEX_LOCK_PI2 */
        return 1;
    default:
        return 0;
    }
}

/* Why the kernel filters the futex events: most of a managed runtime's
 * futex calls are wakes, which never put the caller to sleep, and each call
 * wrote two records (entry and exit), the larger part of what the tracer
 * read (docs/schedtrace.md, "Overhead").  The state machine needs the
 * entries of the calls that can wait (gcs_schedtrace_futex_op_waits) and
 * the exits of those: every one of them returns 0 or a negative error,
 * where a wake returns how many it woke, so exits with ret <= 0 keep every
 * waiting call's and lose only wakes that woke someone.  The op is matched
 * with every combination of the two flag bits the kernel ignores for the
 * choice (FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME): ftrace filters
 * compare, they do not mask. */
int _gcs_schedtrace_futex_filter(int exit, char *buf, size_t n)
{
    if (exit)
        return snprintf(buf, n, "ret <= 0") < (int)n ? 0 : -1;
    size_t len = 0;
    buf[0] = 0;
    for (int64_t op = 0; op < 16; op++)
        for (int64_t flags = 0; flags <= (128 | 256); flags += 128) {
            if (!gcs_schedtrace_futex_op_waits(op | flags))
                continue;
            int k = snprintf(buf + len, n - len, "%sop == %d", len ? " || " : "", (int)(op | flags));
            if (k < 0 || (size_t)k >= n - len)
                return -1;
            len += (size_t)k;
        }
    return 0;
}

/* ---- tracefs ---------------------------------------------------------------- */

void _gcs_schedtrace_permission_hint(char *buf, size_t n)
{
    long paranoid = 99;
    FILE *fp = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int known = fp && fscanf(fp, "%ld", &paranoid) == 1;
    if (fp)
        fclose(fp);
    if (known)
        snprintf(buf, n,
                 "needs root, or CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8) and read access to tracefs; "
                 "kernel.perf_event_paranoid is %ld",
                 paranoid);
    else
        snprintf(buf, n, "needs root, or CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8) and read access to tracefs");
}

/* 0: DIR/events is there; otherwise the errno of looking at it. */
static int events_errno(const char *dir)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/events", dir);
    if (stat(p, &st) < 0)
        return errno;
    return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

static int denied(int e) { return e == EACCES || e == EPERM; }

int gcs_schedtrace_tracefs(char *path, size_t n, int *mounted, gcs_err *err)
{
    char hint[256];
    *mounted = 0;
    /* A tracefs mounted but out of reach (mode 0700 for root) is a
     * permission problem, not a missing mount. */
    char blocked[256] = "";
    FILE *fp = fopen("/proc/self/mounts", "r");
    if (fp) {
        char dev[256], dir[256], type[64];
        int found = 0;
        while (fscanf(fp, "%255s %255s %63s %*[^\n]", dev, dir, type) == 3) {
            if (strcmp(type, "tracefs") != 0)
                continue;
            int e = events_errno(dir);
            if (e == 0) {
                found = 1;
                break;
            }
            if (denied(e) && !blocked[0])
                snprintf(blocked, sizeof blocked, "%s", dir);
        }
        fclose(fp);
        if (found) {
            snprintf(path, n, "%s", dir);
            return 0;
        }
    }
    static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        int e = events_errno(dirs[i]);
        if (e == 0) {
            snprintf(path, n, "%s", dirs[i]);
            return 0;
        }
        if (denied(e) && !blocked[0])
            snprintf(blocked, sizeof blocked, "%s", dirs[i]);
    }
    if (blocked[0]) {
        _gcs_schedtrace_permission_hint(hint, sizeof hint);
        gcs_err_set(err, "cannot read tracefs at %s: %s (%s)", blocked, strerror(EACCES), hint);
        errno = EACCES;
        return -1;
    }
    /* Not mounted: mount it where the kernel expects it (the directory exists
     * on every kernel with tracefs; it is empty until mounted). */
    if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 && events_errno("/sys/kernel/tracing") == 0) {
        snprintf(path, n, "/sys/kernel/tracing");
        *mounted = 1;
        return 0;
    }
    int e = errno;
    if (denied(e)) {
        _gcs_schedtrace_permission_hint(hint, sizeof hint);
        gcs_err_set(err, "tracefs is not mounted and mounting it at /sys/kernel/tracing failed: %s (%s; "
                         "or mount it first: mount -t tracefs tracefs /sys/kernel/tracing)",
                    strerror(e), hint);
    } else {
        gcs_err_set(err, "tracefs is not mounted and mounting it at /sys/kernel/tracing failed: %s "
                         "(the kernel needs CONFIG_FTRACE and tracepoints)",
                    strerror(e));
    }
    errno = e;
    return -1;
}

int gcs_schedtrace_read_format(const char *tracefs, const char *sys, const char *name,
                               gcs_schedtrace_format *fmt, gcs_err *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/events/%s/%s/format", tracefs, sys, name);
    FILE *fp = fopen(path, "r");
    if (!fp) {
        int e = errno;
        gcs_err_set(err, "cannot read %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    char *text = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 16384;
            char *t = realloc(text, ncap);
            if (!t) {
                free(text);
                fclose(fp);
                gcs_err_set(err, "out of memory reading %s", path);
                errno = ENOMEM;
                return -1;
            }
            text = t;
            cap = ncap;
        }
        size_t got = fread(text + len, 1, 4096, fp);
        len += got;
        if (got < 4096)
            break;
    }
    int rerr = ferror(fp);
    int e = errno;
    fclose(fp);
    if (rerr) {
        free(text);
        gcs_err_set(err, "cannot read %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    text[len] = '\0';
    int rc = gcs_schedtrace_format_parse(text, fmt, err);
    free(text);
    if (rc < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}
