/* version.c -- the version a build reports and records: the release number
 * and the git revision it was built from, so that a profile or a result can
 * be traced to the code that made it (a bare "0.1.0" names every build
 * since the project began). */
#include <stdio.h>

#include "gcscale/common.h"
#include "git-revision.h" /* GCS_GIT_REVISION, written by the Makefile */

const char *gcs_version(void)
{
    static char text[96];
    if (!text[0]) /* idempotent: every caller writes the same bytes */
        snprintf(text, sizeof text, "%s (git %s)", GCSCALE_VERSION, GCS_GIT_REVISION);
    return text;
}

const char *gcs_git_revision(void)
{
    return GCS_GIT_REVISION;
}
