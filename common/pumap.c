/* pumap.c -- the JSON record of a placement: "placement", "pu_map",
 * "pu_map_logical" (common.h). */
#include <jansson.h>

#include "gcscale/common.h"

void gcs_json_set_pu_map(json_t *obj, const char *placement, const int *os, const int *logical, int n)
{
    json_t *a = json_array(), *b = json_array();
    for (int i = 0; i < n; i++) {
        json_array_append_new(a, json_integer(os[i]));
        json_array_append_new(b, json_integer(logical[i]));
    }
    json_object_set_new(obj, "placement", json_string(placement));
    json_object_set_new(obj, "pu_map", a);
    json_object_set_new(obj, "pu_map_logical", b);
}
