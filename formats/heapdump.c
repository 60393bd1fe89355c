/* heapdump.c -- heap dumps of other runtimes: recognising them by content
 * and dispatching the import (HPROF: hprof.c, V8 .heapsnapshot: v8snap.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gcscale/heapdump.h"
#include "heapdump_internal.h"

int _gcs_heapdump_sniff(const char *path, gcs_err *err)
{
    /* gzread reads a plain file as it is and a gzip file decompressed */
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        gcs_err_set(err, "%s: cannot read: %s", path, strerror(errno ? errno : ENOMEM));
        return -1;
    }
    char b[256];
    int n = gzread(gz, b, sizeof b - 1);
    gzclose(gz);
    if (n < 0)
        n = 0; /* unreadable as gzip: not a dump this reader knows */
    b[n] = 0;
    if (n >= 17 && memcmp(b, "JAVA PROFILE 1.0.", 17) == 0)
        return GCS_HEAPDUMP_HPROF;
    int i = 0;
    while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t'))
        i++;
    /* V8 writes {"snapshot":{"meta":... first */
    if (i < n && b[i] == '{' && strstr(b + i, "\"snapshot\"") && strstr(b + i, "\"meta\""))
        return GCS_HEAPDUMP_V8;
    return GCS_HEAPDUMP_UNKNOWN;
}

int _gcs_heapdump_gzipped(const char *path)
{
    FILE *fp = fopen(path, "rb");
    unsigned char b[2] = {0};
    int gz = fp && fread(b, 1, 2, fp) == 2 && b[0] == 0x1f && b[1] == 0x8b;
    if (fp)
        fclose(fp);
    return gz;
}

int gcs_heapdump_detect(const char *path, gcs_err *err) { return _gcs_heapdump_sniff(path, err); }

const char *gcs_heapdump_format_name(int format)
{
    return format == GCS_HEAPDUMP_HPROF ? "hprof" : format == GCS_HEAPDUMP_V8 ? "v8" : "unknown";
}

gcs_snapshot *gcs_heapdump_import(const char *path, int format, gcs_heapdump_report *rep, gcs_err *err)
{
    if (format == GCS_HEAPDUMP_UNKNOWN) {
        format = _gcs_heapdump_sniff(path, err);
        if (format < 0)
            return NULL;
    }
    if (rep)
        memset(rep, 0, sizeof *rep);
    switch (format) {
    case GCS_HEAPDUMP_HPROF:
        return _gcs_hprof_import(path, rep, err);
    case GCS_HEAPDUMP_V8:
        return _gcs_v8_import(path, rep, err);
    default:
        gcs_err_set(err,
                    "%s: not a heap dump this version reads (HPROF \"JAVA PROFILE 1.0.x\" or a V8 "
                    ".heapsnapshot, plain or gzip)",
                    path);
        return NULL;
    }
}
